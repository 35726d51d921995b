"""The one-line "practical read" per arm in seed 002's decision table: what the numbers mean
for someone choosing an endpoint, e.g. "wins on acceptance; eats quota on retries".
"""
from __future__ import annotations

from agent.metrics.arm import ArmMetrics
from agent.metrics.compare import Comparison
from agent.metrics.cost import ArmCost

HIGH_RETRY_TAX = 0.30
LOW_RETRY_TAX = 0.15
FLATTER_RATE = 0.25
FLATTER_MIN_N = 5
CHEAPER = 0.9
MAX_PHRASES = 3


def _acceptance_phrase(me: str, comparison: Comparison) -> str:
    sign = 1 if me == comparison.second else -1
    gap, lo, hi = (sign * comparison.bootstrap.gap, sign * comparison.bootstrap.lo,
                   sign * comparison.bootstrap.hi)
    lo, hi = min(lo, hi), max(lo, hi)
    points = abs(gap) * 100
    if lo > 0:
        return f"wins on acceptance (+{points:.0f} pts)"
    if hi < 0:
        return f"loses {points:.0f} pts on acceptance"
    return "acceptance tied within noise"


def _ratio_phrase(mine: float | None, theirs: float | None, cheaper: str, dearer: str) -> str | None:
    if not mine or not theirs:
        return None
    if mine / theirs < CHEAPER:
        return cheaper
    if theirs / mine < CHEAPER:
        return dearer
    return None


def practical_read(me: ArmMetrics, my_cost: ArmCost | None, other: ArmMetrics | None = None,
                   other_cost: ArmCost | None = None, comparison: Comparison | None = None) -> str:
    """One line for the decision table (seed 002's "Practical read" column).

    A censored arm gets only "not comparable": a censored run is a missing measurement, not a
    low score (seed 002). Otherwise, at most three of: acceptance against the other arm
    (a win only when the paired bootstrap interval excludes 0), retry tax, cost per solved
    task (quota per patch when unpriced), and whether the visible tests flatter it (seed 001).
    """
    if me.censored:
        why = "cap hit" if me.cap_hit else "run stopped"
        return f"censored: not comparable ({why}, {len(me.unfinished)} of {me.n_tasks} tasks unfinished)"
    if me.accepted == 0:
        return "solved nothing: no QAP or CPSP"
    comparable = other is not None and not other.censored
    phrases = []
    if comparable and comparison is not None:
        phrases.append(_acceptance_phrase(me.name, comparison))
    if me.retry_tax is not None and me.retry_tax >= HIGH_RETRY_TAX:
        phrases.append("eats quota on retries")
    elif me.retry_tax is not None and me.retry_tax <= LOW_RETRY_TAX:
        phrases.append("little spent on retries")
    if comparable and my_cost and other_cost:
        phrases.append(_ratio_phrase(my_cost.cpsp, other_cost.cpsp, "cheaper per solved task",
                                     "dearer per solved task"))
    elif comparable:
        phrases.append(_ratio_phrase(me.qap, other.qap, "less quota per patch", "more quota per patch"))
    if (me.visible_flatter_rate or 0) >= FLATTER_RATE and me.visible_pass_n >= FLATTER_MIN_N:
        phrases.append("visible tests flatter it")
    phrases = [p for p in phrases if p][:MAX_PHRASES]
    return "; ".join(phrases) if phrases else "no clear edge"
