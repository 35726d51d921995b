"""Score suites: every mutant of every task graded with the hidden tests through the executor.

One pool of `jobs` workers grades (task, mutant) pairs from all tasks at once, so a task with
many mutants does not hold the others back; a task's result is written to the cache as soon as
its last mutant is graded (a kill loses at most the tasks in flight). A cached task version is
returned without grading anything.

A mutant's time limit is ten times its reference's hidden run here, at least 5 s and at most
the task's own `timeout_s`: a mutant that loops is killed by the limit (outcome.py) without
holding a worker for the task's full timeout, and one merely slower than the reference still
has an order of magnitude of room.

Tasks of kind `control` are not scored: an impossible control's reference fails its tests by
design (no mutant of it can survive or be killed in a meaningful way), and the floor and
negative controls test the agent and the gate with deliberately minimal tests.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from verifiers.grading import GradeResult, SandboxGrader
from verifiers.mutants.cache import ScoreCache, cache_key
from verifiers.mutants.equivalence import likely_equivalent, trace, traceable
from verifiers.mutants.generate import DEFAULT_MAX_MUTANTS, Mutant, mutants_of_task, overlay
from verifiers.mutants.outcome import MutantResult, TaskScore, outcome_of
from verifiers.runtimes import Probe, missing_runtimes
from verifiers.sandbox import Sandbox
from verifiers.scratch import remove, scratch_dir
from verifiers.tasks import Suite, Task, TaskProblem, load_suite


@dataclass
class Progress:
    """What has been scored so far (the CLI draws its bar from this)."""

    tasks: int = 0
    tasks_done: int = 0
    mutants: int = 0
    mutants_done: int = 0
    started: float = 0.0

    def eta_s(self) -> float | None:
        """Seconds left at the pace so far (None before the first graded mutant)."""
        if not self.mutants_done:
            return None
        elapsed = time.monotonic() - self.started
        return elapsed / self.mutants_done * (self.mutants - self.mutants_done)


@dataclass(frozen=True)
class Settings:
    max_mutants: int = DEFAULT_MAX_MUTANTS
    jobs: int = 1


def _mutant_result(task: Task, mutant: Mutant, grade: GradeResult, seconds: float) -> MutantResult:
    outcome = outcome_of(grade.verdict, grade.tests, grade.failed, grade.exit_status)
    keep_diff = outcome == "survived"
    reference = (task.reference / mutant.file).read_bytes() if keep_diff else b""
    return MutantResult(
        id=mutant.id,
        kind=mutant.kind,
        file=mutant.file,
        line=mutant.line,
        description=mutant.description,
        outcome=outcome,
        verdict=grade.verdict,
        diff=mutant.diff(reference) if keep_diff else "",
        seconds=round(seconds, 3),
        note=grade.integrity or "",
        function=mutant.function,
    )


class AlternateTraces:
    """The alternate's recorded calls per (task, file), recorded once when first needed."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self._traces: dict[tuple[str, str], list[str]] = {}
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._guard = threading.Lock()

    def of(self, task: Task, file: str) -> list[str]:
        key = (task.id, file)
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._traces:
                self._traces[key] = trace(self.sandbox, task, [task.alternate], file)
            return self._traces[key]


TIMEOUT_FACTOR = 10
MIN_TIMEOUT_S = 5.0


def mutant_timeout(task: Task, reference: GradeResult) -> float:
    """Ten times the reference's hidden run, at least MIN_TIMEOUT_S, at most the task's limit."""
    return min(task.timeout_s, max(MIN_TIMEOUT_S, TIMEOUT_FACTOR * reference.duration_ms / 1000))


def grade_mutant(
    grader: SandboxGrader,
    task: Task,
    mutant: Mutant,
    alternates: AlternateTraces | None = None,
    timeout_s: float | None = None,
) -> MutantResult:
    """Grade one mutant like a model's answer (the reference's tests expected, runner files reset),
    without canaries: the score is the task's own tests' (a draw of canaries would make it vary
    from run to run); a survivor is then checked for likely equivalence with the alternate."""
    started = time.monotonic()
    scratch = scratch_dir(f"mutant-{task.id}")
    try:
        folder = overlay(task, mutant, scratch / "overlay")
        expected = grader.expected_tests(task)
        grade = grader.grade_overlay(task, folder, expected=expected, reset=True, timeout_s=timeout_s, canaries=False)
    finally:
        remove(scratch)
    result = _mutant_result(task, mutant, grade, time.monotonic() - started)
    if result.outcome == "survived" and alternates is not None and traceable(task, mutant):
        if likely_equivalent(grader.sandbox, task, mutant, alternates.of(task, mutant.file)):
            result = replace(
                result,
                outcome="equivalent",
                note="same calls as the alternate on the tests' inputs and their neighbours",
                seconds=round(time.monotonic() - started, 3),
            )
    return result


