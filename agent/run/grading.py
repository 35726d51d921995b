"""An attempt's grade: the hidden tests' verdict and the mechanics findings become its grades
row and its class, in one transaction (a kill leaves both or neither). A parse error in a file
the hidden run shows its toolchain accepted is a grammar gap (verifiers/grammar_gaps.py): kept
on the row as a note, never counted as mechanics. Used by a live attempt and by resume, which
regrades an attempt from its recorded files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import anyio

from agent import events as ev
from agent.classify import FailureClass, classify
from agent.ledger.attempt_rows import attempt_classed, grade_row
from agent.run.host import RunHost
from agent.run.inflight import off_loop
from agent.run.killpoints import kill_point
from verifiers.grammar_gaps import split_findings
from verifiers.mechanics import check_workspace
from verifiers.tasks import Task


@dataclass(frozen=True)
class AttemptResult:
    attempt_id: str
    end_reason: str
    verdict: str | None
    failure_class: str
    tokens: int

    @property
    def accepted(self) -> bool:
        return self.failure_class == FailureClass.ACCEPTED


async def grade_attempt(
    host: RunHost,
    arm: str,
    attempt_id: str,
    task: Task,
    work: Path,
    attempt_no: int,
    *,
    end_reason: str,
    edited: bool,
    malformed: int,
    changed: list[str],
    tokens: int,
) -> AttemptResult:
    """Hidden verdict + mechanics findings -> grades row, attempt class."""
    with host.work.doing("the grade", task.timeout_s, arm, task.id, attempt_no):
        grade = await off_loop(host.grader.grade, task, work, name="grade")
    findings = await anyio.to_thread.run_sync(check_workspace, task.workspace, work, changed)
    split = await anyio.to_thread.run_sync(split_findings, findings, grade, work, task.hidden)
    failure_class = classify(
        end_reason,
        grade.verdict,
        findings=len(split.mechanics),
        edited=edited,
        malformed=malformed,
        environment=grade.environment,
    )
    accepted = failure_class == FailureClass.ACCEPTED
    await host.ledger.batch(
        [
            grade_row(attempt_id, grade, split.mechanics, split.gaps),
            attempt_classed(attempt_id, failure_class, accepted, verdict=grade.verdict),
        ]
    )
    kill_point("graded")
    host.emit(
        ev.TaskGraded(
            host.run_id,
            arm=arm,
            task_id=task.id,
            attempt=attempt_no,
            verdict=grade.verdict,
            failure_class=failure_class,
            accepted=accepted,
            tokens=tokens,
            grammar_gaps=len(split.gaps),
        )
    )
    return AttemptResult(attempt_id, end_reason, grade.verdict, failure_class, tokens)
