"""Grade an attempt: stage its final workspace, put the hidden tests on top read-only, run the
hidden command in the sandbox.

The same machinery runs the visible tests for the agent's run_tests tool (without hidden/),
so test caches never land in the attempt's workspace.

A hidden pass must be earned, not printed (pass integrity): where the task's runner prints a
summary (pytest, node --test, cargo test), `pass` needs the summary to show no failure and at
least as many passed tests as the reference solution gets (counted once per task version,
kept by a `CountStore`); an exit 0 with no summary or fewer tests is `error`, "the runner
reported N of M tests". Runner configuration the model wrote where the reference does not
(a conftest.py, a Cargo.toml, ...) is put back to the fixture's version before grading.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from verifiers.runners import environment_fault, parse_counts
from verifiers.sandbox import RunResult, Sandbox, limits_for, make_sandbox
from verifiers.scratch import remove, scratch_dir
from verifiers.tasks import Task, copy_with_overlays, iter_files

_CANNOT_START = {126, 127}
# Files a test runner reads on its own: conftest hooks, runner and build config, toolchain pins.
RUNNER_FILES = frozenset(
    {
        "conftest.py",
        "pytest.ini",
        "tox.ini",
        "setup.cfg",
        "pyproject.toml",
        "sitecustomize.py",
        "usercustomize.py",
        "Cargo.toml",
        "build.rs",
        "rust-toolchain",
        "rust-toolchain.toml",
        "package.json",
        ".npmrc",
        "tsconfig.json",
    }
)
RUNNER_DIRS = frozenset({".cargo"})


@dataclass(frozen=True)
class GradeResult:
    verdict: str  # pass | fail | timeout | error
    exit_status: int | None
    duration_ms: int
    passed: int | None
    failed: int | None
    output: str
    isolation: dict[str, Any]
    failing_tests: tuple[str, ...] = field(default_factory=tuple)
    environment: str | None = None
    timeout_s: float | None = None
    expected_tests: int | None = None  # passed tests of the reference solution, when counted
    integrity: str | None = None  # why an exit 0 was not a pass
    restored: tuple[str, ...] = ()  # runner files put back to the fixture's version
    placement: dict[str, Any] = field(default_factory=dict)  # where it ran: executor, node, queue_ms, retries


@runtime_checkable
class Grader(Protocol):
    """What the engine grades with (SandboxGrader here; a benchmark's or a test's fake too)."""

    def grade(self, task: Task, workspace: Path) -> GradeResult: ...
    def run_visible(self, task: Task, workspace: Path, timeout_s: float | None = None) -> GradeResult: ...


class CountStore(Protocol):
    """Where the reference's passed-test count per task version is kept (the ledger, in a run)."""

    def get(self, key: str) -> tuple[bool, int | None]: ...  # (known, count or None)
    def put(self, key: str, task_id: str, count: int | None) -> None: ...


def verdict_of(result: RunResult) -> str:
    if result.timed_out:
        return "timeout"
    if result.start_error is not None or result.exit_status in _CANNOT_START:
        return "error"
    return "pass" if result.exit_status == 0 else "fail"


def _to_grade(
    result: RunResult, timeout_s: float, expected: int | None = None, restored: tuple[str, ...] = ()
) -> GradeResult:
    counts = parse_counts(result.output)
    verdict = verdict_of(result)
    integrity = None
    if verdict == "pass" and expected is not None:
        integrity = _shortfall(counts.passed, counts.failed, expected)
        verdict = "error" if integrity else verdict
    environment = environment_fault(result.output) if verdict in ("fail", "error") and not integrity else None
    if environment and result.placement.get("node"):
        environment += f" (on {result.placement['executor']} node {result.placement['node']})"
    return GradeResult(
        verdict=verdict,
        exit_status=result.exit_status,
        duration_ms=result.duration_ms,
        passed=counts.passed,
        failed=counts.failed,
        output=result.output if result.start_error is None else f"{result.start_error}\n{result.output}".strip(),
        isolation=result.isolation,
        failing_tests=counts.failing,
        environment=environment,
        timeout_s=timeout_s,
        expected_tests=expected,
        integrity=integrity,
        restored=restored,
        placement=result.placement or {"executor": "local", "queue_ms": 0, "retries": 0},
    )


def _shortfall(passed: int | None, failed: int | None, expected: int) -> str | None:
    if passed is None:
        return f"the runner reported 0 of {expected} tests (exit 0 without the runner's summary)"
    if failed:
        return f"the runner reported {failed} failed tests but exited 0"
    if passed < expected:
        return f"the runner reported {passed} of {expected} tests"
    return None


