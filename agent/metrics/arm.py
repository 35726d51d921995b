"""Per-arm metrics of one run: acceptance, QAP, retry tax and censoring, plus spend and the
failure taxonomy. Pure functions over ledger rows (dicts), no database access; the task
outcomes and the figures come from outcome.py, the one definition the live view and the
browser use too.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from agent.classify import CLASSES, is_lost
from agent.ledger.store import Row
from agent.metrics.outcome import ArmFigures, AttemptRecord, TaskOutcome, arm_figures, outcomes_of
from agent.metrics.stats import median_of_sorted
from agent.states import ArmState


@dataclass(frozen=True)
class Spread:
    """Mean, median and 90th percentile of a per-attempt quantity, with its n."""

    mean: float | None
    median: float | None
    p90: float | None
    n: int


@dataclass(frozen=True)
class ArmMetrics:
    """An arm's figures (outcome.py's ArmFigures: acceptance, QAP, retry tax, censoring) and the
    spend behind them. Every rate carries its n.

    `censored` means "not comparable" (an unfinished task or the cap hit): acceptance is then
    over the decided tasks only, and qap, retry_tax and first_try_share are None. Attempts the
    run cut off are in none of the figures or n_attempts: they are lost_attempts / lost_tokens.
    """

    figures: ArmFigures
    cap_tokens: int | None
    state: str
    max_attempts: int | None
    n_attempts: int
    tokens_per_attempt: Spread
    wall_ms: int
    busy_ms: int | None
    busy_source: str | None  # "calls" (union of their intervals) | "engine" (arms.busy_ms) | None
    calls: int
    transport_retries: int
    malformed_tool_calls: int
    taxonomy: dict[str, int] = field(default_factory=dict)
    visible_pass_n: int = 0
    visible_pass_hidden_fail: int = 0
    visible_flatter_rate: float | None = None

    @property
    def name(self) -> str:
        return self.figures.name

    @property
    def censored(self) -> bool:
        return not self.figures.comparable

    def as_json(self) -> dict[str, Any]:
        """The report's per-arm `metrics` block, in its key order."""
        f = self.figures
        return {
            "name": f.name,
            "n_tasks": f.n_tasks,
            "decided": f.decided,
            "accepted": f.accepted,
            "acceptance": f.acceptance,
            "acceptance_ci": f.acceptance_ci,
            "comparable": f.comparable,
            "not_comparable": f.not_comparable,
            "total_tokens": f.total_tokens,
            "qap": f.qap,
            "wasted_tokens": f.wasted_tokens,
            "retry_tax": f.retry_tax,
            "first_try": f.first_try,
            "first_try_share": f.first_try_share,
            "censored": self.censored,
            "cap_hit": f.cap_hit,
            "cap_tokens": self.cap_tokens,
            "unfinished": list(f.unfinished),
            "unserved": list(f.unserved),  # the endpoint failed them (harness_error): left out like unfinished
            "state": self.state,
            "max_attempts": self.max_attempts,
            "n_attempts": self.n_attempts,
            "tokens_per_attempt": asdict(self.tokens_per_attempt),
            "wall_ms": self.wall_ms,
            "busy_ms": self.busy_ms,
            "busy_source": self.busy_source,
            "calls": self.calls,
            "transport_retries": self.transport_retries,
            "malformed_tool_calls": self.malformed_tool_calls,
            "taxonomy": dict(self.taxonomy),
            "visible_pass_n": self.visible_pass_n,
            "visible_pass_hidden_fail": self.visible_pass_hidden_fail,
            "visible_flatter_rate": self.visible_flatter_rate,
            "lost_attempts": f.lost_attempts,  # cut off by a kill, an abort, a stop or the cap: in no figure
            "lost_tokens": f.lost_tokens,  # their tokens: spent and charged against the cap (lost spend)
        }


def unfinished_of(arm_row: dict[str, Any]) -> set[str]:
    """Task ids the engine recorded as never finished for this arm (arms.unfinished_json)."""
    raw = arm_row.get("unfinished_json")
    return set(json.loads(raw)) if raw else set()


