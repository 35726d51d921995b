"""Grade an attempt: copy its final workspace, overlay hidden/, run the hidden command.

The same machinery runs the visible tests for the agent's run_tests tool, on a copy, so
test caches never land in the attempt's workspace.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Protocol

from verifiers.runners import environment_fault, parse_counts
from verifiers.sandbox import LocalSandbox, RunResult, Sandbox, limits_for
from verifiers.tasks import Task, copy_with_overlays

VERDICTS = ("pass", "fail", "timeout", "error")
_CANNOT_START = {126, 127}


@dataclass(frozen=True)
class GradeResult:
    verdict: str
    exit_status: int | None
    duration_ms: int
    passed: int | None
    failed: int | None
    output: str
    isolation: dict
    failing_tests: tuple[str, ...] = field(default_factory=tuple)
    environment: str | None = None
    timeout_s: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


class Grader(Protocol):
    def grade(self, task: Task, workspace: Path) -> GradeResult: ...
    def run_visible(self, task: Task, workspace: Path, timeout_s: float | None = None) -> GradeResult: ...


def verdict_of(result: RunResult) -> str:
    if result.timed_out:
        return "timeout"
    if result.start_error is not None or result.exit_status in _CANNOT_START:
        return "error"
    return "pass" if result.exit_status == 0 else "fail"


def _to_grade(result: RunResult, timeout_s: float) -> GradeResult:
    counts = parse_counts(result.output)
    verdict = verdict_of(result)
    return GradeResult(
        verdict=verdict, exit_status=result.exit_status, duration_ms=result.duration_ms,
        passed=counts.passed, failed=counts.failed,
        output=result.output if result.start_error is None else result.start_error,
        isolation=result.isolation, failing_tests=counts.failing,
        environment=environment_fault(result.output) if verdict in ("fail", "error") else None,
        timeout_s=timeout_s,
    )


class SandboxGrader:
    """Grades with hidden tests in a `Sandbox` (a LocalSandbox unless one is given)."""

    def __init__(self, sandbox: Sandbox | None = None):
        self.sandbox = sandbox or LocalSandbox()

    def _run(self, task: Task, source: Path, command: str, *overlays: Path | None,
             timeout_s: float | None = None) -> GradeResult:
        scratch = Path(tempfile.mkdtemp(prefix=f"qb-grade-{task.id}-"))
        try:
            work = copy_with_overlays(source, scratch / "work", *overlays)
            timeout = task.timeout_s if timeout_s is None else min(task.timeout_s, timeout_s)
            limits = limits_for(task.language, timeout, task.memory_mb)
            return _to_grade(self.sandbox.run(command, work, limits), timeout)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def grade(self, task: Task, workspace: Path) -> GradeResult:
        """Hidden verdict for whatever is on disk in `workspace`."""
        return self._run(task, workspace, task.hidden_cmd, task.hidden)

    def run_visible(self, task: Task, workspace: Path, timeout_s: float | None = None) -> GradeResult:
        """Visible tests on a copy of `workspace`; `timeout_s` shortens the task's limit
        (the agent loop passes what is left of the attempt's time)."""
        return self._run(task, workspace, task.visible_cmd, timeout_s=timeout_s)

    def grade_overlay(self, task: Task, overlay: Path | None, *, hidden: bool = True) -> GradeResult:
        """Grade workspace + overlay (reference, alternate, negative, or None for untouched)."""
        if hidden:
            return self._run(task, task.workspace, task.hidden_cmd, overlay, task.hidden)
        return self._run(task, task.workspace, task.visible_cmd, overlay)
