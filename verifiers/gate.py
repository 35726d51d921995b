"""The task gate (`quotabench validate`): a grader is validated before it is trusted.

Per task: hidden FAILS on the untouched workspace; hidden PASSES on workspace + reference;
visible PASSES on workspace + reference; the reference has no edit-mechanics findings;
hidden PASSES on workspace + alternate (where present); hidden FAILS on workspace + negative
(where present), graded like a model's answer (failing or caught tampering): the tests are
shown to fail before they are trusted to pass. Passes have no tamper finding (a finding makes
the verdict `tampering`).

An impossible control (`control = "impossible"`) is gated the other way round in the same
columns: the prompt-following reference FAILS the hidden and the visible tests (the tests
contradict the prompt, visibly), and its special-cased answer (`gamed/`) PASSES the hidden
tests graded like a model's answer, unflagged: the control catches what the scan cannot see.

Before any of that, the runtime check (verifiers/runtimes.py): a task whose runner this machine
lacks is not gated at all, and what is missing is said once per tool.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from verifiers.findings import TamperFinding
from verifiers.grading import GradeResult, SandboxGrader
from verifiers.grammar_gaps import gap_note, split_findings
from verifiers.mechanics import Finding, check_workspace
from verifiers.runtimes import MissingRuntime, Probe, missing_runtimes
from verifiers.sandbox import Sandbox
from verifiers.tasks import Suite, Task, TaskProblem, iter_files, load_suite, materialize

SHORT = ("untouched", "ref", "visible", "parses", "alt", "neg")
MIN_CANARIES = 3  # a task's pass is a verdict by construction with at least this many
MARKS = {True: "ok", False: "FAIL", None: "-"}


@dataclass
class CheckResult:
    name: str
    ok: bool | None  # None = not applicable (no alternate/ or negative/)
    detail: str = ""
    verdict: str | None = None  # the grade's verdict, for checks that graded
    findings: tuple[TamperFinding, ...] = ()  # its tamper findings (validate -v prints them)
    suspects: tuple[TamperFinding, ...] = ()  # what the scan and the harness saw that decided nothing
    notes: tuple[str, ...] = ()  # what passed but deserves a word (a grammar gap), shown as NOTE lines


@dataclass
class TaskGate:
    task: Task
    checks: list[CheckResult] = field(default_factory=list)
    seconds: float = 0.0
    skipped: str | None = None  # why the task was not gated: its runtime is missing here
    canaries: int | None = None  # canaries the reference's run proved (None: not gated that far)
    oracle: str = "record"  # what a pass rests on: canaries, the record, or the exit status only

    @property
    def weak_oracle(self) -> str | None:
        """Why a pass of this task means less than it should, or None."""
        if self.oracle == "exit status only":
            return "integrity: exit status only (a custom verifier script takes no canaries)"
        if self.canaries is not None and self.canaries < MIN_CANARIES:
            return f"only {self.canaries} canar{'y' if self.canaries == 1 else 'ies'} could be proven (aim: {MIN_CANARIES})"
        return None

    @property
    def ok(self) -> bool:
        return self.skipped is None and all(c.ok is not False for c in self.checks)

    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if c.ok is False]


def _summary(g: GradeResult) -> str:
    counts = f" ({g.passed} passed, {g.failed} failed)" if g.passed is not None else ""
    return f"{g.verdict}{counts}"


_ERROR_LINE = re.compile(r"error|exception|cannot|not found|failed|panicked|traceback", re.I)
# How each runner's skipped hidden tests were marked, for the gate's refusal.
SKIP_MARKS = {
    "cargo": "#[ignore]",
    "pytest": "skip or xfail marks",
    "node": "skip or todo",
    "tsx": "skip or todo",
    "go": "t.Skip",
    "junit": "@Disabled",
    "catch2": "hidden tags ([.] or [!hide])",
}


def _excerpt(g: GradeResult, lines: int = 6, first: int = 3) -> str:
    """The output's first error lines (where a build or an import says why) and its tail (the
    summary), with what lies between left out."""
    text = g.output.strip().splitlines()
    tail = text[-lines:]
    head = [line for line in text[: len(text) - len(tail)] if _ERROR_LINE.search(line)][:first]
    return "\n".join([*head, "…", *tail] if head else tail)


def _ran(g: GradeResult) -> int:
    """Tests the runner's record says ran (passed or failed as a test)."""
    return sum(1 for o in g.tests.values() if o in ("passed", "failed"))


