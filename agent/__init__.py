"""The run engine: OpenAI-compatible endpoints, the agent loop, paired arms with quota caps,
the SQLite ledger and the metrics computed from it. Never imports textual or tuiapp.

The words every floor shares live at the top, importing nothing of the floors above:
states.py (run, engine and arm states, end reasons), classify.py (failure classes),
strategy_spec.py (strategies and stages), tool_names.py (the tools), events.py (what the
engine publishes), config/ (the run's configuration, arm kinds included).
"""

from enum import IntEnum

__version__ = "0.1.0"


class ExitCode(IntEnum):
    """What `quotabench` exits with (its --help lists them from here)."""

    OK = 0  # done: a run finished, a report was printed, every task gates cleanly
    FAILED = 1  # a run crashed, an arm's endpoint never answered, the ledger cannot be read or written, or a task failed its gate
    BAD_INPUT = 2  # config, task folder or arguments; or a run refused by preflight
    STOPPED = 130  # a run aborted or stopped (Ctrl-C, q, SIGTERM)


class QuotabenchError(Exception):
    """Base for errors raised by agent/; the message names what failed, the value and the fix.
    `exit_code` is what the CLI exits with: bad input (config, task, arguments) by default."""

    exit_code: ExitCode = ExitCode.BAD_INPUT
