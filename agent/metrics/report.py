"""`build_report`: read runs from the ledger and assemble seed 002's decision table, the
paired comparison (seed 000) and, for several runs of one manifest, the replicates (seed 003)
into one JSON-ready dict. `render_report` (render.py) turns it into text, markdown or JSON.
"""
from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import asdict
from itertools import combinations

from agent import QuotabenchError
from agent.ledger import Ledger
from agent.metrics.arm import ArmMetrics, TaskOutcome, arm_metrics
from agent.metrics.compare import Comparison, compare_arms
from agent.metrics.cost import ArmCost, arm_cost, break_even_utilization
from agent.metrics.errors import PriceError, ReportError
from agent.metrics.read import practical_read
from agent.metrics.render import render_report
from agent.metrics.replicate_stats import replicate_statistics
from agent.metrics.replicates import check_same_manifest, replicate_summary

__all__ = ["DEFAULT_SEED", "ReportError", "build_report", "render_report"]

REPORT_SCHEMA = "quotabench.report/1"
DEFAULT_SEED = 20261130
# Only the columns the metrics read: `a.*` (diffs included) took half the report's time at 5,000 attempts.
ATTEMPT_COLUMNS = ("arm", "task_id", "attempt_no", "status", "end_reason", "verdict", "failure_class",
                   "accepted", "prompt_tokens", "completion_tokens", "total_tokens", "calls",
                   "transport_retries", "malformed_tool_calls", "duration_ms", "visible_passed", "ended_utc")


def _resolve(ledger: Ledger, run_ids: list[str]) -> list[str]:
    try:
        ids = [ledger.resolve_run_id(r) for r in run_ids] if run_ids else [ledger.resolve_run_id(None)]
    except QuotabenchError as exc:
        raise ReportError(str(exc)) from None
    return list(dict.fromkeys(ids))


def _break_even(costs: dict[str, ArmCost], first: str, second: str, censored: set[str]) -> dict | None:
    a, b = costs.get(first), costs.get(second)
    if a is None or b is None or {a.kind, b.kind} != {"gpu", "tokens"}:
        return None
    gpu, priced = (a, b) if a.kind == "gpu" else (b, a)
    return {"self_hosted": gpu.arm, "priced": priced.arm,
            "utilization": break_even_utilization(gpu, priced),
            "current_utilization": gpu.utilization, "utilization_source": gpu.utilization_source,
            "censored": sorted({first, second} & censored)}


def _reads(metrics: list[ArmMetrics], costs: dict[str, ArmCost], comparisons: list[Comparison]) -> list[str]:
    if len(metrics) != 2:
        return [practical_read(m, costs.get(m.name)) for m in metrics]
    a, b = metrics
    comparison = comparisons[0] if comparisons else None
    return [practical_read(a, costs.get(a.name), b, costs.get(b.name), comparison),
            practical_read(b, costs.get(b.name), a, costs.get(a.name), comparison)]


def _run_section(ledger: Ledger, run: dict, tasks: list[dict], *, with_cost: bool, seed: int,
                 resamples: int) -> tuple[dict, dict[str, list[TaskOutcome]]]:
    run_id = run["id"]
    arm_rows = ledger.arms(run_id)
    if not arm_rows:
        raise ReportError(f"run {run_id}: has no arms in the ledger — was it started? "
                          "list runs with `quotabench report --list`")
    by_arm: dict[str, list[dict]] = defaultdict(list)
    sql = f"select {', '.join(ATTEMPT_COLUMNS)} from attempts where run_id = ? order by arm, task_id, attempt_no"
    for row in ledger.query(sql, [run_id]):
        by_arm[row["arm"]].append(row)
    metrics, outcomes, costs = [], {}, {}
    for arm_row in arm_rows:
        name = arm_row["name"]
        m, outcomes[name] = arm_metrics(arm_row, tasks, by_arm[name])
        metrics.append(m)
        if with_cost:
            try:
                costs[name] = arm_cost(arm_row, run, by_arm[name], m.accepted)
            except PriceError as exc:
                raise PriceError(f"run {run_id}: {exc}") from None
    comparisons, comparison_dicts = [], []
    censored = {m.name for m in metrics if m.censored}
    for first, second in combinations([m.name for m in metrics], 2):
        c = compare_arms(first, outcomes[first], second, outcomes[second], seed=seed, resamples=resamples)
        if c is not None:
            comparisons.append(c)
            comparison_dicts.append(asdict(c) | {"break_even": _break_even(costs, first, second, censored)})
    reads = _reads(metrics, costs, comparisons)
    section = {
        "run": {k: run.get(k) for k in ("id", "created_utc", "finished_utc", "status",
                                        "session_id", "manifest_sha256")},
        "sandbox": sandbox_summary(ledger, run),
        "n_tasks": len(tasks),
        "arms": [{"metrics": asdict(m), "cost": asdict(costs[m.name]) if m.name in costs else None,
                  "read": read} for m, read in zip(metrics, reads)],
        "comparisons": comparison_dicts,
    }
    return section, outcomes


def sandbox_summary(ledger: Ledger, run: dict) -> dict:
    """Which sandbox the run's grades ran in; `full` is False when any ran without bubblewrap."""
    counts = {r["sandbox"] or "unrecorded": r["n"] for r in ledger.query(
        "select g.sandbox, count(*) as n from grades g join attempts a on a.id = g.attempt_id "
        "where a.run_id = ? group by g.sandbox", [run["id"]])}
    about = json.loads(run.get("isolation_json") or "{}")
    declared = run.get("isolation_sandbox") or "unrecorded"
    return {"declared": declared, "missing": about.get("missing"), "grades": counts,
            "full": declared == "bwrap" and set(counts) <= {"bwrap"}}


def build_report(ledger: Ledger, run_ids: list[str], *, with_cost: bool = True,
                 bootstrap_seed: int = DEFAULT_SEED, resamples: int = 10_000) -> dict:
    """The report over `run_ids` (prefixes accepted; none means the newest run).

    Several runs must share one manifest hash (ReportError naming both hashes and what
    differs); they are then also summarized as replicates. With `with_cost`, an arm without
    a price raises PriceError naming it; without, cost fields are None ("no price").
    """
    ids = _resolve(ledger, run_ids)
    runs = [ledger.run(i) for i in ids]
    tasks_by_run = {i: ledger.tasks(i) for i in ids}
    if len(runs) > 1:
        check_same_manifest(runs, tasks_by_run)
    sections, outcomes = [], {}
    for run in runs:
        section, outcomes[run["id"]] = _run_section(ledger, run, tasks_by_run[run["id"]], with_cost=with_cost,
                                                    seed=bootstrap_seed, resamples=resamples)
        sections.append(section)
    return {
        "schema": REPORT_SCHEMA,
        "with_cost": with_cost,
        "bootstrap": {"seed": bootstrap_seed, "resamples": resamples, "unit": "task"},
        "runs": sections,
        "replicates": replicate_summary(runs, outcomes) if len(runs) > 1 else None,
        "replicate_statistics": (replicate_statistics(ledger, runs, outcomes, seed=bootstrap_seed, resamples=resamples)
                                 if len(runs) > 1 else None),
    }
