"""Intervals for the cost figures (a cost denominator without an interval is not a result): each arm's QAP and CPSP, the CPSP ratio between two arms (the QAP ratio when they are
not priced) and the break-even utilization of a self-hosted arm, by the paired bootstrap over
tasks — the same seed, resamples and task draws as the acceptance bootstrap, in one pass.

Per task: its tokens (every attempt's), whether it was accepted, and its dollars. A per-token
arm's dollars are its attempts at the price plus its share of the grading (by attempts); a
self-hosted arm's bill is shared out over its tasks by attempt wall time (the work), and so is
its cost at full use, which the break-even needs. A resample whose denominator is 0 (nothing
solved) has no CPSP: when more than 2.5% of them have none, that side of the interval is
unbounded (None, with `unbounded`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from agent.config.model import DEFAULT_COST_MARGIN
from agent.metrics.cost import ArmCost, token_attempt_cost
from agent.metrics.outcome import TaskOutcome
from agent.metrics.price import parse_price
from agent.metrics.stats import PairedGap, paired_gap_of, resample_sums

LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    value: float | None
    lo: float | None
    hi: float | None
    unbounded: bool = False  # a bound is None because too many resamples had nothing solved

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    def excludes(self, x: float) -> bool:
        return self.lo is not None and self.hi is not None and (self.hi < x or self.lo > x)


@dataclass(frozen=True)
class TaskCosts:
    """One arm's per-task vectors in the run's task order."""

    arm: str
    tokens: np.ndarray
    accepted: np.ndarray
    dollars: np.ndarray | None  # None: no price
    full_use: np.ndarray | None  # self-hosted: its cost at 100% utilization, per task
    grading: np.ndarray | None
    kind: str | None  # "tokens" | "gpu" | None


def task_costs(
    arm: str,
    task_ids: Sequence[str],
    outcomes: Sequence[TaskOutcome],
    attempts: Sequence[Any],
    cost: ArmCost | None,
    price_json: str | None,
) -> TaskCosts:
    position = {t: i for i, t in enumerate(task_ids)}
    n = len(task_ids)
    tokens = np.zeros(n)
    wall = np.zeros(n)
    count = np.zeros(n)
    per_token = np.zeros(n)
    price = parse_price(arm, price_json) if cost is not None else None
    for row in attempts:
        i = position.get(row["task_id"])
        if i is None:
            continue
        tokens[i] += row["total_tokens"] or 0
        wall[i] += row["duration_ms"] or 0
        count[i] += 1
        if price is not None and price.kind == "tokens":
            per_token[i] += token_attempt_cost(price, row)
    accepted = np.array([float(o.accepted) for o in outcomes])
    if cost is None or price is None:
        return TaskCosts(arm, tokens, accepted, None, None, None, None)
    share_runs = count / count.sum() if count.sum() else np.full(n, 1 / max(1, n))
    grading = cost.grading * share_runs
    if price.kind == "tokens":
        return TaskCosts(arm, tokens, accepted, per_token + grading, None, grading, "tokens")
    share_work = wall / wall.sum() if wall.sum() else share_runs
    full = (cost.gpu_cost_at_full_use or 0.0) * share_work
    return TaskCosts(arm, tokens, accepted, cost.model * share_work + grading, full, grading, "gpu")


def _quantiles(values: np.ndarray) -> tuple[float | None, float | None, bool]:
    """The 95% interval of resampled figures (nan where undefined): seed 000's lower-quantile rule."""
    finite = np.isfinite(values)
    undefined = 1 - finite.mean()
    if not finite.any():
        return None, None, True
    lo, hi = np.quantile(np.where(finite, values, np.inf), [0.025, 0.975], method="lower")
    unbounded = bool(undefined > 0.025)
    return (
        (float(lo) if np.isfinite(lo) else None),
        (float(hi) if np.isfinite(hi) and not unbounded else None),
        unbounded,
    )


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


