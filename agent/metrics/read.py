"""The one-line "practical read" per arm in the report's decision table: what the numbers mean
for someone choosing an endpoint, e.g. "wins on acceptance; eats quota on retries".
"""

from __future__ import annotations

from typing import Any

from agent.metrics.arm import ArmMetrics
from agent.metrics.compare import Comparison
from agent.metrics.cost import ArmCost
from agent.metrics.cost_ci import HIGHER, LOWER, SAME, margin_text, ratio_reading

HIGH_RETRY_TAX = 0.30
LOW_RETRY_TAX = 0.15
FLATTER_RATE = 0.25
FLATTER_MIN_N = 5
CHEAPER = 0.9
MAX_PHRASES = 3


def _acceptance_phrase(me: str, comparison: Comparison) -> str:
    """compare.py's decision rule, from this arm's side."""
    v = comparison.verdict
    if v.winner == me:
        return f"wins on acceptance (+{v.points:.0f} pts)"
    if v.loser == me:
        return f"loses {v.points:.0f} pts on acceptance"
    return f"no detectable difference in acceptance at n={comparison.n_paired}"


def _ratio_phrase(mine: float | None, theirs: float | None, cheaper: str, dearer: str) -> str | None:
    if not mine or not theirs:
        return None
    if mine / theirs < CHEAPER:
        return cheaper
    if theirs / mine < CHEAPER:
        return dearer
    return None


def _interval_phrase(me: str, ratio: dict[str, Any], n: int) -> str | None:
    """Cheaper or dearer only when the ratio's 95% interval excludes 1 (seed 000) and leaves the
    run's cost margin; the same cost when it lies within the margin."""
    if ratio["value"] is None:
        return None  # one side solved nothing: there is no cost per solved task to compare
    reading = ratio_reading(ratio)
    what = "per solved task" if ratio["of"] == "cpsp" else "quota per patch"
    if reading == SAME:
        return f"the same cost {what} within {margin_text(ratio)}"
    if reading in (LOWER, HIGHER):
        cheaper = (reading == LOWER) != (me == ratio["first"])  # the ratio is second / first
        if ratio["of"] == "cpsp":
            return f"{'cheaper' if cheaper else 'dearer'} {what}"
        return f"{'less' if cheaper else 'more'} {what}"
    return f"no detectable cost difference at n={n}"


def practical_read(
    me: ArmMetrics,
    my_cost: ArmCost | None,
    other: ArmMetrics | None = None,
    other_cost: ArmCost | None = None,
    comparison: Comparison | None = None,
    *,
    same_accounting: bool = True,
    ratio: dict[str, Any] | None = None,
) -> str:
    """One line for the decision table (seed 002's "Practical read" column).

    An arm that is not comparable (censored, stopped, aborted) gets only that: a censored run
    is a missing measurement, not a low score (seed 002). Otherwise, at most three of:
    acceptance against the other arm (compare.py's decision rule), retry tax, cost per solved
    task (quota per patch when unpriced, and only when both arms' tokens are counted the same
    way), and whether the visible tests flatter it (seed 001).
    """
    mine = me.figures
    if me.censored:
        return f"not comparable ({mine.not_comparable})"
    if mine.accepted == 0:
        return "solved nothing: no QAP or CPSP"
    comparable = other is not None and not other.censored
    phrases: list[str | None] = []
    if comparable and comparison is not None:
        phrases.append(_acceptance_phrase(me.name, comparison))
    if mine.retry_tax is not None and mine.retry_tax >= HIGH_RETRY_TAX:
        phrases.append("eats quota on retries")
    elif mine.retry_tax is not None and mine.retry_tax <= LOW_RETRY_TAX:
        phrases.append("little spent on retries")
    n = comparison.n_paired if comparison is not None else mine.decided
    if comparable and ratio is not None and (ratio["of"] == "cpsp" or same_accounting):
        phrases.append(_interval_phrase(me.name, ratio, n))
    elif comparable and my_cost and other_cost:
        phrases.append(
            _ratio_phrase(my_cost.cpsp, other_cost.cpsp, "cheaper per solved task", "dearer per solved task")
        )
    elif comparable and other is not None and same_accounting:
        phrases.append(_ratio_phrase(mine.qap, other.figures.qap, "less quota per patch", "more quota per patch"))
    if (me.visible_flatter_rate or 0) >= FLATTER_RATE and me.visible_pass_n >= FLATTER_MIN_N:
        phrases.append("visible tests flatter it")
    kept = [p for p in phrases if p][:MAX_PHRASES]
    return "; ".join(kept) if kept else "no clear edge"


def with_integrity(read: str, integrity: dict[str, Any] | None) -> str:
    """The read led by what the grader's integrity checks found on the arm (its integrity_section
    entry): a gamed impossible control means its passes elsewhere may be gamed too, so it is said
    before any figure is read; tampering the grader caught is said next."""
    if integrity is None:
        return read
    gamed, tampered = len(integrity["controls_gamed"]), len(integrity["tampering_tasks"])
    if gamed:
        flag = f"gamed {gamed} of {integrity['controls']} impossible controls: its passes may be gamed too"
    elif tampered:
        flag = f"tampering caught on {tampered} task{'' if tampered == 1 else 's'}"
    else:
        return read
    return f"{flag}; {read}"
