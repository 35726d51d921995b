"""Per-arm metrics of one run: seed 002's acceptance, QAP, retry tax, censoring, plus spend
and the failure taxonomy. Pure functions over ledger rows (dicts), no database access.
"""
from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np

from agent.metrics.stats import wilson

FAILURE_CLASSES = ("accepted", "reasoning", "mechanics", "timeout", "environment",
                   "harness_error", "censored", "aborted")


@dataclass(frozen=True)
class TaskOutcome:
    """What one arm did with one task: accepted or not, on which attempt, and why not."""
    task_id: str
    accepted: bool
    accepted_on: int | None
    failure_class: str
    censored: bool
    attempts: int
    tokens: int


@dataclass(frozen=True)
class Spread:
    """Mean, median and 90th percentile of a per-attempt quantity, with its n."""
    mean: float | None
    median: float | None
    p90: float | None
    n: int


@dataclass(frozen=True)
class ArmMetrics:
    """Seed 002's per-arm row, and the spend behind it. Every rate carries its n."""
    name: str
    n_tasks: int
    accepted: int
    acceptance: float | None
    acceptance_ci: tuple[float, float]
    total_tokens: int
    qap: float | None
    wasted_tokens: int
    retry_tax: float | None
    first_try: int
    first_try_share: float | None
    censored: bool
    cap_hit: bool
    cap_tokens: int | None
    unfinished: list[str]
    n_attempts: int
    tokens_per_attempt: Spread
    wall_ms: int
    busy_ms: int | None
    calls: int
    transport_retries: int
    malformed_tool_calls: int
    taxonomy: dict[str, int] = field(default_factory=dict)
    visible_pass_n: int = 0
    visible_pass_hidden_fail: int = 0
    visible_flatter_rate: float | None = None


def unfinished_of(arm_row: dict) -> set[str]:
    """Task ids the engine recorded as never finished for this arm (arms.unfinished_json)."""
    raw = arm_row.get("unfinished_json")
    return set(json.loads(raw)) if raw else set()


def task_outcomes(tasks: list[dict], attempts: list[dict], unfinished: set[str]) -> list[TaskOutcome]:
    """One outcome per task of the run, in task order, for the arm whose `attempts` these are.

    Accepted if any attempt has accepted=1; otherwise censored if the task is unfinished, has
    no attempts, or its last attempt is still unclassified; otherwise the failure class of
    its last attempt (issue 5's ledger semantics).
    """
    by_task: dict[str, list[dict]] = defaultdict(list)
    for row in attempts:
        by_task[row["task_id"]].append(row)
    outcomes = []
    for task in tasks:
        rows = sorted(by_task.get(task["task_id"], []), key=lambda r: r["attempt_no"])
        hit = next((r for r in rows if r["accepted"]), None)
        tokens = sum(r["total_tokens"] or 0 for r in rows)
        last_class = rows[-1]["failure_class"] if rows else None
        censored = hit is None and (task["task_id"] in unfinished or last_class in (None, "censored"))
        if hit is not None:
            cls = "accepted"
        elif censored:
            cls = "censored"
        else:
            cls = last_class
        outcomes.append(TaskOutcome(
            task_id=task["task_id"], accepted=hit is not None,
            accepted_on=hit["attempt_no"] if hit else None, failure_class=cls,
            censored=censored, attempts=len(rows), tokens=tokens))
    return outcomes


def spread(values: list[float]) -> Spread:
    """Mean, median and p90 (linear interpolation) of values; all None when empty."""
    if not values:
        return Spread(None, None, None, 0)
    arr = np.asarray(values, dtype=np.float64)
    return Spread(float(arr.mean()), float(np.median(arr)), float(np.percentile(arr, 90)), arr.size)


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def arm_metrics(arm_row: dict, tasks: list[dict], attempts: list[dict]) -> tuple[ArmMetrics, list[TaskOutcome]]:
    """Metrics of one arm (arms row, the run's tasks, this arm's attempts), seed 002.

    acceptance = accepted tasks / tasks, Wilson 95%; QAP = total tokens / accepted tasks;
    retry tax = tokens of attempts that did not produce the accepted patch / total tokens
    (an attempt's total_tokens already holds its transport retries); first-try share =
    tasks accepted on attempt 1 / accepted tasks. A censored arm is flagged not comparable.
    """
    outcomes = task_outcomes(tasks, attempts, unfinished_of(arm_row))
    accepted = sum(o.accepted for o in outcomes)
    n_tasks = len(outcomes)
    total = sum(r["total_tokens"] or 0 for r in attempts)
    wasted = sum(r["total_tokens"] or 0 for r in attempts if not r["accepted"])
    first = sum(o.accepted_on == 1 for o in outcomes)
    unfinished = [o.task_id for o in outcomes if o.censored]
    visible = [r for r in attempts if r["visible_passed"] == 1 and r["verdict"] is not None]
    flattered = sum(r["verdict"] != "pass" for r in visible)
    counts = Counter(o.failure_class for o in outcomes)
    taxonomy = {cls: counts.get(cls, 0) for cls in FAILURE_CLASSES}
    taxonomy.update({cls: n for cls, n in counts.items() if cls not in taxonomy})
    metrics = ArmMetrics(
        name=arm_row["name"], n_tasks=n_tasks, accepted=accepted,
        acceptance=_ratio(accepted, n_tasks), acceptance_ci=wilson(accepted, n_tasks),
        total_tokens=total, qap=_ratio(total, accepted), wasted_tokens=wasted,
        retry_tax=_ratio(wasted, total), first_try=first, first_try_share=_ratio(first, accepted),
        censored=bool(arm_row.get("censored")) or bool(unfinished), cap_hit=bool(arm_row.get("censored")),
        cap_tokens=arm_row.get("cap_tokens"), unfinished=unfinished,
        n_attempts=len(attempts),
        tokens_per_attempt=spread([r["total_tokens"] or 0 for r in attempts]),
        wall_ms=sum(r["duration_ms"] or 0 for r in attempts), busy_ms=arm_row.get("busy_ms"),
        calls=sum(r["calls"] or 0 for r in attempts),
        transport_retries=sum(r["transport_retries"] or 0 for r in attempts),
        malformed_tool_calls=sum(r["malformed_tool_calls"] or 0 for r in attempts),
        taxonomy=taxonomy, visible_pass_n=len(visible), visible_pass_hidden_fail=flattered,
        visible_flatter_rate=_ratio(flattered, len(visible)))
    return metrics, outcomes
