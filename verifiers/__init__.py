"""Verification: the task format, the subprocess sandbox, hidden-test grading,
tree-sitter edit-mechanics checks and the task gate (`quotabench validate`).

Nothing here imports the agent, the TUI or textual.
"""


class VerifierError(Exception):
    """Base for every error raised by verifiers/; the message says what and how to fix it."""
