"""The run engine: OpenAI-compatible endpoints, the agent loop, paired arms with quota caps,
the SQLite ledger and the metrics computed from it. Never imports textual or tuiapp.
"""

__version__ = "0.1.0"


class QuotabenchError(Exception):
    """Base for errors raised by agent/; the message names what failed, the value and the fix.
    `exit_code` is what the CLI exits with: 2 for bad input (config, task, arguments)."""

    exit_code = 2
