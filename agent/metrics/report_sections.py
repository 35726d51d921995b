"""The parts of a run's report section computed from what the report read (agent/metrics/report.py):
break-even and the paired comparisons as JSON, the practical reads, the sequential decision,
strategies, the sandbox and where grades ran, each arm graded by visible and hidden tests.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict
from datetime import datetime
from itertools import combinations
from typing import Any

from agent.config.model import DEFAULT_COST_MARGIN
from agent.ledger.store import Row
from agent.metrics.arm import ArmMetrics
from agent.metrics.compare import Comparison
from agent.metrics.cost import ArmCost, break_even_utilization
from agent.metrics.cost_ci import CostIntervals
from agent.metrics.errors import PriceError
from agent.metrics.grader_view import gap_under_graders, grader_pair, visible_accepted
from agent.metrics.outcome import NOT_RUN, TaskOutcome
from agent.metrics.price import parse_price
from agent.metrics.read import practical_read
from agent.metrics.strategy import strategy_figures
from agent.states import ArmState


def _break_even(costs: dict[str, ArmCost], first: str, second: str, censored: set[str]) -> dict[str, Any] | None:
    a, b = costs.get(first), costs.get(second)
    if a is None or b is None or {a.kind, b.kind} != {"gpu", "tokens"}:
        return None
    gpu, priced = (a, b) if a.kind == "gpu" else (b, a)
    return {
        "self_hosted": gpu.arm,
        "priced": priced.arm,
        "utilization": break_even_utilization(gpu, priced),
        "current_utilization": gpu.utilization,
        "utilization_source": gpu.utilization_source,
        "censored": sorted({first, second} & censored),
    }


def practical_reads(
    metrics: list[ArmMetrics],
    costs: dict[str, ArmCost],
    comparisons: list[Comparison],
    same: bool,
    intervals: CostIntervals | None,
) -> list[str]:
    if len(metrics) != 2:
        return [practical_read(m, costs.get(m.name)) for m in metrics]
    a, b = metrics
    comparison = comparisons[0] if comparisons else None
    ratio = intervals.ratio if intervals is not None else None
    return [
        practical_read(a, costs.get(a.name), b, costs.get(b.name), comparison, same_accounting=same, ratio=ratio),
        practical_read(b, costs.get(b.name), a, costs.get(a.name), comparison, same_accounting=same, ratio=ratio),
    ]


def price_table(arm_row: dict[str, Any]) -> dict[str, Any] | None:
    try:
        table = json.loads(arm_row.get("price_json") or "null")
    except json.JSONDecodeError:
        return None
    return table if isinstance(table, dict) and table else None


def price_or_none(arm_row: dict[str, Any]) -> Any:
    try:
        return parse_price(arm_row["name"], arm_row.get("price_json"))
    except PriceError:
        return None


def grammar_gap_counts(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per arm: attempts with a grammar gap and the files in them (verifiers/grammar_gaps.py)."""
    counts: dict[str, dict[str, int]] = {}
    for row in rows:
        files = {f["file"] for f in json.loads(row["grammar_gaps_json"] or "[]")}
        if files:
            arm = counts.setdefault(row["arm"], {"attempts": 0, "files": 0})
            arm["attempts"] += 1
            arm["files"] += len(files)
    return counts


def by_arm(rows: Iterable[Row]) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        out[row["arm"]].append(row)
    return out


def relative_costs(intervals: CostIntervals | None, names: list[str]) -> dict[str, Any] | None:
    """The second arm's cost per task (and per solved task) relative to the first's, with intervals."""
    if intervals is None or not intervals.relative or len(names) != 2:
        return None
    return {"first": names[0], "second": names[1], **{k: v.as_json() for k, v in intervals.relative.items()}}


def ci_json(intervals: CostIntervals | None, what: str, arm: str) -> dict[str, Any] | None:
    table = getattr(intervals, what, None) if intervals is not None else None
    return table[arm].as_json() if table and arm in table else None


def comparison_json(
    c: Comparison, costs: dict[str, ArmCost], censored: set[str], same: bool, intervals: CostIntervals | None
) -> dict[str, Any]:
    even = _break_even(costs, c.first, c.second, censored)
    if even is not None and intervals is not None and intervals.break_even is not None:
        even["ci"] = intervals.break_even.as_json()
    ratio = intervals.ratio if intervals is not None else None
    return asdict(c) | {"break_even": even, "qap_same_accounting": same, "cost_ratio": ratio}


def grader_view(
    metrics: list[ArmMetrics], outcomes: dict[str, list[TaskOutcome]], attempts: dict[str, list[Row]]
) -> dict[str, Any]:
    """Seed 001's paired drop: each arm graded by the visible tests alone and by the hidden ones."""
    names = [m.name for m in metrics]
    visible = {n: visible_accepted([o.task_id for o in outcomes[n]], attempts[n]) for n in names}
    gaps = [
        gap_under_graders(a, outcomes[a], visible[a], b, outcomes[b], visible[b]) for a, b in combinations(names, 2)
    ]
    return {
        "arms": [grader_pair(n, outcomes[n], visible[n]).as_json() for n in names],
        "gaps": [g.as_json() for g in gaps if g is not None],
    }