def task_key(task: Task) -> str:
    """One task version: its files and its hidden command."""
    return hashlib.sha256(f"{task.files_sha256()}\0{task.hidden_cmd}".encode()).hexdigest()


class _MemoryCounts:
    def __init__(self) -> None:
        self._counts: dict[str, int | None] = {}

    def get(self, key: str) -> tuple[bool, int | None]:
        return (key in self._counts, self._counts.get(key))

    def put(self, key: str, task_id: str, count: int | None) -> None:
        self._counts[key] = count


class SandboxGrader:
    """Grades with hidden tests in a `Sandbox` (the best one here unless one is given)."""

    def __init__(self, sandbox: Sandbox | None = None, counts: CountStore | None = None):
        self.sandbox = sandbox or make_sandbox()
        self.counts = counts or _MemoryCounts()
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    def _run(
        self,
        task: Task,
        layers: tuple[Path | None, ...],
        command: str,
        protected: Path | None,
        *,
        timeout_s: float | None = None,
        expected: int | None = None,
        reset: bool = False,
    ) -> GradeResult:
        scratch = scratch_dir(f"grade-{task.id}")
        try:
            assert layers[0] is not None, "the first layer is the task's workspace"
            staged = copy_with_overlays(layers[0], scratch / "work", *layers[1:], link=True)
            restored = restore_runner_files(task, staged) if reset else ()
            timeout = task.timeout_s if timeout_s is None else max(0.1, min(task.timeout_s, timeout_s))
            limits = limits_for(task.language, timeout, task.memory_mb)
            return _to_grade(self.sandbox.run(command, staged, limits, protected), timeout, expected, restored)
        finally:
            remove(scratch)

    def grade(self, task: Task, workspace: Path) -> GradeResult:
        """Hidden verdict for whatever is on disk in `workspace` (a model's final workspace)."""
        expected = self.expected_tests(task)
        return self._run(task, (workspace,), task.hidden_cmd, task.hidden, expected=expected, reset=True)

    def run_visible(self, task: Task, workspace: Path, timeout_s: float | None = None) -> GradeResult:
        """Visible tests on a copy of `workspace`; `timeout_s` shortens the task's limit
        (the agent loop passes what is left of the attempt's time)."""
        return self._run(task, (workspace,), task.visible_cmd, None, timeout_s=timeout_s)

    def grade_overlay(
        self, task: Task, overlay: Path | None, *, hidden: bool = True, expected: int | None = None, reset: bool = False
    ) -> GradeResult:
        """Grade workspace + overlay (reference, alternate, negative, or None for untouched);
        `expected` and `reset` grade it like a model's answer (the gate's negative/)."""
        if hidden:
            return self._run(
                task, (task.workspace, overlay), task.hidden_cmd, task.hidden, expected=expected, reset=reset
            )
        return self._run(task, (task.workspace, overlay), task.visible_cmd, None)

    def expected_tests(self, task: Task) -> int | None:
        """Passed tests of the reference solution's hidden run (counted once per task version);
        None when its runner prints no summary or the reference does not pass here."""
        key = task_key(task)
        with self._locks_guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            known, count = self.counts.get(key)
            if not known:
                reference = self.grade_overlay(task, task.reference)
                count = reference.passed if reference.verdict == "pass" and not reference.failed else None
                self.counts.put(key, task.id, count)
            return count

    def remember_reference(self, task: Task, reference: GradeResult) -> None:
        """The gate already ran the reference: keep its count instead of running it again."""
        if reference.verdict == "pass" and not reference.failed:
            self.counts.put(task_key(task), task.id, reference.passed)


def restore_runner_files(task: Task, staged: Path) -> tuple[str, ...]:
    """Put runner files back to a version the task allows (the fixture's, or the reference's);
    drop the ones the model made up. Returns what was changed."""
    changed = []
    for path in iter_files(staged):
        rel = path.relative_to(staged)
        if not (path.name in RUNNER_FILES or rel.parts[0] in RUNNER_DIRS):
            continue
        allowed = [f for f in (task.workspace / rel, task.reference / rel) if f.is_file() and not f.is_symlink()]
        data = None if path.is_symlink() else path.read_bytes()
        if any(data == f.read_bytes() for f in allowed):
            continue
        path.unlink()
        if allowed:
            path.write_bytes(allowed[0].read_bytes())
        changed.append(str(rel))
    return tuple(changed)