def records_of(attempts: Sequence[Row | dict[str, Any]]) -> list[AttemptRecord]:
    """Ledger attempt rows as the outcome function reads them."""
    return [
        AttemptRecord(
            r["task_id"],
            r["attempt_no"],
            r["failure_class"],
            bool(r["accepted"]),
            r["total_tokens"] or 0,
            r.get("stage") or "attempt",
            None if r.get("submitted") is None else bool(r.get("submitted")),
        )
        for r in attempts
    ]


def task_outcomes(
    tasks: list[dict[str, Any]],
    attempts: Sequence[Row | dict[str, Any]],
    unfinished: set[str],
    *,
    max_attempts: int | None = None,
    arm_state: str = ArmState.FINISHED,
    cap_hit: bool = False,
) -> list[TaskOutcome]:
    """One outcome per task of the run, in task order, for the arm whose `attempts` these are."""
    return outcomes_of(
        [t["task_id"] for t in tasks],
        records_of(attempts),
        max_attempts=max_attempts,
        arm_state=arm_state,
        unfinished=unfinished,
        cap_hit=cap_hit,
    )


def spread(values: list[float]) -> Spread:
    """Mean, median and p90 (linear interpolation) of values; all None when empty."""
    if not values:
        return Spread(None, None, None, 0)
    arr = np.sort(np.asarray(values, dtype=np.float64))
    return Spread(float(arr.mean()), median_of_sorted(arr), float(np.percentile(arr, 90)), arr.size)


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def arm_metrics(
    arm_row: dict[str, Any],
    tasks: list[dict[str, Any]],
    attempts: Sequence[Row | dict[str, Any]],
    *,
    busy_ms: int | None = None,
) -> tuple[ArmMetrics, list[TaskOutcome]]:
    """Metrics of one arm (arms row, the run's tasks, this arm's attempts), seed 002.

    The figures are outcome.arm_figures'; `busy_ms` is the endpoint's busy time as measured
    from the calls (the union of their intervals), else the engine's arms.busy_ms.
    """
    cap_hit = bool(arm_row.get("censored"))
    state = arm_row.get("state") or ArmState.RUNNING
    records = records_of(attempts)
    outcomes = outcomes_of(
        [t["task_id"] for t in tasks],
        records,
        max_attempts=arm_row.get("max_attempts"),
        arm_state=state,
        unfinished=unfinished_of(arm_row),
        cap_hit=cap_hit,
    )
    f = arm_figures(arm_row["name"], outcomes, records, arm_state=state, cap_hit=cap_hit)
    model = [r for r in attempts if not is_lost(r["failure_class"])]  # the model's attempts
    visible = [r for r in attempts if r["visible_passed"] == 1 and r["verdict"] is not None]
    flattered = sum(r["verdict"] != "pass" for r in visible)
    counts = Counter(o.failure_class for o in outcomes)
    taxonomy: dict[str, int] = {str(cls): counts.get(cls, 0) for cls in CLASSES}
    taxonomy.update({cls: n for cls, n in counts.items() if cls not in taxonomy})
    metrics = ArmMetrics(
        figures=f,
        cap_tokens=arm_row.get("cap_tokens"),
        state=state,
        max_attempts=arm_row.get("max_attempts"),
        n_attempts=len(model),
        tokens_per_attempt=spread([r["total_tokens"] or 0 for r in model]),
        wall_ms=sum(r["duration_ms"] or 0 for r in attempts),
        busy_ms=busy_ms if busy_ms is not None else arm_row.get("busy_ms"),
        busy_source="calls" if busy_ms is not None else "engine" if arm_row.get("busy_ms") is not None else None,
        calls=sum(r["calls"] or 0 for r in attempts),
        transport_retries=sum(r["transport_retries"] or 0 for r in attempts),
        malformed_tool_calls=sum(r["malformed_tool_calls"] or 0 for r in attempts),
        taxonomy=taxonomy,
        visible_pass_n=len(visible),
        visible_pass_hidden_fail=flattered,
        visible_flatter_rate=_ratio(flattered, len(visible)),
    )
    return metrics, outcomes
