"""`build_report`: read runs from the ledger and assemble the per-arm decision table (acceptance,
quota per accepted patch, retry tax, censoring), the paired comparison and, for several runs of
one manifest, the replicates into one JSON-ready dict. `render_report` (render.py) turns it into text, markdown or JSON.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, replace
from datetime import datetime
from itertools import combinations
from typing import Any

from agent import QuotabenchError
from agent.classify import is_lost
from agent.ledger import Ledger
from agent.ledger.liveness import run_state
from agent.ledger.store import Row
from agent.metrics.arm import ArmMetrics, arm_metrics
from agent.metrics.billing import Spend, read_spend, spend_summary
from agent.metrics.compare import ALPHA, MIN_DISCORDANT, RULE, Comparison, compare_arms
from agent.metrics.cost import ArmCost, ArmUse, break_even_utilization, run_costs
from agent.metrics.cost_ci import CostIntervals, cost_intervals, task_costs
from agent.metrics.errors import PriceError, ReportError
from agent.metrics.grader_view import gap_under_graders, grader_pair
from agent.metrics.integrity import integrity_section
from agent.metrics.kinds import broken_tasks, by_kind
from agent.metrics.mutation import mutation_section
from agent.metrics.outcome import NOT_RUN, TaskOutcome
from agent.metrics.price import parse_price
from agent.metrics.read import practical_read, with_integrity
from agent.metrics.render import render_report
from agent.metrics.repeats import repeated_retries
from agent.metrics.replicate_stats import replicate_statistics
from agent.metrics.replicates import check_same_manifest, replicate_summary
from agent.metrics.setup import budget_note, run_setup, setup_differences
from agent.metrics.strategy import stage_tokens_of, strategy_figures
from agent.metrics.usage import Spans, accounting, call_usage, grading, same_accounting, union_ms
from agent.states import ArmState

__all__ = ["DEFAULT_GRADING_CPU_HOUR", "DEFAULT_SEED", "ReportError", "build_report", "render_report"]

REPORT_SCHEMA = "quotabench.report/2"
NO_COST_ASKED = "asked for with --no-cost"
DEFAULT_SEED = 20261130
# $ per CPU-hour of grading (a general-purpose cloud vCPU-hour is a few cents); stated in every
# report and set with `quotabench report --grading-cpu-hour`.
DEFAULT_GRADING_CPU_HOUR = 0.05
# Only the columns the metrics read: `a.*` (diffs included) took half the report's time at 5,000
# attempts. Read through sqlite3.Row, which finds a name by scanning: the most-read come first.
ATTEMPT_COLUMNS = (
    "task_id",
    "attempt_no",
    "failure_class",
    "accepted",
    "total_tokens",
    "arm",
    "verdict",
    "visible_passed",
    "duration_ms",
    "calls",
    "transport_retries",
    "malformed_tool_calls",
    "prompt_tokens",
    "completion_tokens",
    "ended_utc",
    "stage",
    "submitted",
)
TASK_COLUMNS = ("task_id", "files_sha256", "control", "kind")  # not the prompts: 50k tasks' prompts are tens of MB
CALL_COLUMNS = ("arm", "started_utc", "latency_ms", "usage_source", "prompt_tokens", "completion_tokens")


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


def _reads(
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


def _price_table(arm_row: dict[str, Any]) -> dict[str, Any] | None:
    try:
        table = json.loads(arm_row.get("price_json") or "null")
    except json.JSONDecodeError:
        return None
    return table if isinstance(table, dict) and table else None


def _price_or_none(arm_row: dict[str, Any]) -> Any:
    try:
        return parse_price(arm_row["name"], arm_row.get("price_json"))
    except PriceError:
        return None


def _by_arm(rows: Iterable[Row]) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        out[row["arm"]].append(row)
    return out


def _server_sessions(ledger: Ledger, runs: list[dict[str, Any]]) -> dict[str, set[str]]:
    marks = ", ".join("?" * len(runs))
    out: dict[str, set[str]] = defaultdict(set)
    for row in ledger.rows(
        f"select run_id, server_session_id from arms where run_id in ({marks}) "
        "and server_session_id is not null and server_session_id != ''",
        [r["id"] for r in runs],
    ):
        out[row["run_id"]].add(row["server_session_id"])
    return dict(out)


def _relative(intervals: CostIntervals | None, names: list[str]) -> dict[str, Any] | None:
    """The second arm's cost per task (and per solved task) relative to the first's, with intervals."""
    if intervals is None or not intervals.relative or len(names) != 2:
        return None
    return {"first": names[0], "second": names[1], **{k: v.as_json() for k, v in intervals.relative.items()}}


def _ci(intervals: CostIntervals | None, what: str, arm: str) -> dict[str, Any] | None:
    table = getattr(intervals, what, None) if intervals is not None else None
    return table[arm].as_json() if table and arm in table else None


def _comparison_dict(
    c: Comparison, costs: dict[str, ArmCost], censored: set[str], same: bool, intervals: CostIntervals | None
) -> dict[str, Any]:
    even = _break_even(costs, c.first, c.second, censored)
    if even is not None and intervals is not None and intervals.break_even is not None:
        even["ci"] = intervals.break_even.as_json()
    ratio = intervals.ratio if intervals is not None else None
    return asdict(c) | {"break_even": even, "qap_same_accounting": same, "cost_ratio": ratio}


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
    controls = {t["task_id"] for t in tasks if t.get("control")}
    tasks = [t for t in tasks if t["task_id"] not in controls]  # impossible controls: reported apart
    attempts = _by_arm(
        r
        for r in ledger.rows(
            f"select {', '.join(ATTEMPT_COLUMNS)} from attempts where run_id = ? order by arm, task_id, attempt_no",
            [run_id],
        )
        if r["task_id"] not in controls
    )
    with ledger.stream(
        f"select {', '.join(CALL_COLUMNS)} from calls where run_id = ? and kind = 'attempt'", [run_id]
    ) as rows:
        spans, call_accounting = call_usage(rows)  # 400k calls at 100k attempts: streamed, never held as rows
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
    usage = {a["name"]: call_accounting.get(a["name"]) or accounting({}) for a in arm_rows}
    spend = read_spend(ledger, run_id)  # cached, reasoning tokens and reported costs per arm
    grade_sums = {
        r["arm"]: (r["n"], r["ms"])
        for r in ledger.query(
            "select a.arm, count(*) as n, sum(coalesce(g.duration_ms, 0)) as ms from grades g "
            "join attempts a on a.id = g.attempt_id where a.run_id = ? group by a.arm",
            [run_id],
        )
    }
    graded = {a["name"]: grading(*grade_sums.get(a["name"], (0, 0)), grading_cpu_hour) for a in arm_rows}
    # The model's attempts: the costs leave out those the run cut off, as QAP does (lost spend)
    model_attempts: dict[str, list[Row]] = defaultdict(list)
    for name, of_arm in attempts.items():
        model_attempts[name] = [r for r in of_arm if not is_lost(r["failure_class"])]
    model_spend = read_spend(ledger, run_id, model_only=True)
    metrics, outcomes = [], {}  # type: list[ArmMetrics], dict[str, list[TaskOutcome]]
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
    setup = run_setup(run, arm_rows, ledger.query("select * from preflights where run_id = ?", [run_id]))
    note = budget_note(setup["arms"])
    if note:  # a max of k candidates is not a mean of one: the verdict says what was compared
        comparisons = [replace(c, verdict=replace(c.verdict, text=f"{c.verdict.text} — {note}")) for c in comparisons]
    integrity = _integrity(ledger, run_id, [a["name"] for a in arm_rows], all_tasks, controls)
    flags = {arm["arm"]: arm for arm in integrity["arms"]}
    reads = [
        with_integrity(r, flags.get(m.name))
        for m, r in zip(metrics, _reads(metrics, costs, comparisons, same, intervals))
    ]
    setups = {s["arm"]: s for s in setup["arms"]}
    section: dict[str, Any] = {
        "run": {k: run.get(k) for k in ("id", "created_utc", "finished_utc", "session_id", "manifest_sha256")}
        | {"status": run_state(run)},
        "sandbox": sandbox_summary(ledger, run),
        "setup": {k: v for k, v in setup.items() if k != "arms"},
        "preflight": setup["preflight"],
        "n_tasks": len(tasks),
        "by_kind": by_kind(tasks, outcomes),
        "broken_tasks": broken_tasks(run),
        "published": {
            "max_attempts": {m.name: m.max_attempts for m in metrics},
            "prices": {a["name"]: _price_table(a) for a in arm_rows},
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
                "metrics": m.as_json() | {"qap_ci": _ci(intervals, "qap", m.name)},
                "comparable": not m.censored,
                "not_comparable": m.figures.not_comparable,
                "cost": asdict(costs[m.name]) | {"cpsp_ci": _ci(intervals, "cpsp", m.name)}
                if m.name in costs
                else None,
                "grading": asdict(graded[m.name]) | {"cost": graded[m.name].cost},
                "accounting": usage[m.name].kind,
                "provider": spend_summary(_price_or_none(a), spend.get(m.name) or Spend()),
                "read": read,
            }
            for m, a, read in zip(metrics, arm_rows, reads)
        ],
        "comparisons": [_comparison_dict(c, costs, censored, same, intervals) for c in comparisons],
        "decision": decision_section(run, arm_rows, outcomes),
        "integrity": integrity,
        "strategies": strategy_section(ledger, run_id, arm_rows, attempts, outcomes, costs),
        "cost_relative": _relative(intervals, [m.name for m in metrics]),
        "repeated_retries": repeated_retries(ledger, run_id, arm_rows),
        "hidden_tests": mutation_section(ledger.mutation_scores(run_id)),
        "grader_view": _grader_view(metrics, outcomes, attempts),
    }
    why = {m.name: m.figures.not_comparable or "" for m in metrics if m.censored}
    return section, outcomes, why


def _grader_view(
    metrics: list[ArmMetrics], outcomes: dict[str, list[TaskOutcome]], attempts: dict[str, list[Row]]
) -> dict[str, Any]:
    """Seed 001's paired drop: each arm graded by the visible tests alone and by the hidden ones."""
    names = [m.name for m in metrics]
    gaps = [
        gap_under_graders(a, outcomes[a], attempts[a], b, outcomes[b], attempts[b]) for a, b in combinations(names, 2)
    ]
    return {
        "arms": [grader_pair(n, outcomes[n], attempts[n]).as_json() for n in names],
        "gaps": [g.as_json() for g in gaps if g is not None],
    }


