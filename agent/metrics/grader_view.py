"""The weak-test view (how much acceptance drops under stricter tests): the same tasks graded twice, by the visible tests
alone and by the hidden tests, per arm, and how the arms' gap would read under each grader.

Under a visible-only grader a task counts as accepted when one of its attempts ended with the
model's own last `run_tests` passing (attempts.visible_passed = 1): the first such attempt
would have ended the task. It counts as rejected when every attempt's last run failed, and as
unknown when none passed and some attempt never ran the tests — unknown tasks are left out of
the pairs and counted apart. The hidden grader's acceptance is the task's outcome. Only decided
tasks count, as in the paired comparison. The two graders are compared with the exact McNemar
test on the tasks where they disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent.ledger.store import Row
from agent.metrics.outcome import TaskOutcome
from agent.metrics.stats import McNemar, mcnemar_exact


@dataclass(frozen=True)
class GraderPair:
    """One arm's decided tasks graded by the visible tests alone and by the hidden tests."""

    arm: str
    n: int
    visible_accepted: int
    hidden_accepted: int
    mcnemar: McNemar  # only_a: accepted by the visible tests only (flattered); only_b: hidden only
    unknown: int = 0  # decided tasks whose visible verdict is unknown (the tests were never run)

    @property
    def visible_rate(self) -> float | None:
        return self.visible_accepted / self.n if self.n else None

    @property
    def hidden_rate(self) -> float | None:
        return self.hidden_accepted / self.n if self.n else None

    @property
    def drop(self) -> float | None:
        """Points lost when the hidden tests replace the visible ones."""
        return (self.visible_accepted - self.hidden_accepted) / self.n if self.n else None

    @property
    def relative_drop(self) -> float | None:
        return (self.visible_accepted - self.hidden_accepted) / self.visible_accepted if self.visible_accepted else None

    def as_json(self) -> dict[str, Any]:
        return {
            "arm": self.arm,
            "n": self.n,
            "visible_accepted": self.visible_accepted,
            "hidden_accepted": self.hidden_accepted,
            "visible_rate": self.visible_rate,
            "hidden_rate": self.hidden_rate,
            "drop": self.drop,
            "relative_drop": self.relative_drop,
            "visible_only": self.mcnemar.only_a,
            "hidden_only": self.mcnemar.only_b,
            "p_value": self.mcnemar.p_value,
            "unknown": self.unknown,
        }


def visible_accepted(task_ids: Sequence[str], attempts: Sequence[Row | dict[str, Any]]) -> dict[str, bool | None]:
    """Per task: would a visible-only grader have accepted it (True), rejected it (False), or is
    that unknown (None: no attempt's last run passed and some attempt never ran the tests)?"""
    runs: dict[str, list[int | None]] = {t: [] for t in task_ids}
    for r in attempts:
        if r["task_id"] in runs and (r.get("stage") or "attempt") == "attempt":
            runs[r["task_id"]].append(r["visible_passed"])
    return {t: True if 1 in v else False if v and None not in v else None for t, v in runs.items()}


def grader_pair(arm: str, outcomes: Sequence[TaskOutcome], visible: Mapping[str, bool | None]) -> GraderPair:
    """One arm's decided tasks under both graders; `visible` is visible_accepted over its tasks."""
    decided = [o for o in outcomes if o.decided]
    known = [o for o in decided if visible[o.task_id] is not None]
    v = [int(bool(visible[o.task_id])) for o in known]
    h = [int(o.accepted) for o in known]
    return GraderPair(arm, len(known), sum(v), sum(h), mcnemar_exact(v, h), len(decided) - len(known))


@dataclass(frozen=True)
class GapUnderGraders:
    """The second arm's acceptance minus the first's on their paired decided tasks, per grader."""

    first: str
    second: str
    n: int
    hidden_gap: float
    hidden: McNemar
    visible_gap: float
    visible: McNemar

    def as_json(self) -> dict[str, Any]:
        return {
            "first": self.first,
            "second": self.second,
            "n": self.n,
            "hidden_gap": self.hidden_gap,
            "hidden_p_value": self.hidden.p_value,
            "visible_gap": self.visible_gap,
            "visible_p_value": self.visible.p_value,
        }


def gap_under_graders(
    first: str,
    first_outcomes: Sequence[TaskOutcome],
    va: Mapping[str, bool | None],
    second: str,
    second_outcomes: Sequence[TaskOutcome],
    vb: Mapping[str, bool | None],
) -> GapUnderGraders | None:
    """The gap on the tasks both arms decided, each arm's `va`/`vb` its visible_accepted."""
    decided = [(a, b) for a, b in zip(first_outcomes, second_outcomes, strict=True) if a.decided and b.decided]
    pairs = [(a, b) for a, b in decided if va[a.task_id] is not None and vb[a.task_id] is not None]
    if not pairs:
        return None
    ids = [a.task_id for a, _ in pairs]
    ha, hb = [int(a.accepted) for a, _ in pairs], [int(b.accepted) for _, b in pairs]
    xa, xb = [int(bool(va[t])) for t in ids], [int(bool(vb[t])) for t in ids]
    n = len(pairs)
    return GapUnderGraders(
        first,
        second,
        n,
        (sum(hb) - sum(ha)) / n,
        mcnemar_exact(ha, hb),
        (sum(xb) - sum(xa)) / n,
        mcnemar_exact(xa, xb),
    )


def grader_lines(pairs: Sequence[dict[str, Any]], gaps: Sequence[dict[str, Any]]) -> list[str]:
    """The report's weak-test view: per arm the two graders' acceptance, then each gap under both."""
    lines = []
    for p in pairs:
        unknown = p.get("unknown") or 0
        if unknown:
            lines.append(f"{p['arm']}: {unknown} decided tasks never ran the visible tests: left out below")
        if not p["n"]:
            continue
        rel = f", {p['relative_drop']:.0%} of its visible score" if p["relative_drop"] is not None else ""
        lines.append(
            f"{p['arm']}: visible tests alone accept {p['visible_accepted']} of {p['n']} "
            f"({p['visible_rate']:.2f}), hidden tests {p['hidden_accepted']} ({p['hidden_rate']:.2f}): "
            f"drop {p['drop']:+.2f}{rel}; McNemar exact {p['visible_only']} visible-only vs "
            f"{p['hidden_only']} hidden-only, p = {p['p_value']:.3g}"
        )
    if len(pairs) > 1 and not gaps:
        lines.append("gap under the visible tests alone: unknown — no task has a visible verdict on both arms")
    for g in gaps:
        lines.append(
            f"gap {g['second']} - {g['first']} (n={g['n']} paired, visible verdict known on both): "
            f"{g['hidden_gap']:+.2f} under the hidden tests "
            f"(p = {g['hidden_p_value']:.3g}), {g['visible_gap']:+.2f} under the visible tests alone "
            f"(p = {g['visible_p_value']:.3g})"
        )
    return lines