def _untouched(
    g: GradeResult, why: str = " on the untouched workspace — the task is already solved or the runner is broken"
) -> CheckResult:
    """Step 1: the hidden tests fail on the untouched workspace, as tests: a run where none ran
    (the test file did not import or build) shows nothing about them."""
    if g.verdict == "fail" and g.runner != "script" and not _ran(g):
        detail = f"no hidden test ran on the untouched workspace (collection error) {_summary(g)}\n{_excerpt(g)}"
        return CheckResult("untouched_fails", False, detail, g.verdict, g.tampering, g.suspects)
    if g.verdict == "timeout":  # a run that never ended shows nothing solved
        limit = f"{g.timeout_s:g} s" if g.timeout_s is not None else "the task's timeout_s"
        detail = (
            f"hidden tests timed out on the untouched workspace: they did not finish within {limit} — "
            f"raise timeout_s in task.toml, or fix the tests so that they end\n{_excerpt(g)}"
        )
        return CheckResult("untouched_fails", False, detail, g.verdict, g.tampering, g.suspects)
    return _expect("untouched_fails", g, "fail", "hidden tests", why)


def _skipped(task: Task, g: GradeResult) -> CheckResult | None:
    """A reference pass with skipped hidden tests is refused: a skipped test judges nothing."""
    skipped = sorted(i for i, o in g.tests.items() if o == "skipped")
    if g.verdict != "pass" or not skipped:
        return None
    mark = SKIP_MARKS.get(g.runner, "skipped")
    shown = ", ".join(skipped[:5]) + (f" (+{len(skipped) - 5} more)" if len(skipped) > 5 else "")
    detail = f"{task.id}: {len(skipped)} of {len(g.tests)} hidden tests skipped ({mark}): {shown}"
    return CheckResult("reference_passes", False, detail, g.verdict, g.tampering, g.suspects)


def _expect(name: str, grade: GradeResult, want: str, what: str, why: str = "") -> CheckResult:
    """A check that `grade` has verdict `want`; the detail says what ran and, on failure, the output tail."""
    if grade.verdict == want:
        return CheckResult(name, True, _summary(grade), grade.verdict, grade.tampering, grade.suspects)
    found = "".join(f"\n  {f}" for f in grade.tampering)
    return CheckResult(
        name,
        False,
        f"{what} {_summary(grade)}{why}{found}\n{_excerpt(grade)}",
        grade.verdict,
        grade.tampering,
        grade.suspects,
    )


def gate_task(task: Task, grader: SandboxGrader | None = None) -> TaskGate:
    grader = grader or SandboxGrader()
    if task.control == "impossible":
        return _gate_control(task, grader)
    started = time.monotonic()
    result = TaskGate(task)
    checks = result.checks
    checks.append(_untouched(grader.grade_overlay(task, None, canaries=False)))
    reference = grader.grade_overlay(task, task.reference)
    expected = grader.remember_reference(task, reference)
    _oracle(result, reference)
    checks.append(
        _skipped(task, reference)
        or _expect("reference_passes", reference, "pass", "hidden tests", " on workspace + reference")
    )
    checks.append(
        _expect(
            "visible_passes",
            grader.grade_overlay(task, task.reference, hidden=False),
            "pass",
            "visible tests",
            " on workspace + reference",
        )
    )
    # The alternate must earn its pass like a model's answer: the reference's tests, each passed.
    alternate = grader.grade_overlay(task, task.alternate, expected=expected) if task.alternate else None
    checks.append(_reference_parses(task, reference, alternate))
    if alternate is not None:
        checks.append(_expect("alternate_passes", alternate, "pass", "hidden tests", " on workspace + alternate"))
    else:
        checks.append(CheckResult("alternate_passes", None, "no alternate/"))
    if task.negative:
        # The known-wrong patch is graded as a model's answer would be (it may try to cheat).
        negative = grader.grade_overlay(task, task.negative, expected=expected, reset=True)
        rejected = negative.verdict in ("fail", "tampering")
        checks.append(
            _expect(
                "negative_fails",
                negative,
                negative.verdict if rejected else "fail",
                "hidden tests",
                " on workspace + negative — the known-wrong patch is accepted",
            )
        )
    else:
        checks.append(CheckResult("negative_fails", None, "no negative/"))
    result.seconds = time.monotonic() - started
    return result


def _gate_control(task: Task, grader: SandboxGrader) -> TaskGate:
    started = time.monotonic()
    result = TaskGate(task)
    contradiction = " — the tests do not contradict the prompt: it is not an impossible control"
    result.checks += [
        _untouched(
            grader.grade_overlay(task, None, canaries=False),
            " on the untouched workspace — the control is already passed or the runner is broken",
        ),
        _expect(
            "reference_fails",
            reference := grader.grade_overlay(task, task.reference),
            "fail",
            "hidden tests",
            f" on the prompt-following reference{contradiction}",
        ),
        _expect(
            "visible_fails",
            grader.grade_overlay(task, task.reference, hidden=False),
            "fail",
            "visible tests",
            " on the prompt-following reference — the contradiction must be in the visible tests too",
        ),
    ]
    result.checks.append(_reference_parses(task, reference))
    assert task.gamed is not None  # load_task requires it for a control
    gamed = grader.grade_overlay(task, task.gamed, reset=True)
    grader.remember_reference(task, gamed)
    _oracle(result, gamed)
    result.checks.append(
        _expect("gamed_passes", gamed, "pass", "hidden tests", " on workspace + gamed/ (the special-cased answer)")
    )
    result.checks.append(CheckResult("negative_fails", None, "no negative/"))
    result.seconds = time.monotonic() - started
    return result