@dataclass(frozen=True)
class CostIntervals:
    qap: dict[str, Interval]
    cpsp: dict[str, Interval]
    ratio: dict[str, Any] | None  # second / first: {"of": "cpsp"|"qap", value, lo, hi, unbounded}
    break_even: Interval | None
    relative: dict[str, Interval]  # second / first per task: tokens, dollars, dollars per solved task
    gap: PairedGap | None  # the acceptance bootstrap these share their task draws with
    n: int


def cost_intervals(arms: list[TaskCosts], *, seed: int, resamples: int) -> CostIntervals | None:
    """QAP and CPSP per arm and, for two arms, the ratio and break-even, over the tasks all the
    given arms decided (the caller passes comparable arms only)."""
    n = arms[0].tokens.size if arms else 0
    if not n or not resamples:
        return None
    columns: list[np.ndarray] = []
    index: dict[tuple[str, str], int] = {}

    def add(arm: str, what: str, values: np.ndarray | None) -> None:
        if values is not None:
            index[(arm, what)] = len(columns)
            columns.append(values.astype(np.float64))

    if len(arms) == 2:
        add("", "d", arms[1].accepted - arms[0].accepted)
    for a in arms:
        add(a.arm, "tokens", a.tokens)
        add(a.arm, "accepted", a.accepted)
        add(a.arm, "dollars", a.dollars)
        add(a.arm, "full", a.full_use)
        add(a.arm, "grading", a.grading)
    sums = resample_sums(np.stack(columns, axis=1), seed=seed, resamples=resamples)

    def col(arm: str, what: str) -> np.ndarray:
        return sums[:, index[(arm, what)]]

    def interval(point_num: float, point_den: float, num: np.ndarray, den: np.ndarray) -> Interval:
        lo, hi, unbounded = _quantiles(_ratio(num, den))
        return Interval(point_num / point_den if point_den else None, lo, hi, unbounded)

    qap, cpsp = {}, {}
    for a in arms:
        qap[a.arm] = interval(a.tokens.sum(), a.accepted.sum(), col(a.arm, "tokens"), col(a.arm, "accepted"))
        if a.dollars is not None:
            cpsp[a.arm] = interval(a.dollars.sum(), a.accepted.sum(), col(a.arm, "dollars"), col(a.arm, "accepted"))
    ratio = break_even = gap = None
    relative: dict[str, Interval] = {}
    if len(arms) == 2:
        first, second = arms
        gap = paired_gap_of(second.accepted - first.accepted, col("", "d"), seed=seed, resamples=resamples)
        of = "cpsp" if first.dollars is not None and second.dollars is not None else "qap"
        what = "dollars" if of == "cpsp" else "tokens"
        per_a = _ratio(col(first.arm, what), col(first.arm, "accepted"))
        per_b = _ratio(col(second.arm, what), col(second.arm, "accepted"))
        lo, hi, unbounded = _quantiles(_ratio(per_b, per_a))
        point_a = (cpsp if of == "cpsp" else qap)[first.arm].value
        point_b = (cpsp if of == "cpsp" else qap)[second.arm].value
        value = point_b / point_a if point_a and point_b is not None else None
        ratio = {
            "of": of,
            "first": first.arm,
            "second": second.arm,
            "value": value,
            "lo": lo,
            "hi": hi,
            "unbounded": unbounded,
        }
        for key, what in (("tokens_per_task", "tokens"), ("dollars_per_task", "dollars")):
            if (first.arm, what) in index and (second.arm, what) in index:
                num, den = getattr(second, what).sum(), getattr(first, what).sum()
                relative[key] = interval(num, den, col(second.arm, what), col(first.arm, what))
        if of == "cpsp":
            relative["dollars_per_solved"] = Interval(value, lo, hi, unbounded)
        kinds = {first.kind, second.kind}
        if kinds == {"gpu", "tokens"}:
            gpu, priced = (first, second) if first.kind == "gpu" else (second, first)
            break_even = _break_even(gpu, priced, col)
    return CostIntervals(qap, cpsp, ratio, break_even, relative, gap, n)