def _run_config(run: dict[str, Any]) -> dict[str, Any]:
    """The [run] table the run was started with (as recorded), or {} if it cannot be read."""
    import tomllib

    try:
        table = tomllib.loads(json.loads(run.get("config_json") or "{}").get("toml") or "").get("run", {})
        return table if isinstance(table, dict) else {}
    except (ValueError, AttributeError, tomllib.TOMLDecodeError):
        return {}


def cost_margin(run: dict[str, Any]) -> float:
    """The run's recorded [run] cost_margin (the default when absent or not a share in (0, 0.5])."""
    value = _run_config(run).get("cost_margin", DEFAULT_COST_MARGIN)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 0.5
    return float(value) if ok else DEFAULT_COST_MARGIN


def decision_section(
    run: dict[str, Any], arm_rows: list[dict[str, Any]], outcomes: dict[str, list[TaskOutcome]]
) -> dict[str, Any] | None:
    """The always-valid sequential decision over the run's task order, with whether
    the run stopped on it; None unless the run has exactly two arms."""
    from agent.metrics.decision import run_decision

    if len(arm_rows) != 2:
        return None
    config = _run_config(run)
    alpha = config.get("decision_alpha", 0.05)
    first, second = sorted(outcomes, key=[a["name"] for a in arm_rows].index)
    d = run_decision(first, outcomes[first], second, outcomes[second], alpha=alpha)
    not_run = {name: sum(o.failure_class == NOT_RUN for o in outcomes[name]) for name in (first, second)}
    stopped = any(a.get("state") == ArmState.DECIDED for a in arm_rows)
    return d.as_json() | {
        "first": first,
        "second": second,
        "line": d.line,
        "stop_when_decided": bool(config.get("stop_when_decided", False)),
        "stopped_early": stopped,
        "not_run": not_run,
    }


def strategy_section(
    arm_rows: list[dict[str, Any]],
    subs: dict[str, list[Row]],
    stages: dict[str, dict[str, int]],
    attempts: dict[str, list[Row]],
    outcomes: dict[str, list[TaskOutcome]],
    costs: dict[str, ArmCost],
) -> list[dict[str, Any]] | None:
    """Coverage, conversion and where candidates were lost, per arm; None unless an
    arm of the run has a strategy."""
    if not any(a.get("strategy") for a in arm_rows):
        return None
    return [
        asdict(
            strategy_figures(
                a,
                attempts[a["name"]],
                subs[a["name"]],
                outcomes[a["name"]],
                stages.get(a["name"], {}),
                costs[a["name"]].total if a["name"] in costs else None,
            )
        )
        for a in arm_rows
    ]


def sandbox_summary(run: dict[str, Any], sandboxes: list[dict[str, Any]], placements: dict[str, Any]) -> dict[str, Any]:
    """Which sandbox the run's grades ran in; `full` is False when any ran without bubblewrap."""
    counts = {r["sandbox"] or "unrecorded": r["n"] for r in sandboxes}
    about = json.loads(run.get("isolation_json") or "{}")
    declared = run.get("isolation_sandbox") or "unrecorded"
    return {
        "declared": declared,
        "missing": about.get("missing"),
        "grades": counts,
        "full": declared == "bwrap" and set(counts) <= {"bwrap"},
        "placement": placement_summary(placements),
    }


def _time_or_none(text: str | None) -> datetime | None:
    """A ledger time, or None when missing or unreadable (a damaged file: no throughput, no crash)."""
    try:
        return datetime.fromisoformat(text) if text else None
    except (TypeError, ValueError):
        return None


def placement_summary(placed: dict[str, Any]) -> dict[str, Any]:
    """Where the run's hidden tests ran (executor, nodes), how long they ran and waited for a
    worker, how many were retried after a lost worker, and the grading throughput, from
    report_reads.grade_placements."""
    n = placed["n"]
    if not n:
        return {"n": 0}
    runs, waits = sorted(placed["runs"]), sorted(placed["waits"])
    # the ledger writes every time in one format (store.utc_now), so text order is time order
    first, last = _time_or_none(placed["first_utc"]), _time_or_none(placed["last_utc"])
    span_min = (last - first).total_seconds() / 60 if first and last else 0.0
    return {
        "n": n,
        "executors": sorted(placed["executors"]),
        "nodes": sorted(placed["nodes"]),
        "run_ms_median": runs[len(runs) // 2],
        "queue_ms_median": waits[len(waits) // 2],
        "queue_ms_p90": waits[min(len(waits) - 1, int(0.9 * len(waits)))],
        "retried": placed["retried"],
        "per_minute": (n - 1) / span_min if span_min > 0 else None,
    }
