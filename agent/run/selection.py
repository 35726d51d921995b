"""Choosing a strategy's submission without hidden tests.

`visible` ranks the non-empty candidates by their visible tests (run in the sandbox through
`engine.grader.run_visible`, no model tokens): a candidate that runs ranks above one that does
not parse or compile, then a visible pass above a fail, then more passed tests; ties go to the
earlier candidate. `judge` is parsed in agent/run/strategy_prompts.py and charged in
agent/run/strategies.py. `fallback` is the rule for a selection that yields no choice.
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import anyio

from agent.run.workspace_diff import apply_changes
from agent.states import EndReason
from verifiers.mechanics import check_workspace
from verifiers.scratch import remove, scratch_dir
from verifiers.tasks import Task, materialize

if TYPE_CHECKING:
    from verifiers.grading import Grader


@dataclass(frozen=True)
class Candidate:
    """A stage that left a workspace: a parallel candidate, or revise's initial attempt / revision."""

    attempt_id: str
    attempt_no: int
    stage: str
    number: int  # 1-based position among the task's candidates
    files: dict[str, str | None]
    diff: str
    end_reason: str
    failure_class: str | None
    accepted: bool
    tokens: int

    @property
    def empty(self) -> bool:
        """Nothing to submit: no file changed, or the endpoint failed (harness_error)."""
        return not self.files or self.end_reason == EndReason.HARNESS_ERROR


@dataclass(frozen=True)
class VisibleScore:
    number: int
    empty: bool
    runs: bool  # the changed files parse and the visible tests ran to a verdict
    verdict: str | None
    passed: int | None
    summary: str  # one line, shown to a judge and in the browser

    def key(self) -> tuple[int, int, int, int]:
        return (int(self.runs), int(self.verdict == "pass"), self.passed or 0, -self.number)


def _score_sync(grader: Grader, task: Task, c: Candidate) -> tuple[VisibleScore, str]:
    if c.empty:
        return VisibleScore(c.number, True, False, None, None, "no change"), ""
    scratch = scratch_dir(f"select-{task.id}")
    try:
        work = materialize(task, scratch / "work")
        apply_changes(work, c.files)
        changed = [k for k, v in c.files.items() if v is not None]
        findings = check_workspace(task.workspace, work, changed)
        result = grader.run_visible(task, work)
    finally:
        remove(scratch)
    runs = (
        not findings and result.verdict in ("pass", "fail") and (result.verdict == "pass" or result.passed is not None)
    )
    counts = f"{result.passed} passed" if result.passed is not None else "no test count"
    why = "does not parse" if findings else f"{result.verdict}, {counts}"
    return VisibleScore(c.number, False, runs, result.verdict, result.passed, why), result.output


async def visible_scores(grader: Grader, task: Task, candidates: list[Candidate]) -> list[tuple[VisibleScore, str]]:
    """Each candidate's visible-test score and output, off the event loop, one at a time."""
    out = []
    for c in candidates:
        out.append(await anyio.to_thread.run_sync(functools.partial(_score_sync, grader, task, c)))
    return out


def select_visible(scores: list[VisibleScore]) -> int | None:
    """The number of the best non-empty candidate, or None when every candidate is empty."""
    eligible = [s for s in scores if not s.empty]
    return max(eligible, key=VisibleScore.key).number if eligible else None


def first_non_empty(candidates: list[Candidate]) -> int | None:
    return next((c.number for c in candidates if not c.empty), None)


def scores_json(scores: list[VisibleScore]) -> str:
    return json.dumps([asdict(s) for s in scores], sort_keys=True)
