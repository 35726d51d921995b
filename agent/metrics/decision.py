"""The sequential decision of a run, from task outcomes: one definition of which
pairs feed it, used by the engine while the run goes, the live view and the report.

Pairs come in the run's task order, as the longest prefix decided on both arms
(sequential.decided_prefix); a task unfinished on either arm for good (censored, aborted)
or never served by its endpoint (harness_error) is left out of both; a task one arm has not decided yet ends the prefix for now.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from agent.metrics.outcome import TaskOutcome
from agent.metrics.sequential import Decision, decided_prefix, decision

# A task's status on one arm: True/False decided (accepted or not), PENDING (not decided yet: it
# ends the prefix for now) or LEFT_OUT (unfinished for good: the pair is left out of the test).
PENDING, LEFT_OUT = None, "unfinished"
Status = bool | str | None


def paired_prefix(first: Sequence[Status], second: Sequence[Status]) -> list[tuple[bool, bool]]:
    """Pairs for the test from per-task statuses of two arms, both in the run's task order."""
    kept = [(a, b) for a, b in zip(first, second, strict=True) if LEFT_OUT not in (a, b)]
    return decided_prefix([cast(bool | None, a) for a, _ in kept], [cast(bool | None, b) for _, b in kept])


def status_of(outcome: TaskOutcome) -> Status:
    if outcome.decided:
        return outcome.accepted
    return LEFT_OUT if outcome.unfinished or outcome.unserved else PENDING


def run_decision(
    first: str,
    first_outcomes: Sequence[TaskOutcome],
    second: str,
    second_outcomes: Sequence[TaskOutcome],
    *,
    alpha: float,
    remaining: int | None = None,
) -> Decision:
    """The decision over two arms' outcomes (both in the run's task order)."""
    pairs = paired_prefix([status_of(o) for o in first_outcomes], [status_of(o) for o in second_outcomes])
    return decision(pairs, alpha, labels=(first, second), remaining=remaining)
