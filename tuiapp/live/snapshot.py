"""What the live figures need, copied on the UI loop so a thread can compute them without races
(tuiapp/live/figures.py): per arm its cells and meters, the run's times. No Textual here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent.classify import NOT_COUNTED

if TYPE_CHECKING:  # agent.metrics loads numpy: imported where the figures thread needs it, not at startup
    from agent.metrics.outcome import AttemptRecord, TaskOutcome

UNFINISHED = NOT_COUNTED  # cells the engine listed as never finished on their arm (agent.classify)


@dataclass(frozen=True)
class CellSnapshot:
    task_id: str
    status: str
    attempt: int
    tokens: int
    attempts: tuple[tuple[int, str, int], ...]  # graded attempts: (attempt, failure class, tokens)
    submitted: str | None = None  # a strategy task's submission (TaskCell.submitted); staged: see `staged`
    staged: bool = False
    submitted_attempt: int | None = None


@dataclass(frozen=True)
class ArmSnapshot:
    name: str
    cap: int
    used: int
    reserved: int
    state: str
    buckets: tuple[tuple[int, int], ...]
    wasted: int
    cells: tuple[CellSnapshot, ...]
    max_attempts: int = 2

    def records(self) -> list[AttemptRecord]:
        """The arm's attempts as agent.metrics.outcome reads them; the attempt in progress is
        one record without a class, holding the tokens its calls have used so far."""
        from agent.metrics.outcome import AttemptRecord

        out = []
        for c in self.cells:
            if c.staged:  # a strategy task: its stages, the submitted one marked, as the report reads them
                out += self._stage_records(c, AttemptRecord)
                continue
            graded = sum(t for _, _, t in c.attempts)
            out += [AttemptRecord(c.task_id, no, cls, cls == "accepted", t) for no, cls, t in c.attempts]
            running = c.tokens - graded
            if running > 0 and c.attempt not in {no for no, _, _ in c.attempts}:
                out.append(AttemptRecord(c.task_id, c.attempt, None, False, running))
        return out

    @staticmethod
    def _stage_records(c: CellSnapshot, record: type[AttemptRecord]) -> list[AttemptRecord]:
        """Each graded stage (submitted True / False once the protocol submitted, None before), and
        the calls of no graded stage (critique, judge, the stage in progress) as one more record:
        so the live retry tax counts an unsubmitted pass as waste, as the report does."""
        done = c.submitted is not None
        out = [
            record(c.task_id, no, cls, cls == "accepted", t, "candidate", (no == c.submitted_attempt) if done else None)
            for no, cls, t in c.attempts
        ]
        rest = c.tokens - sum(t for _, _, t in c.attempts)
        if rest > 0 or not out:
            out.append(record(c.task_id, c.attempt + 1, None, False, max(rest, 0), "other", False if done else None))
        return out

    def outcomes(self) -> list[TaskOutcome]:
        """One outcome per task, in grid order: the report's own function, run live."""
        from agent.metrics.outcome import outcomes_of

        return outcomes_of(
            [c.task_id for c in self.cells],
            self.records(),
            max_attempts=self.max_attempts,
            arm_state=self.state,
            cap_hit=self.state == "censored",
            live=True,
            unfinished=[c.task_id for c in self.cells if c.status in UNFINISHED],
        )


@dataclass(frozen=True)
class Snapshot:
    """What the figures need, copied on the UI loop so a thread can compute without races."""

    task_ids: tuple[str, ...]
    arms: tuple[ArmSnapshot, ...]
    started_at: float | None
    finished_at: float | None
    now: float
    max_attempts: int
    status: str | None
    paused_s: float = 0.0  # of the time since the start, how long the run was paused (the ETA leaves it out)
