"""A task's outcome on one arm and an arm's figures: written once, called by the report, the
live view and the browser, so the three cannot disagree.

A task is *decided* when it was accepted or spent its attempt budget; *unfinished* when it
never will be (the cap ran out, the arm was stopped, the run was aborted or killed); *pending*
while the live view is still waiting for it. Acceptance is accepted / decided with its Wilson
interval. An arm with an unfinished task is not comparable (a censored run is a missing
measurement, not a low score): its QAP, retry tax and first-try share are None.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import cast

# Attempt classes that did not use up an attempt of the budget (agent/run/resume.py counts the same).
from agent.classify import NOT_COUNTED, FailureClass, counts_toward_budget, is_lost
from agent.metrics.stats import wilson
from agent.states import ArmState

# Arm states after which the engine's list of unfinished tasks (arms.unfinished_json) is final.
ENDED = (ArmState.FINISHED, ArmState.CENSORED, ArmState.STOPPED, ArmState.ABORTED, ArmState.DECIDED)
# A run stopped because the comparison was settled: its arms' remaining tasks were
# never run. They are left out of pairing and of the acceptance denominators, but the arm is
# not a missing measurement — it is comparable on the tasks it decided.
NOT_RUN = "not_run"
# A strategy task whose protocol ended without submitting anything (no valid selection, fallback
# off or every candidate empty): decided, and not accepted.
NO_SUBMISSION = "no_submission"
HARNESS_ERROR = FailureClass.HARNESS_ERROR.value


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    """What the outcome needs of one attempt; failure_class None = not classified yet.

    A strategy arm's stages carry their `stage`; `submitted` is True for the stage
    submitted as the arm's answer, False for the others once the protocol submitted, None before
    (and for every attempt of a run without a strategy)."""

    task_id: str
    attempt_no: int
    failure_class: str | None
    accepted: bool
    tokens: int
    stage: str = "attempt"
    submitted: bool | None = None


@dataclass(frozen=True, slots=True)  # slots: 100k outcomes are held through a report
class TaskOutcome:
    """What one arm did with one task: accepted or not, on which attempt, and why not.

    failure_class is "accepted", a failure class of its last counted attempt, "censored" /
    "aborted" when unfinished, "not_run" after the run stopped on a settled decision, or
    "pending" while the live view waits for it.
    """

    task_id: str
    accepted: bool
    accepted_on: int | None
    failure_class: str
    decided: bool
    attempts: int
    tokens: int

    @property
    def unfinished(self) -> bool:
        return self.failure_class in NOT_COUNTED

    @property
    def unserved(self) -> bool:
        """Its last attempt ended harness_error: the endpoint (or the harness) never served it, so
        it is a missing measurement like a censored task, not a failure of the model (seed 002)."""
        return self.failure_class == HARNESS_ERROR and not self.decided

    @property
    def censored(self) -> bool:
        """Left out of every comparison: the task never got its full budget on this arm."""
        return not self.decided


def task_outcome(
    task_id: str,
    attempts: Sequence[AttemptRecord],
    *,
    max_attempts: int | None,
    arm_state: str,
    listed_unfinished: bool = False,
    cap_hit: bool = False,
    live: bool = False,
) -> TaskOutcome:
    """The outcome of one task on one arm from its attempts (any order).

    `arm_state` is the arm's state (running, finished, censored, stopped, aborted); once it has
    ended, a task the engine did not list as unfinished is decided by its last attempt. A task
    with fewer counted attempts than `max_attempts` is pending while `live`, else unfinished
    (a killed run).
    """
    # One pass, no closures or generators: the report calls this once per task (100k at a time).
    rows = sorted(attempts, key=_attempt_no) if len(attempts) > 1 else attempts
    if rows and rows[0].stage != "attempt":
        return _strategy_outcome(
            task_id, rows, arm_state=arm_state, listed_unfinished=listed_unfinished, cap_hit=cap_hit, live=live
        )
    # accepted_on is the model's attempt number: lost attempts before the hit do not count (a
    # ledger from before a lost attempt's retry kept its number numbered the retry after it)
    tokens, hit, hit_on, counted, last_counted = 0, None, None, 0, None
    for r in rows:
        tokens += r.tokens
        if counts_toward_budget(r.failure_class):
            counted += 1
            last_counted = r.failure_class
        if hit is None and r.accepted:
            hit, hit_on = r, counted
    last = rows[-1].failure_class if rows else None
    if hit is not None:
        cls, decided = "accepted", True
    elif arm_state == ArmState.DECIDED and (listed_unfinished or last in NOT_COUNTED):
        cls, decided = NOT_RUN, False
    elif listed_unfinished or last in NOT_COUNTED:
        cls, decided = ("censored" if cap_hit or last == "censored" else "aborted"), False
    elif counted and max_attempts and counted >= max_attempts:
        cls, decided = cast(str, last_counted), True  # counted > 0: set
    elif counted and last is not None and arm_state in ENDED:
        cls, decided = cast(str, last_counted), True
    elif live and arm_state not in ENDED:
        cls, decided = "pending", False
    else:
        cls, decided = ("censored" if cap_hit else "aborted"), False
    if cls == HARNESS_ERROR:
        decided = False  # unserved: out of pairing and the denominators
    return TaskOutcome(task_id, hit is not None, hit_on, cls, decided, len(rows), tokens)


def _attempt_no(record: AttemptRecord) -> int:
    return record.attempt_no


def _strategy_outcome(
    task_id: str, rows: Sequence[AttemptRecord], *, arm_state: str, listed_unfinished: bool, cap_hit: bool, live: bool
) -> TaskOutcome:
    """A strategy task: its outcome is the SUBMITTED stage's, decided once the protocol
    submitted (a protocol that submitted nothing: NO_SUBMISSION); the other stages only add tokens."""
    tokens = sum(r.tokens for r in rows)
    submitted = [r for r in rows if r.submitted]
    if submitted:
        r = submitted[0]
        cls = "accepted" if r.accepted else (r.failure_class or "reasoning")
        return TaskOutcome(task_id, r.accepted, 1 if r.accepted else None, cls, True, len(rows), tokens)
    if any(r.submitted is False for r in rows):
        return TaskOutcome(task_id, False, None, NO_SUBMISSION, True, len(rows), tokens)
    last = rows[-1].failure_class
    if arm_state == ArmState.DECIDED:
        cls = NOT_RUN
    elif live and arm_state not in ENDED and not listed_unfinished:
        cls = "pending"
    else:
        cls = "censored" if cap_hit or last == "censored" else "aborted"
    return TaskOutcome(task_id, False, None, cls, False, len(rows), tokens)


@dataclass(frozen=True)
class ArmFigures:
    """Seed 002's per-arm figures over task outcomes. Every rate carries its n; when the arm is
    not comparable, QAP, retry tax and first-try share are None and `not_comparable` says why."""

    name: str
    n_tasks: int
    decided: int
    accepted: int
    acceptance: float | None
    acceptance_ci: tuple[float, float]
    comparable: bool
    not_comparable: str | None
    unfinished: list[str]
    pending: int
    total_tokens: int
    wasted_tokens: int
    qap: float | None
    retry_tax: float | None
    first_try: int
    first_try_share: float | None
    cap_hit: bool = False
    outcomes: tuple[TaskOutcome, ...] = field(default=(), repr=False, compare=False)
    lost_attempts: int = 0  # attempts the run cut off (agent.classify.is_lost): not the model's
    lost_tokens: int = 0  # their tokens: spent and charged against the cap, in no figure above
    unserved: list[str] = field(default_factory=list)  # tasks the endpoint never served (harness_error)


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _why(arm_state: str, cap_hit: bool, n_unfinished: int, n_tasks: int, n_unserved: int = 0) -> str:
    if not n_unfinished and not cap_hit:
        return f"endpoint failed: {n_unserved} of {n_tasks} tasks never served (harness_error)"
    cause = (
        "cap hit"
        if cap_hit
        else "arm stopped"
        if arm_state == ArmState.STOPPED
        else "run aborted"
        if arm_state == ArmState.ABORTED
        else "run did not finish"
    )
    return f"{cause}: {n_unfinished} of {n_tasks} tasks unfinished"


def arm_figures(
    name: str,
    outcomes: Sequence[TaskOutcome],
    records: Iterable[AttemptRecord],
    *,
    arm_state: str,
    cap_hit: bool = False,
) -> ArmFigures:
    """The arm's figures (seed 002): acceptance = accepted / decided tasks, Wilson 95%;
    QAP = the model's tokens / accepted tasks; retry tax = tokens of attempts that did not
    produce the accepted patch / the model's tokens, both over the decided tasks' attempts; first-try share = accepted on the model's
    first attempt / accepted. The model's tokens are those of every attempt but the lost ones
    (cut off by a kill, an abort, a stop or the cap), which are `lost_tokens`: so a run that was
    killed and resumed has the figures of one that was not."""
    lost = [r for r in records if is_lost(r.failure_class)]
    records = [r for r in records if not is_lost(r.failure_class)]
    decided = [o for o in outcomes if o.decided]
    accepted = sum(o.accepted for o in decided)
    unfinished = [o.task_id for o in outcomes if o.unfinished]
    total = sum(r.tokens for r in records)
    wasted = sum(
        r.tokens for r in records if not (r.accepted and r.submitted is not False)
    )  # an unsubmitted pass is waste too
    # The ratios cover decided tasks only: mid-run, an attempt still in play is neither waste
    # nor the accepted patch's cost yet (once every task is decided, the two sums agree).
    decided_ids = {o.task_id for o in decided}
    settled = [r for r in records if r.task_id in decided_ids]
    settled_total = sum(r.tokens for r in settled)
    settled_wasted = sum(r.tokens for r in settled if not (r.accepted and r.submitted is not False))
    first = sum(o.accepted_on == 1 for o in decided)
    unserved = [o.task_id for o in outcomes if o.unserved]
    # A few tasks the endpoint failed are left out, as censored ones are; when they are most of
    # the arm's tasks, what is left measures the endpoint's outages, not the model.
    comparable = not unfinished and not cap_hit and 2 * len(unserved) <= len(outcomes)
    return ArmFigures(
        name=name,
        n_tasks=len(outcomes),
        decided=len(decided),
        accepted=accepted,
        acceptance=_ratio(accepted, len(decided)),
        acceptance_ci=wilson(accepted, len(decided)),
        comparable=comparable,
        not_comparable=None if comparable else _why(arm_state, cap_hit, len(unfinished), len(outcomes), len(unserved)),
        unfinished=unfinished,
        pending=sum(o.failure_class == "pending" for o in outcomes),
        total_tokens=total,
        wasted_tokens=wasted,
        qap=_ratio(settled_total, accepted) if comparable else None,
        retry_tax=_ratio(settled_wasted, settled_total) if comparable else None,
        first_try=first,
        first_try_share=_ratio(first, accepted) if comparable else None,
        cap_hit=cap_hit,
        outcomes=tuple(outcomes),
        lost_attempts=len(lost),
        lost_tokens=sum(r.tokens for r in lost),
        unserved=unserved,
    )


def outcomes_of(
    task_ids: Sequence[str],
    records: Iterable[AttemptRecord],
    *,
    max_attempts: int | None,
    arm_state: str,
    unfinished: Iterable[str] = (),
    cap_hit: bool = False,
    live: bool = False,
) -> list[TaskOutcome]:
    """One outcome per task id, in the given order, from all of one arm's attempt records."""
    by_task: dict[str, list[AttemptRecord]] = {t: [] for t in task_ids}
    for r in records:
        by_task.setdefault(r.task_id, []).append(r)
    listed = set(unfinished)
    return [
        task_outcome(
            t,
            by_task[t],
            max_attempts=max_attempts,
            arm_state=arm_state,
            listed_unfinished=t in listed,
            cap_hit=cap_hit,
            live=live,
        )
        for t in task_ids
    ]
