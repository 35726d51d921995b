"""The task gate (`quotabench validate`): a grader is validated before it is trusted (seed 001).

Per task: hidden FAILS on the untouched workspace; hidden PASSES on workspace + reference;
visible PASSES on workspace + reference; the reference has no edit-mechanics findings;
hidden PASSES on workspace + alternate (where present); hidden FAILS on workspace + negative
(where present). Test-first gating after seed 003.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from verifiers.grading import GradeResult, SandboxGrader
from verifiers.sandbox import Sandbox
from verifiers.mechanics import check_workspace
from verifiers.tasks import Suite, Task, TaskProblem, iter_files, load_suite, materialize

CHECKS = ("untouched_fails", "reference_passes", "visible_passes", "reference_parses", "alternate_passes", "negative_fails")


@dataclass
class CheckResult:
    name: str
    ok: bool | None          # None = not applicable (no alternate/ or negative/)
    detail: str = ""


@dataclass
class TaskGate:
    task: Task
    checks: list[CheckResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return all(c.ok is not False for c in self.checks)

    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if c.ok is False]


def _summary(g: GradeResult) -> str:
    counts = f" ({g.passed} passed, {g.failed} failed)" if g.passed is not None else ""
    return f"{g.verdict}{counts}"


def _tail(g: GradeResult, lines: int = 6) -> str:
    return "\n".join(g.output.strip().splitlines()[-lines:])


def _expect(name: str, grade: GradeResult, want: str, what: str, why: str = "") -> CheckResult:
    """A check that `grade` has verdict `want`; the detail says what ran and, on failure, the output tail."""
    if grade.verdict == want:
        return CheckResult(name, True, _summary(grade))
    return CheckResult(name, False, f"{what} {_summary(grade)}{why}\n{_tail(grade)}")


def gate_task(task: Task, grader: SandboxGrader | None = None) -> TaskGate:
    grader = grader or SandboxGrader()
    started = time.monotonic()
    result = TaskGate(task)
    checks = result.checks
    checks.append(_expect("untouched_fails", grader.grade_overlay(task, None), "fail",
                          "hidden tests", " on the untouched workspace — the task is already solved or the runner is broken"))
    reference = grader.grade_overlay(task, task.reference)
    grader.remember_reference(task, reference)
    expected = reference.passed if reference.verdict == "pass" and not reference.failed else None
    checks.append(_expect("reference_passes", reference, "pass", "hidden tests", " on workspace + reference"))
    checks.append(_expect("visible_passes", grader.grade_overlay(task, task.reference, hidden=False), "pass",
                          "visible tests", " on workspace + reference"))
    findings = _reference_findings(task)
    checks.append(CheckResult("reference_parses", not findings, "; ".join(map(str, findings[:3]))))
    if task.alternate:
        # The alternate must earn its pass like a model's answer: as many tests as the reference.
        alternate = grader.grade_overlay(task, task.alternate, expected=expected)
        checks.append(_expect("alternate_passes", alternate, "pass", "hidden tests", " on workspace + alternate"))
    else:
        checks.append(CheckResult("alternate_passes", None, "no alternate/"))
    if task.negative:
        # The known-wrong patch is graded as a model's answer would be (it may try to cheat).
        negative = grader.grade_overlay(task, task.negative, expected=expected, reset=True)
        rejected = negative.verdict == "fail" or (negative.verdict == "error" and negative.integrity is not None)
        checks.append(_expect("negative_fails", negative, negative.verdict if rejected else "fail",
                              "hidden tests", " on workspace + negative — the known-wrong patch is accepted"))
    else:
        checks.append(CheckResult("negative_fails", None, "no negative/"))
    result.seconds = time.monotonic() - started
    return result


def _reference_findings(task: Task):
    """Mechanics findings in the files the reference (and alternate) overlay on the workspace."""
    findings = []
    for overlay in (task.reference, task.alternate):
        if overlay is None:
            continue
        scratch = Path(tempfile.mkdtemp(prefix=f"qb-ref-{task.id}-"))
        try:
            final = materialize(task, scratch / "work", overlay)
            changed = [str(p.relative_to(overlay)) for p in iter_files(overlay)]
            findings += check_workspace(task.workspace, final, changed)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return findings


def gate_suites(paths: list[Path], jobs: int = 1, on_result=None,
                sandbox: Sandbox | None = None) -> tuple[list[TaskGate], list[TaskProblem]]:
    """Gate every task of every suite; broken task folders come back as problems, never raise."""
    suites: list[Suite] = [load_suite(Path(p)) for p in paths]
    tasks = [t for s in suites for t in s.tasks]
    problems = [p for s in suites for p in s.problems]
    grader = SandboxGrader(sandbox)
    results: list[TaskGate] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for gate in pool.map(lambda t: gate_task(t, grader), tasks):
            results.append(gate)
            if on_result:
                on_result(gate)
    return results, problems


def format_row(gate: TaskGate) -> str:
    marks = {True: "ok", False: "FAIL", None: "-"}
    cells = " ".join(f"{marks[c.ok]:<6}" for c in gate.checks)
    return f"{gate.task.id:<32} {gate.task.language:<10} {cells} {gate.seconds:6.1f}s"


def header() -> str:
    short = ("untouched", "ref", "visible", "parses", "alt", "neg")
    return f"{'task':<32} {'language':<10} " + " ".join(f"{s:<6}" for s in short) + "   time"