def _integrity(
    ledger: Ledger, run_id: str, arms: list[str], tasks: list[dict[str, Any]], controls: set[str]
) -> dict[str, Any]:
    """Tampering per arm and the impossible controls (agent/metrics/integrity.py): only the rows
    that can count, so a large clean run reads almost nothing more."""
    marks = ", ".join("?" * len(controls))
    control_clause = f" or a.task_id in ({marks})" if controls else ""
    rows = ledger.query(
        "select a.id, a.arm, a.task_id, a.failure_class, a.accepted, a.total_tokens, g.tampering_json "
        "from attempts a left join grades g on g.attempt_id = a.id "
        f"where a.run_id = ? and (a.failure_class = 'tampering'{control_clause})",
        [run_id, *sorted(controls)],
    )
    return integrity_section(arms, tasks, rows)


def _run_config(run: dict[str, Any]) -> dict[str, Any]:
    """The [run] table the run was started with (as recorded), or {} if it cannot be read."""
    import tomllib

    try:
        table = tomllib.loads(json.loads(run.get("config_json") or "{}").get("toml") or "").get("run", {})
        return table if isinstance(table, dict) else {}
    except (ValueError, AttributeError, tomllib.TOMLDecodeError):
        return {}


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
    ledger: Ledger,
    run_id: str,
    arm_rows: list[dict[str, Any]],
    attempts: dict[str, list[Row]],
    outcomes: dict[str, list[TaskOutcome]],
    costs: dict[str, ArmCost],
) -> list[dict[str, Any]] | None:
    """Coverage, conversion and where candidates were lost, per arm; None unless an
    arm of the run has a strategy."""
    if not any(a.get("strategy") for a in arm_rows):
        return None
    subs = _by_arm(ledger.rows("select * from submissions where run_id = ?", [run_id]))
    stages = stage_tokens_of(
        ledger.query(
            "select arm, stage, sum(total_tokens) as tokens from attempts where run_id = ? group by arm, stage",
            [run_id],
        )
    )
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


