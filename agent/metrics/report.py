"""`build_report`: read runs from the ledger (agent/ledger/report_reads.py), then assemble the per-arm decision table (acceptance,
quota per accepted patch, retry tax, censoring), the paired comparison and, for several runs of
one manifest, the replicates into one JSON-ready dict. `render_report` (render.py) turns it into text, markdown or JSON.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, replace
from itertools import combinations
from typing import Any

from agent import QuotabenchError
from agent.classify import is_lost
from agent.ledger import Ledger
from agent.ledger import report_reads as reads
from agent.ledger.liveness import run_state
from agent.ledger.store import Row
from agent.metrics.arm import ArmMetrics, arm_metrics
from agent.metrics.billing import Spend, spend_summary, spends_of
from agent.metrics.compare import ALPHA, MIN_DISCORDANT, RULE, compare_arms
from agent.metrics.cost import ArmCost, ArmUse, run_costs
from agent.metrics.cost_ci import cost_intervals, task_costs
from agent.metrics.errors import PriceError, ReportError
from agent.metrics.integrity import control_ids, integrity_section
from agent.metrics.kinds import broken_tasks, by_kind
from agent.metrics.mutation import mutation_section
from agent.metrics.outcome import TaskOutcome
from agent.metrics.read import with_integrity
from agent.metrics.render import render_report
from agent.metrics.repeats import repeated_retries
from agent.metrics.replicate_stats import replicate_statistics
from agent.metrics.replicates import check_same_manifest, replicate_summary
from agent.metrics.report_sections import (
    by_arm,
    ci_json,
    comparison_json,
    cost_margin,
    decision_section,
    grader_view,
    grammar_gap_counts,
    practical_reads,
    price_or_none,
    price_table,
    relative_costs,
    sandbox_summary,
    strategy_section,
)
from agent.metrics.setup import budget_note, cap_note, run_setup, setup_differences
from agent.metrics.strategy import stage_tokens_of
from agent.metrics.usage import Spans, accounting, call_accounting, grading, same_accounting, spans_by_arm, union_ms

__all__ = [
    "DEFAULT_GRADING_CPU_HOUR",
    "DEFAULT_SEED",
    "ReportError",
    "build_report",
    "render_report",
]

REPORT_SCHEMA = "quotabench.report/2"
NO_COST_ASKED = "asked for with --no-cost"
DEFAULT_SEED = 20261130
# $ per CPU-hour of grading (a general-purpose cloud vCPU-hour is a few cents); stated in every
# report and set with `quotabench report --grading-cpu-hour`.
DEFAULT_GRADING_CPU_HOUR = 0.05


def _resolve(ledger: Ledger, run_ids: list[str]) -> list[str]:
    try:
        ids = [ledger.resolve_run_id(r) for r in run_ids] if run_ids else [ledger.resolve_run_id(None)]
    except QuotabenchError as exc:
        raise ReportError(str(exc)) from None
    return list(dict.fromkeys(ids))


def _run_row(ledger: Ledger, run_id: str) -> dict[str, Any]:
    run = ledger.run(run_id)
    if run is None:  # resolved a moment ago: only a concurrent delete gets here
        raise ReportError(f"ledger {ledger.path}: run {run_id} vanished while the report read it — run it again")
    return run


def _run_section(
    ledger: Ledger,
    run: dict[str, Any],
    tasks: list[dict[str, Any]],
    *,
    with_cost: bool,
    seed: int,
    resamples: int,
    grading_cpu_hour: float,
) -> tuple[dict[str, Any], dict[str, list[TaskOutcome]], dict[str, str]]:
    run_id = run["id"]
    arm_rows = ledger.arms(run_id)
    if not arm_rows:
        raise ReportError(
            f"run {run_id}: has no arms in the ledger — was it started? list runs with `quotabench report --list`"
        )
    all_tasks = tasks
    controls = control_ids(tasks)
    tasks = [t for t in tasks if t["task_id"] not in controls]  # impossible controls: reported apart
    # -- what the section reads, once (agent/ledger/report_reads.py), then computes from
    attempts = by_arm(r for r in reads.run_attempts(ledger, run_id) if r["task_id"] not in controls)
    spans = spans_by_arm(reads.call_spans(ledger, run_id))  # 400k calls at 100k attempts: never held as rows
    spend_rows = reads.spend_sums(ledger, run_id)  # one pass over the calls: tokens, caching, reported costs
    spend, model_spend = spends_of(spend_rows)
    usage_by_arm = call_accounting(spend_rows)
    grade_sums = reads.grade_sums(ledger, run_id)
    gaps = grammar_gap_counts(reads.grammar_gaps(ledger, run_id))
    busy = {a["name"]: union_ms(spans[a["name"]]) if a["name"] in spans else None for a in arm_rows}
    servers: dict[str, list[str]] = defaultdict(list)
    for a in arm_rows:
        if a.get("endpoint_url"):
            servers[a["endpoint_url"]].append(a["name"])
    machine_busy = {
        url: union_ms(Spans.join(spans[n] for n in names if n in spans))
        for url, names in servers.items()
        if any(n in spans for n in names)
    }
    usage = {a["name"]: usage_by_arm.get(a["name"]) or accounting({}) for a in arm_rows}
    graded = {a["name"]: grading(*grade_sums.get(a["name"], (0, 0)), grading_cpu_hour) for a in arm_rows}
    # The model's attempts: the costs leave out those the run cut off, as QAP does (lost spend)
    model_attempts: dict[str, list[Row]] = defaultdict(list)
    for name, of_arm in attempts.items():
        model_attempts[name] = [r for r in of_arm if not is_lost(r["failure_class"])]
    metrics: list[ArmMetrics] = []
    outcomes: dict[str, list[TaskOutcome]] = {}
    for arm_row in arm_rows:
        name = arm_row["name"]
        m, outcomes[name] = arm_metrics(arm_row, tasks, attempts[name], busy_ms=busy[name])
        metrics.append(m)
    costs: dict[str, ArmCost] = {}
    if with_cost:
        uses = [
            ArmUse(
                a,
                model_attempts[m.name],
                None if m.censored else m.figures.accepted,
                busy[m.name],
                graded[m.name].cpu_s,
                model_spend.get(m.name),
                lost=[r for r in attempts[m.name] if is_lost(r["failure_class"])],
                billed=spend.get(m.name),
            )
            for a, m in zip(arm_rows, metrics)
        ]
        try:
            costs = run_costs(uses, run, grading_cpu_hour=grading_cpu_hour, machine_busy_ms=machine_busy)
        except PriceError as exc:
            raise PriceError(f"run {run_id}: {exc}") from None
    same = same_accounting(u.kind for u in usage.values())
    censored = {m.name for m in metrics if m.censored}
    # Cost intervals need every task decided on every arm; they then share the acceptance
    # bootstrap's task draws, computed in the same pass.
    folded = not censored and all(o.decided for m in metrics for o in outcomes[m.name])
    intervals = None
    if folded and resamples:
        task_ids = [t["task_id"] for t in tasks]
        vectors = [
            task_costs(
                m.name, task_ids, outcomes[m.name], model_attempts[m.name], costs.get(m.name), a.get("price_json")
            )
            for m, a in zip(metrics, arm_rows)
        ]
        intervals = cost_intervals(vectors, seed=seed, resamples=resamples)
        if intervals is not None and intervals.ratio is not None:
            intervals = replace(intervals, ratio=intervals.ratio | {"margin": cost_margin(run)})
    # -- the rest of what the section reads
    preflights = reads.preflights(ledger, run_id)
    tampering = reads.tampering_and_controls(ledger, run_id, controls)
    strategic = any(a.get("strategy") for a in arm_rows)
    subs = by_arm(reads.submissions(ledger, run_id)) if strategic else {}
    stages = stage_tokens_of(reads.stage_tokens(ledger, run_id)) if strategic else {}
    sandboxes, placements = reads.sandbox_counts(ledger, run_id), reads.grade_placements(ledger, run_id)
    retries = repeated_retries(ledger, run_id, arm_rows)
    mutation_scores = ledger.mutation_scores(run_id)
    comparisons = []
    for first, second in combinations([m.name for m in metrics], 2):
        shared = intervals is not None and intervals.gap is not None
        c = compare_arms(
            first,
            outcomes[first],
            second,
            outcomes[second],
            seed=seed,
            resamples=0 if shared else resamples,
            not_comparable={m.name: m.figures.not_comparable or "" for m in metrics if m.censored},
        )
        if c is not None and shared and resamples:
            c = replace(c, bootstrap=intervals.gap)  # type: ignore[union-attr]
        if c is not None:
            comparisons.append(c)
    setup = run_setup(run, arm_rows, preflights)
    note = "; ".join(n for n in (budget_note(setup["arms"]), cap_note(setup["arms"])) if n)
    if note:  # a max of k candidates is not a mean of one: the verdict says what was compared
        comparisons = [replace(c, verdict=replace(c.verdict, text=f"{c.verdict.text} — {note}")) for c in comparisons]
    integrity = integrity_section(
        [a["name"] for a in arm_rows],
        all_tasks,
        tampering,
        reads.suspects_and_oracles(ledger, run_id),
        reads.accepted_counts(ledger, run_id),
    )
    flags = {arm["arm"]: arm for arm in integrity["arms"]}
    read_lines = [
        with_integrity(r, flags.get(m.name))
        for m, r in zip(metrics, practical_reads(metrics, costs, comparisons, same, intervals))
    ]
    setups = {s["arm"]: s for s in setup["arms"]}
    section: dict[str, Any] = {
        "run": {k: run.get(k) for k in ("id", "created_utc", "finished_utc", "session_id", "manifest_sha256")}
        | {"status": run_state(run)},
        "sandbox": sandbox_summary(run, sandboxes, placements),
        "setup": {k: v for k, v in setup.items() if k != "arms"},
        "preflight": setup["preflight"],
        "n_tasks": len(tasks),
        "by_kind": by_kind(tasks, outcomes),
        "broken_tasks": broken_tasks(run),
        "published": {
            "max_attempts": {m.name: m.max_attempts for m in metrics},
            "prices": {a["name"]: price_table(a) for a in arm_rows},
            "grading_cpu_hour": grading_cpu_hour,
            "accounting": {name: asdict(u) | {"share_reported": u.share_reported} for name, u in usage.items()},
            "same_accounting": same,
            "shared_servers": [
                {"url": url, "arms": names, "busy_ms": machine_busy.get(url)}
                for url, names in servers.items()
                if len(names) > 1
            ],
        },
        "arms": [
            {
                "setup": setups.get(m.name),
                "metrics": m.as_json() | {"qap_ci": ci_json(intervals, "qap", m.name)},
                "comparable": not m.censored,
                "not_comparable": m.figures.not_comparable,
                "cost": asdict(costs[m.name]) | {"cpsp_ci": ci_json(intervals, "cpsp", m.name)}
                if m.name in costs
                else None,
                "grading": asdict(graded[m.name]) | {"cost": graded[m.name].cost},
                "accounting": usage[m.name].kind,
                "provider": spend_summary(price_or_none(a), spend.get(m.name) or Spend()),
                "read": read,
                "grammar_gaps": gaps.get(m.name, {"attempts": 0, "files": 0}),
            }
            for m, a, read in zip(metrics, arm_rows, read_lines)
        ],
        "comparisons": [comparison_json(c, costs, censored, same, intervals) for c in comparisons],
        "decision": decision_section(run, arm_rows, outcomes),
        "integrity": integrity,
        "strategies": strategy_section(arm_rows, subs, stages, attempts, outcomes, costs),
        "cost_relative": relative_costs(intervals, [m.name for m in metrics]),
        "repeated_retries": retries,
        "hidden_tests": mutation_section(mutation_scores),
        "grader_view": grader_view(metrics, outcomes, attempts),
    }
    why = {m.name: m.figures.not_comparable or "" for m in metrics if m.censored}
    return section, outcomes, why


def build_report(
    ledger: Ledger,
    run_ids: list[str],
    *,
    with_cost: bool = True,
    bootstrap_seed: int = DEFAULT_SEED,
    resamples: int = 10_000,
    grading_cpu_hour: float | None = DEFAULT_GRADING_CPU_HOUR,
) -> dict[str, Any]:
    """The report over `run_ids` (prefixes accepted; none means the newest run).

    Several runs must share one manifest hash (ReportError naming both hashes and what
    differs); they are then also summarized as replicates. A report always answers: with
    `with_cost` and an arm whose price is missing or cannot be applied, it is built without
    cost (cost fields None, `with_cost` False) and `cost_left_out` says why; without
    `with_cost`, `cost_left_out` says it was asked for. Grading compute is priced at
    `grading_cpu_hour` $ per CPU-hour (None: the default) and published.
    """
    if not with_cost:
        return _build_report(ledger, run_ids, False, bootstrap_seed, resamples, grading_cpu_hour) | {
            "cost_left_out": NO_COST_ASKED
        }
    try:
        return _build_report(ledger, run_ids, True, bootstrap_seed, resamples, grading_cpu_hour) | {
            "cost_left_out": None
        }
    except PriceError as exc:
        return _build_report(ledger, run_ids, False, bootstrap_seed, resamples, grading_cpu_hour) | {
            "cost_left_out": str(exc)
        }


def _build_report(
    ledger: Ledger,
    run_ids: list[str],
    with_cost: bool,
    bootstrap_seed: int,
    resamples: int,
    grading_cpu_hour: float | None,
) -> dict[str, Any]:
    grading_cpu_hour = DEFAULT_GRADING_CPU_HOUR if grading_cpu_hour is None else grading_cpu_hour
    if not (isinstance(grading_cpu_hour, (int, float)) and 0 <= grading_cpu_hour < float("inf")):
        raise ReportError(
            f"grading CPU price {grading_cpu_hour!r} is not a number >= 0 — "
            "pass --grading-cpu-hour with dollars per CPU-hour, e.g. 0.05"
        )
    ids = _resolve(ledger, run_ids)
    runs = [_run_row(ledger, i) for i in ids]
    tasks_by_run = {i: reads.run_tasks(ledger, i) for i in ids}
    if len(runs) > 1:
        check_same_manifest(runs, tasks_by_run)
    sections, outcomes, not_comparable = [], {}, {}
    for run in runs:
        section, outcomes[run["id"]], why = _run_section(
            ledger,
            run,
            tasks_by_run[run["id"]],
            with_cost=with_cost,
            seed=bootstrap_seed,
            resamples=resamples,
            grading_cpu_hour=grading_cpu_hour,
        )
        not_comparable.update({(run["id"], arm): text for arm, text in why.items()})
        sections.append(section)
    groups = _setup_groups(runs, sections)
    pooled = groups[0]["run_ids"] if len(groups) == 1 else None  # replicates of one setup only
    by_id = {r["id"]: r for r in runs}

    def replicates_of(ids: list[str]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        if len(ids) < 2:
            return None, None
        group_runs = [by_id[i] for i in ids]
        group_outcomes = {i: outcomes[i] for i in ids}
        summary = replicate_summary(
            group_runs,
            group_outcomes,
            not_comparable={k: v for k, v in not_comparable.items() if k[0] in ids},
            seed=bootstrap_seed,
            resamples=resamples,
            server_sessions=reads.server_sessions(ledger, [r["id"] for r in group_runs]),
        )
        stats = replicate_statistics(ledger, group_runs, group_outcomes, seed=bootstrap_seed, resamples=resamples)
        return summary, stats

    replicates, statistics = replicates_of(pooled) if pooled else (None, None)
    if len(groups) > 1:
        for group in groups:
            group["replicates"], group["replicate_statistics"] = replicates_of(group["run_ids"])
    return {
        "schema": REPORT_SCHEMA,
        "with_cost": with_cost,
        "decision_rule": {
            "text": RULE,
            "alpha": ALPHA,
            "min_discordant": MIN_DISCORDANT,
            "interval": "Tango score interval for the paired difference",
            "test": "exact McNemar",
        },
        "bootstrap": {"seed": bootstrap_seed, "resamples": resamples, "unit": "task"},
        "runs": sections,
        "setup_groups": groups if len(groups) > 1 else None,
        "replicates": replicates,
        "replicate_statistics": statistics,
    }


def _setup_groups(runs: list[dict[str, Any]], sections: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Runs of one manifest grouped by setup (agent/metrics/setup.py), in first-seen order; each
    group after the first says what differs from the first, one line each."""
    groups: dict[str, dict[str, Any]] = {}
    setups: dict[str, dict[str, Any]] = {}
    for run, section in zip(runs, sections):
        sha = section["setup"]["sha256"]
        setups.setdefault(sha, {"arms": [a["setup"] for a in section["arms"] if a.get("setup")]})
        groups.setdefault(sha, {"setup_sha256": sha, "run_ids": [], "differences": []})["run_ids"].append(run["id"])
    ordered = list(groups.values())
    first = setups[ordered[0]["setup_sha256"]] if ordered else None
    for group in ordered[1:]:
        group["differences"] = setup_differences(first, setups[group["setup_sha256"]])  # type: ignore[arg-type]
    return ordered
