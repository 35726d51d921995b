"""How strong the hidden tests are: the suite's mutation score with its Wilson interval, and the
text `quotabench validate --mutants` and `quotabench report` print (weak tests let wrong code
through, and flatter weak models most).

The suite's score pools every scored task's counted mutants (killed + survived, outcomes in
verifiers/mutants/outcome.py). Mutants of one task are not independent, so the interval
describes this corpus' mutants, not tests in general.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agent.metrics.stats import wilson
from verifiers.mutants.outcome import DEFAULT_WEAK_BELOW, TaskScore

WIDTH = 80


@dataclass(frozen=True)
class TaskMutation:
    """One task's counts, as the cache and the ledger hold them."""

    task_id: str
    language: str
    generated: int
    killed: int
    survived: int
    equivalent: int = 0
    unviable: int = 0
    flagged: int = 0
    errors: int = 0

    @property
    def counted(self) -> int:
        return self.killed + self.survived

    @property
    def score(self) -> float | None:
        return self.killed / self.counted if self.counted else None


def task_mutation(score: TaskScore) -> TaskMutation:
    return TaskMutation(
        score.task_id,
        score.language,
        score.generated,
        score.killed,
        score.survived,
        score.count("equivalent"),
        score.count("unviable"),
        score.count("flagged"),
        score.count("error"),
    )


@dataclass(frozen=True)
class SuiteMutation:
    tasks: int
    killed: int
    counted: int
    score: float | None
    interval: tuple[float, float]
    weakest: list[TaskMutation]  # every scored task, weakest first
    below: float

    @property
    def weak(self) -> list[TaskMutation]:
        return [t for t in self.weakest if t.score is not None and t.score < self.below]

    def statement(self) -> str:
        """The one line the report states, e.g. hidden tests: mutation score 0.91 [0.88, 0.93] over 45 tasks."""
        if self.score is None:
            return "hidden tests: no mutation score (no scored task has a counted mutant)"
        lo, hi = self.interval
        weak = f"; {len(self.weak)} weak (below {self.below:.2f})" if self.weak else ""
        return (
            f"hidden tests: mutation score {self.score:.2f} [{lo:.2f}, {hi:.2f}] over {self.tasks} "
            f"task{'s' if self.tasks != 1 else ''} "
            f"({self.killed} of {self.counted} mutants killed){weak}"
        )


def suite_mutation(tasks: Iterable[TaskMutation], below: float = DEFAULT_WEAK_BELOW) -> SuiteMutation:
    """Pool the tasks' counted mutants; Wilson interval (stats.wilson) on killed of counted."""
    scored = [t for t in tasks if t.counted]
    killed = sum(t.killed for t in scored)
    counted = sum(t.counted for t in scored)
    weakest = sorted(scored, key=lambda t: (t.score or 0.0, t.task_id))
    return SuiteMutation(
        len(scored), killed, counted, killed / counted if counted else None, wilson(killed, counted), weakest, below
    )


def mutation_section(rows: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The report's `hidden_tests` entry from a run's mutation_scores rows (None: none recorded)."""
    if not rows:
        return None
    tasks = [
        TaskMutation(
            r["task_id"],
            r["language"],
            r["generated"],
            r["killed"],
            r["survived"],
            r["equivalent"],
            r["unviable"],
            r["flagged"],
            r["errors"],
        )
        for r in rows
    ]
    suite = suite_mutation(tasks, rows[0]["weak_below"] or DEFAULT_WEAK_BELOW)
    return {
        "statement": suite.statement(),
        "tasks_scored": suite.tasks,
        "killed": suite.killed,
        "counted": suite.counted,
        "score": suite.score,
        "interval": list(suite.interval),
        "weak_below": suite.below,
        "weak": [{"task_id": t.task_id, "score": t.score} for t in suite.weak],
        "per_task": {t.task_id: t.score for t in tasks},
    }


HEADER = (
    f"{'task':<24} {'language':<10} {'mutants':>7} {'killed':>6} {'surv':>4} {'equiv':>5} {'unviab':>6} {'score':>5}"
)


def task_row(score: TaskScore, below: float = DEFAULT_WEAK_BELOW) -> str:
    """One line of the per-task table (80 columns), or why the task was not scored."""
    name = score.task_id if len(score.task_id) <= 24 else score.task_id[:23] + "…"
    if score.skipped is not None:
        return f"{name:<24} {score.language:<10} skipped: {score.skipped}"[:WIDTH]
    t = task_mutation(score)
    value = "-" if t.score is None else f"{t.score:.2f}"
    mark = "  weak" if score.weak(below) else ""
    return (
        f"{name:<24} {t.language:<10} {t.generated:>7} {t.killed:>6} {t.survived:>4} {t.equivalent:>5} "
        f"{t.unviable:>6} {value:>5}{mark}"
    )


def survivor_lines(score: TaskScore) -> list[str]:
    """Each survivor of a task (and each likely equivalent, marked) with its diff."""
    lines: list[str] = []
    for m in score.mutants:
        if m.outcome not in ("survived", "equivalent"):
            continue
        mark = "likely equivalent" if m.outcome == "equivalent" else "survived"
        note = f" ({m.note})" if m.note and m.outcome == "survived" else ""
        lines.append(f"  {mark}: {m.description}{note}")
        lines += [f"    {d}" for d in m.diff.splitlines() if not d.startswith(("---", "+++"))]
    return lines


def summary_lines(scores: Sequence[TaskScore], below: float = DEFAULT_WEAK_BELOW, seconds: float = 0.0) -> list[str]:
    """The closing summary: suite score and interval, then the weakest tasks first."""
    suite = suite_mutation([task_mutation(s) for s in scores if s.skipped is None], below)
    skipped = [s for s in scores if s.skipped is not None]
    flagged = sum(s.count("flagged") for s in scores)
    errors = sum(s.count("error") for s in scores)
    lines = [suite.statement()]
    extra = []
    if flagged:
        extra.append(f"{flagged} flagged by the integrity checks (not counted)")
    if errors:
        extra.append(f"{errors} could not run (not counted)")
    if skipped:
        extra.append(f"{len(skipped)} tasks not scored")
    if seconds:
        extra.append(f"scored in {seconds:.0f} s")
    if extra:
        lines.append("; ".join(extra))
    weakest = suite.weakest[:10]
    if weakest:
        lines.append(
            "weakest first: " + ", ".join(f"{t.task_id} {t.score:.2f}" for t in weakest if t.score is not None)
        )
    return lines