def sandbox_summary(ledger: Ledger, run: dict[str, Any]) -> dict[str, Any]:
    """Which sandbox the run's grades ran in; `full` is False when any ran without bubblewrap."""
    counts = {
        r["sandbox"] or "unrecorded": r["n"]
        for r in ledger.query(
            "select g.sandbox, count(*) as n from grades g join attempts a on a.id = g.attempt_id "
            "where a.run_id = ? group by g.sandbox",
            [run["id"]],
        )
    }
    about = json.loads(run.get("isolation_json") or "{}")
    declared = run.get("isolation_sandbox") or "unrecorded"
    return {
        "declared": declared,
        "missing": about.get("missing"),
        "grades": counts,
        "full": declared == "bwrap" and set(counts) <= {"bwrap"},
        "placement": placement_summary(ledger, run),
    }


def placement_summary(ledger: Ledger, run: dict[str, Any]) -> dict[str, Any]:
    """Where the run's hidden tests ran (executor, nodes), how long they ran and waited for a
    worker, how many were retried after a lost worker, and the grading throughput."""
    rows = ledger.query(
        "select g.executor, g.node, g.queue_ms, g.retries, g.duration_ms, g.created_utc from grades g "
        "join attempts a on a.id = g.attempt_id where a.run_id = ?",
        [run["id"]],
    )
    if not rows:
        return {"n": 0}
    runs = sorted(r["duration_ms"] or 0 for r in rows)
    waits = sorted(r["queue_ms"] or 0 for r in rows)
    times = sorted(datetime.fromisoformat(r["created_utc"]) for r in rows if r["created_utc"])
    span_min = (times[-1] - times[0]).total_seconds() / 60 if len(times) > 1 else 0.0
    return {
        "n": len(rows),
        "executors": sorted({r["executor"] or "local" for r in rows}),
        "nodes": sorted({r["node"] for r in rows if r["node"]}),
        "run_ms_median": runs[len(runs) // 2],
        "queue_ms_median": waits[len(waits) // 2],
        "queue_ms_p90": waits[min(len(waits) - 1, int(0.9 * len(waits)))],
        "retried": sum(1 for r in rows if r["retries"]),
        "per_minute": (len(rows) - 1) / span_min if span_min > 0 else None,
    }


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
    tasks_by_run = {
        i: ledger.query(f"select {', '.join(TASK_COLUMNS)} from tasks where run_id = ? order by position", [i])
        for i in ids
    }
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
            server_sessions=_server_sessions(ledger, group_runs),
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