class _TaskJob:
    """One task's mutants under way: collects results until the last one arrives."""

    def __init__(self, task: Task, key: str, mutants: list[Mutant], unparsed: int, dropped: int):
        self.task, self.key, self.mutants = task, key, mutants
        self.unparsed, self.dropped = unparsed, dropped
        self.results: dict[str, MutantResult] = {}
        self.started = time.monotonic()
        self.lock = threading.Lock()
        self.timeout_s: float | None = None  # set once the reference has run

    def add(self, result: MutantResult) -> TaskScore | None:
        with self.lock:
            self.results[result.id] = result
            if len(self.results) < len(self.mutants):
                return None
        return self.score()

    def score(self, skipped: str | None = None) -> TaskScore:
        ordered = [self.results[m.id] for m in self.mutants if m.id in self.results]
        return TaskScore(
            self.task.id,
            self.task.language,
            self.key,
            ordered,
            self.unparsed,
            self.dropped,
            round(time.monotonic() - self.started, 2),
            skipped,
        )


def score_suites(
    paths: list[Path],
    sandbox: Sandbox | None = None,
    settings: Settings = Settings(),
    cache: ScoreCache | None = None,
    on_task: Callable[[TaskScore], None] | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    probe: Probe | None = None,
) -> tuple[list[TaskScore], list[TaskProblem]]:
    """Score every task of every suite; broken task folders come back as problems, never raise."""
    suites: list[Suite] = [load_suite(Path(p)) for p in paths]
    tasks = [t for s in suites for t in s.tasks]
    problems = [p for s in suites for p in s.problems]
    _, missing = missing_runtimes(tasks, probe)
    cache = cache or ScoreCache()
    grader = SandboxGrader(sandbox)
    alternates = AlternateTraces(grader.sandbox)
    progress = Progress(tasks=len(tasks), started=time.monotonic())
    scores: dict[str, TaskScore] = {}
    lock = threading.Lock()

    def finish(score: TaskScore) -> None:
        with lock:
            scores[score.task_id] = score
            progress.tasks_done += 1
        if score.skipped is None and score.mutants:
            cache.put(score)
        if on_task:
            on_task(score)
        if on_progress:
            on_progress(progress)

    jobs: list[_TaskJob] = []
    for task in tasks:
        key = cache_key(task, settings.max_mutants)
        why = _why_not_scored(task, missing)
        cached = cache.get(key) if why is None else None
        if why is not None or cached is not None:
            finish(cached or TaskScore(task.id, task.language, key, skipped=why))
            continue
        found = mutants_of_task(task, settings.max_mutants)
        jobs.append(_TaskJob(task, key, found.mutants, found.unparsed, found.dropped))
        progress.mutants += len(found.mutants)

    def grade(pair: tuple[_TaskJob, Mutant | None]) -> None:
        job, mutant = pair
        if mutant is None:  # the reference first: mutants are graded against its tests, in its time
            reference = grader.grade_overlay(job.task, job.task.reference)
            if grader.remember_reference(job.task, reference) is None:
                raise _ReferenceFails(job)
            job.timeout_s = mutant_timeout(job.task, reference)
            return
        result = grade_mutant(grader, job.task, mutant, alternates, job.timeout_s)
        with lock:
            progress.mutants_done += 1
        done = job.add(result)
        if done is not None:
            finish(done)
        elif on_progress:
            on_progress(progress)

    with ThreadPoolExecutor(max_workers=max(1, settings.jobs)) as pool:
        viable = []
        for job, future in [(j, pool.submit(grade, (j, None))) for j in jobs]:
            try:
                future.result()
                viable.append(job)
            except _ReferenceFails:
                with lock:
                    progress.mutants -= len(job.mutants)
                finish(job.score("the reference fails its hidden tests here"))
        empty = [j for j in viable if not j.mutants]
        for job in empty:
            finish(job.score("no mutants: no changed file has a grammar"))
        list(pool.map(grade, [(j, m) for j in viable for m in j.mutants]))
    ordered = [scores[t.id] for t in tasks if t.id in scores]
    return ordered, problems


class _ReferenceFails(Exception):
    def __init__(self, job: _TaskJob):
        self.job = job


def _why_not_scored(task: Task, missing: dict[str, str]) -> str | None:
    if task.kind == "control":
        return "control: not scored"
    if task.id in missing:
        return f"runtime missing: {missing[task.id]}"
    return None


def rescored(score: TaskScore, results: list[MutantResult]) -> TaskScore:
    """The same task score with some mutants' results replaced (by id)."""
    new = {r.id: r for r in results}
    return replace(score, mutants=[new.get(m.id, m) for m in score.mutants])