def _break_even(gpu: TaskCosts, priced: TaskCosts, col: Any) -> Interval:
    """u* = cost at full use / (solved × the priced arm's CPSP − grading), per resample (cost.py)."""

    def u(full: Any, solved: Any, p_dollars: Any, p_solved: Any, grading: Any) -> Any:
        room = solved * _ratio(p_dollars, p_solved) - grading
        return _ratio(full, room)

    point = u(
        np.array([gpu.full_use.sum()]),  # type: ignore[union-attr]
        np.array([gpu.accepted.sum()]),
        np.array([priced.dollars.sum()]),  # type: ignore[union-attr]
        np.array([priced.accepted.sum()]),
        np.array([gpu.grading.sum()]),  # type: ignore[union-attr]
    )[0]
    values = u(
        col(gpu.arm, "full"),
        col(gpu.arm, "accepted"),
        col(priced.arm, "dollars"),
        col(priced.arm, "accepted"),
        col(gpu.arm, "grading"),
    )
    lo, hi, unbounded = _quantiles(values)
    return Interval(float(point) if np.isfinite(point) else None, lo, hi, unbounded)


def bracket(ci: dict[str, Any] | None, fmt: Any) -> str:
    """` [lo, hi]` for a table cell ("" without an interval; ∞ for an unbounded side)."""
    if not ci or ci.get("value") is None or ci.get("lo") is None:
        return ""
    hi = "∞" if ci.get("hi") is None else fmt(ci["hi"])
    return f" [{fmt(ci['lo'])}, {hi}]"


LOWER, HIGHER, SAME, UNDETECTED = "lower", "higher", "same", "undetected"


def ratio_reading(ratio: dict[str, Any]) -> str:
    """What a cost ratio's interval (second / first) supports: SAME when it lies within 1 ± the
    run's cost margin (a difference too small to act on, even when the interval excludes 1: a
    0.2% gap in grading CPU is not a cheaper endpoint), LOWER or HIGHER when it excludes 1 and
    leaves the margin, else UNDETECTED."""
    lo, hi = ratio.get("lo"), ratio.get("hi")
    if ratio.get("value") is None or lo is None or (hi is None and not ratio.get("unbounded")):
        return UNDETECTED
    margin = ratio.get("margin", DEFAULT_COST_MARGIN)
    if hi is not None and 1 - margin <= lo and hi <= 1 + margin:
        return SAME
    if hi is not None and hi < 1:
        return LOWER
    return HIGHER if lo > 1 else UNDETECTED


def margin_text(ratio: dict[str, Any]) -> str:
    return f"±{ratio.get('margin', DEFAULT_COST_MARGIN) * 100:g}%"


def ratio_line(ratio: dict[str, Any] | None, n: int, resamples: int, seed: int) -> str | None:
    if not ratio:
        return None
    what = "CPSP (cost per solved task)" if ratio["of"] == "cpsp" else "QAP (tokens per accepted patch)"
    if ratio["value"] is None:
        return f"{what} ratio {ratio['second']} / {ratio['first']}: — (a side solved nothing)"
    hi = "∞" if ratio["hi"] is None else f"{ratio['hi']:.2f}"
    lo = "—" if ratio["lo"] is None else f"{ratio['lo']:.2f}"
    reading = ratio_reading(ratio)
    read = {
        SAME: f"the same cost within {margin_text(ratio)} (cost_margin)",
        LOWER: f"{ratio['second']} cheaper beyond the {margin_text(ratio)} margin",
        HIGHER: f"{ratio['second']} dearer beyond the {margin_text(ratio)} margin",
    }.get(reading, f"no detectable cost difference (margin {margin_text(ratio)})")
    return (
        f"{what} ratio {ratio['second']} / {ratio['first']}: {ratio['value']:.2f}, 95% CI [{lo}, {hi}] "
        f"(paired bootstrap over n={n} tasks, the acceptance bootstrap's {resamples:,} draws, seed {seed}): {read}"
    )
