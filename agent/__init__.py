"""The run engine: OpenAI-compatible endpoints, the agent loop, paired arms with quota caps,
the SQLite ledger and the metrics computed from it. Never imports textual or tuiapp.

The words every floor shares live at the top, importing nothing of the floors above:
states.py (run, engine and arm states, end reasons), classify.py (failure classes),
strategy_spec.py (strategies and stages), tool_names.py (the tools), events.py (what the
engine publishes), config.py (the run's configuration, arm kinds included).
"""

__version__ = "0.1.0"


class QuotabenchError(Exception):
    """Base for errors raised by agent/; the message names what failed, the value and the fix.
    `exit_code` is what the CLI exits with: 2 for bad input (config, task, arguments)."""

    exit_code = 2