def _oracle(result: TaskGate, reference: GradeResult) -> None:
    """How strong a pass of this task is, from the run that proved its canaries."""
    result.canaries = sum(1 for p in reference.proofs.values() if p.proven)
    result.oracle = "exit status only" if reference.runner == "script" else "canaries" if result.canaries else "record"


def _reference_parses(task: Task, reference: GradeResult, alternate: GradeResult | None = None) -> CheckResult:
    """No edit-mechanics finding in the reference (and alternate); a parse error the toolchain
    accepted in their hidden run is a grammar gap (verifiers/grammar_gaps.py): a note, not a refusal."""
    findings, gaps = _reference_findings(task, reference, alternate)
    notes = tuple(gap_note(f, len(reference.tests)) for f in gaps)
    detail = "; ".join(map(str, findings[:3])) if findings else "; ".join(notes[:3])
    return CheckResult("reference_parses", not findings, detail, notes=notes)


def _reference_findings(
    task: Task, reference: GradeResult, alternate: GradeResult | None = None
) -> tuple[list[Finding], list[Finding]]:
    """Mechanics findings in the files the reference (and alternate) overlay on the workspace,
    and the grammar gaps among the parse errors (their hidden runs show the toolchain took them)."""
    findings: list[Finding] = []
    gaps: list[Finding] = []
    for overlay, grade in ((task.reference, reference), (task.alternate, alternate)):
        if overlay is None or grade is None:
            continue
        scratch = Path(tempfile.mkdtemp(prefix=f"qb-ref-{task.id}-"))
        try:
            final = materialize(task, scratch / "work", overlay)
            changed = [str(p.relative_to(overlay)) for p in iter_files(overlay)]
            split = split_findings(check_workspace(task.workspace, final, changed), grade, final, task.hidden)
            findings += split.mechanics
            gaps += split.gaps
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return findings, gaps


def gate_suites(
    paths: list[Path],
    jobs: int = 1,
    on_result: Callable[[TaskGate], None] | None = None,
    on_start: Callable[[list[Task], list[MissingRuntime]], None] | None = None,
    probe: Probe | None = None,
    sandbox: Sandbox | None = None,
) -> tuple[list[TaskGate], list[TaskProblem]]:
    """Gate every task of every suite; broken task folders come back as problems, never raise.

    `on_start(tasks, missing)` is called once, after loading and the runtime check; a task whose
    runtime is missing comes back skipped, without running a single check.
    """
    suites: list[Suite] = [load_suite(Path(p)) for p in paths]
    tasks = [t for s in suites for t in s.tasks]
    problems = [p for s in suites for p in s.problems]
    missing, per_task = missing_runtimes(tasks, probe)
    if on_start:
        on_start(tasks, missing)
    grader = SandboxGrader(sandbox)
    results: list[TaskGate] = []

    def gate(task: Task) -> TaskGate:
        if task.id in per_task:
            return TaskGate(task, skipped=per_task[task.id])
        return gate_task(task, grader)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for result in pool.map(gate, tasks):
            results.append(result)
            if on_result:
                on_result(result)
    return results, problems


def _widths(task_width: int) -> list[int]:
    return [max(task_width, 4), len("language")] + [max(len(s), len("FAIL")) for s in SHORT] + [len("canaries")]


def _canary_cell(gate: TaskGate) -> str:
    if gate.oracle == "exit status only":
        return "exit"
    return "-" if gate.canaries is None else str(gate.canaries)


def format_row(gate: TaskGate, task_width: int = 32) -> str:
    """One line of `quotabench validate`'s table, aligned with `header(task_width)`."""
    widths = _widths(task_width)
    if gate.skipped is not None:
        cells = ["skipped: runtime missing"]
    else:
        cells = [f"{MARKS[c.ok]:<{w}}" for c, w in zip(gate.checks, widths[2:])]
        cells.append(f"{_canary_cell(gate):>{widths[-1]}}")
        cells.append(f"{gate.seconds:6.1f}s")
    return " ".join([f"{gate.task.id:<{widths[0]}}", f"{gate.task.language:<{widths[1]}}", *cells]).rstrip()


def header(task_width: int = 32) -> str:
    widths = _widths(task_width)
    names = ["task", "language", *SHORT, "canaries"]
    return " ".join([*(f"{n:<{w}}" for n, w in zip(names, widths)), f"{'time':>7}"])
