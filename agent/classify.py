"""Failure taxonomy of one graded attempt: each attempt gets one class, and failures of the
mechanics (editing, tool calls) are kept apart from failures of the reasoning.

accepted       hidden tests pass
tampering      the grader was gamed: the runner's records contradict its output or exit status,
               the tests that ran are not the reference's, or the code does what graders are
               gamed with (verifiers/findings.py names each finding); never accepted, and never
               relabelled environment or reasoning
harness_error  the endpoint failed after its retries: not the model's fault
censored       the arm's cap ran out during the attempt
aborted        the user aborted or the run was killed (lost)
timeout        the hidden tests hit the grade timeout
environment    the machine lacks something: a runner or command, a module or crate that is not part of
               the workspace, a loader for .ts; or the runner could not start. Never the model's
               own symbols or files (a renamed export, a removed module file): those are reasoning,
               or mechanics when the file does not parse (verifiers/runners.py says which is which)
mechanics      an edited file no longer parses, no edit at all, or >= 3 malformed tool calls. The
               toolchain, not a grammar, judges syntax: a tree-sitter parse error in a file the
               hidden run shows its compiler or interpreter built and tested is a grammar gap
               (verifiers/grammar_gaps.py), a note on the attempt in whatever class it has,
               never mechanics; only a file the toolchain also rejects, or that no test reached,
               is
reasoning      everything else that fails the hidden tests
"""

from __future__ import annotations

from enum import StrEnum

from agent.states import EndReason

MALFORMED_THRESHOLD = 3


class FailureClass(StrEnum):
    """attempts.failure_class and TaskGraded.failure_class, in the order reports list them."""

    ACCEPTED = "accepted"
    REASONING = "reasoning"
    MECHANICS = "mechanics"
    TAMPERING = "tampering"
    TIMEOUT = "timeout"
    ENVIRONMENT = "environment"
    HARNESS_ERROR = "harness_error"
    CENSORED = "censored"
    ABORTED = "aborted"


CLASSES = tuple(FailureClass)
# Classes that end an attempt without using up one of its task's max_attempts: the run cut the
# attempt off (the cap ran out, the run was stopped, aborted or killed), so it says nothing about
# the model. Such an attempt is *lost*: its retry runs under the same attempt number, it stays out
# of the model's figures (QAP, CPSP, retry tax, first-try share, tokens/attempt), and its tokens
# are reported as lost spend, still charged against the arm's cap because they were spent.
# (agent/ledger/schema.py m022 names these classes too: its unique index leaves lost rows out.)
NOT_COUNTED = (FailureClass.CENSORED, FailureClass.ABORTED)
# How a class reads in reports and screens; the others read as their own name.
CLASS_LABELS = {"mechanics": "edit-mechanics"}
CLASS_MEANINGS = {
    "accepted": "the hidden tests pass",
    "reasoning": "the code parses (by its toolchain's word: a grammar gap is a note) but the hidden tests fail",
    "mechanics": (
        "an edited file no longer parses (its toolchain rejects it too, or no test reached it: a parse "
        f"error the toolchain accepted is a grammar gap, a note), nothing was edited, or >= {MALFORMED_THRESHOLD} "
        "malformed tool calls"
    ),
    "tampering": "the grader was gamed: the tests' records, identity or the code itself show it",
    "timeout": "the hidden tests ran past their time limit",
    "environment": "the machine lacks a runner, module or crate the tests need (not the model's own code)",
    "harness_error": "the endpoint kept failing after its retries: not the model's fault",
    "censored": "the arm's token cap ran out",
    "aborted": "the user aborted the run or it was killed",
}


def counts_toward_budget(failure_class: str | None) -> bool:
    """Whether an attempt of this class uses up one of its task's max_attempts (None: not classed yet)."""
    return failure_class is not None and failure_class not in NOT_COUNTED


def is_lost(failure_class: str | None) -> bool:
    """Whether an attempt of this class was cut off by the run (see NOT_COUNTED), not ended by the model."""
    return failure_class in NOT_COUNTED


def classify(
    end_reason: str,
    verdict: str | None,
    *,
    findings: int = 0,
    edited: bool = True,
    malformed: int = 0,
    environment: str | None = None,
) -> FailureClass:
    if end_reason == EndReason.HARNESS_ERROR:
        return FailureClass.HARNESS_ERROR
    if end_reason == EndReason.CENSORED:
        return FailureClass.CENSORED
    if end_reason in (EndReason.ABORTED, EndReason.LOST):
        return FailureClass.ABORTED
    if verdict == "tampering":
        return FailureClass.TAMPERING
    if verdict == "pass":
        return FailureClass.ACCEPTED
    if verdict == "timeout":
        return FailureClass.TIMEOUT
    if verdict == "error" or environment:
        return FailureClass.ENVIRONMENT
    if findings or not edited or malformed >= MALFORMED_THRESHOLD:
        return FailureClass.MECHANICS
    return FailureClass.REASONING
