"""`render_report`: the report dict as plain aligned text, markdown or JSON. Same content in
each; every number is printed next to its n (a rate without its n cannot be read). No colours.
"""

from __future__ import annotations

import json
import math
from typing import Any

from agent.classify import CLASS_LABELS
from agent.metrics.billing import COST_SOURCES, provider_line
from agent.metrics.cost_ci import bracket, ratio_line
from agent.metrics.errors import ReportError
from agent.metrics.grader_view import grader_lines
from agent.metrics.integrity import integrity_lines
from agent.metrics.kinds import broken_lines, kind_lines
from agent.metrics.repeats import repeat_lines
from agent.metrics.replicate_stats import replicate_stats_blocks
from agent.metrics.setup import forced_banner, setup_lines
from agent.metrics.strategy_render import strategy_blocks

FORMATS = ("text", "markdown", "json")
BUSY_SOURCES = {"calls": " (union of call intervals)", "engine": " (engine's sum of call latencies)"}
MAX_FREQUENCY_ROWS = 15


def _rate(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def _signed(x: float) -> str:
    return f"{x:+.3f}"


def _int(n: float | None) -> str:
    return "—" if n is None else f"{n:,.0f}"


def _tokens(n: int) -> str:
    if n >= 1e6:
        return f"{n / 1e6:.1f}M"
    return f"{n / 1e3:.0f}k" if n >= 1e4 else f"{n:,}"


def _money(x: float | None) -> str:
    if x is None:
        return "—"
    if x >= 1:
        return f"${x:,.2f}"
    if x >= 1e-3:
        return f"${x:.4f}"
    return f"${x:.{1 - math.floor(math.log10(x))}f}" if x > 0 else "$0"  # two significant digits


def _percent(x: float) -> str:
    return f"{x:.0%}" if x >= 0.01 else f"{x:.2%}"


def _minutes(ms: float | None) -> str:
    """A duration read at a glance: seconds under two minutes, else minutes."""
    if ms is None:
        return "—"
    return f"{ms / 1000:.1f} s" if ms < 120_000 else f"{ms / 60000:.1f} min"


def _session(session_id: str | None) -> str:
    """runs.session_id is the launching shell's pid plus terminal/tmux ids when present."""
    parts = [p for p in (session_id or "").split("-") if p]
    return f"shell session {'/'.join(parts)}" if parts else "session —"


def _acceptance(m: dict[str, Any]) -> str:
    lo, hi = m["acceptance_ci"]
    value = f"{_rate(m['acceptance'])} [{lo:.2f}, {hi:.2f}] n={m['decided']}"
    if m["censored"]:
        return f"not comparable ({value} of {m['n_tasks']} finished)"
    return value


def _censored(m: dict[str, Any]) -> str:
    if not m["censored"]:
        return "no"
    return f"yes: {len(m['unfinished'])}/{m['n_tasks']} unfinished" + (", cap hit" if m["cap_hit"] else "")


def _cpsp(arm: dict[str, Any]) -> str:
    cost = arm["cost"]
    if cost is None:
        return "no price"
    if arm["metrics"]["censored"]:
        return "—"
    return f"{_money(cost['cpsp'])}{bracket(cost.get('cpsp_ci'), _money)} n={cost['solved']}"


def _qap(m: dict[str, Any], same_accounting: bool) -> str:
    if m["qap"] is None and m["censored"]:
        return "—"
    return f"{_int(m['qap'])}{bracket(m.get('qap_ci'), _int)} n={m['accepted']}" + ("" if same_accounting else " †")


def _or_dash(m: dict[str, Any], text: str) -> str:
    return "—" if m["censored"] else text


def decision_rows(section: dict[str, Any], with_cost: bool) -> list[list[str]]:
    """One row per arm; a not-comparable arm shows — for QAP, retry tax, CPSP and first-try share.
    Without cost the CPSP column is left out (decision_headers leaves out its header)."""
    same = section.get("published", {}).get("same_accounting", True)
    rows = []
    for arm in section["arms"]:
        m = arm["metrics"]
        cpsp = [_cpsp(arm)] if with_cost else []
        rows.append(
            [
                m["name"],
                _acceptance(m),
                _qap(m, same),
                _or_dash(m, f"{_rate(m['retry_tax'])} of {_tokens(m['total_tokens'])} tok"),
                _censored(m),
                *cpsp,
                _or_dash(m, f"{_rate(m['first_try_share'])} n={m['accepted']}"),
                arm["read"],
            ]
        )
    return rows


def _budgets(section: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["setup"]["arm"]: a["setup"]["attempt_budget"] for a in section["arms"] if a.get("setup")}


def budget_line(section: dict[str, Any]) -> str:
    """Each arm's effective per-task budget (attempts × the strategy's multiplier), said once
    when equal, and named as unequal when not (seed 004: a max of five is not a mean of one)."""
    budgets = _budgets(section)
    if not budgets:
        attempts = section["published"]["max_attempts"]
        return f"max_attempts {', '.join(f'{k} {v}' for k, v in attempts.items())}"
    texts = {b["text"] for b in budgets.values()}
    if len(texts) == 1:
        return f"{texts.pop()} per task on every arm (acceptance is within it)"
    arms = "; ".join(f"{arm} {b['text']}" for arm, b in budgets.items())
    return f"UNEQUAL per-task budgets — {arms}: a comparison of budgets as much as of arms (seed 004)"


def decision_headers(section: dict[str, Any], with_cost: bool = True) -> list[str]:
    budgets = {b["text"] for b in _budgets(section).values()}
    if not budgets:
        budgets = {f"{n} attempts" for n in section.get("published", {}).get("max_attempts", {}).values() if n}
    within = f"within {budgets.pop().split(' (')[0]} " if len(budgets) == 1 else "within each arm's budget "
    rest = [h for h in DECISION_HEADERS[2:] if with_cost or h not in COST_HEADERS]
    return ["arm", f"acceptance {within}[95% CI]", *rest]


def cost_left_out_line(report: dict[str, Any]) -> str | None:
    """What a report without cost says in place of its cost columns (None when it has them)."""
    why = report.get("cost_left_out")
    if report["with_cost"] or not why:
        return None
    return f"cost columns left out ({', '.join(COST_HEADERS)}, $/task, $/solved, the cost lines): {why}"


COST_HEADERS = ("CPSP",)
DECISION_HEADERS = [
    "arm",
    "acceptance [95% CI]",
    "QAP tok/patch",
    "retry tax",
    "censored",
    "CPSP",
    "first-try share",
    "practical read",
]


def _price(table: dict[str, Any] | None) -> str:
    if not table:
        return "no price"
    if "gpu_hour" in table:
        util = table.get("utilization")
        how = f"utilization {util:.0%} as configured" if isinstance(util, (int, float)) else "utilization measured"
        return f"${table['gpu_hour']:g} per GPU-hour ({how})"
    if not all(isinstance(table.get(k), (int, float)) for k in ("input_per_mtok", "output_per_mtok")):
        return json.dumps(table)
    cache = "".join(
        f" / ${table[k]:g} {label}"
        for k, label in (("cached_input_per_mtok", "cached in"), ("cache_write_per_mtok", "cache write"))
        if isinstance(table.get(k), (int, float))
    )
    return f"${table['input_per_mtok']:g} in{cache} / ${table['output_per_mtok']:g} out per million tokens"


def _accounting(a: dict[str, Any]) -> str:
    total = a["reported"] + a["estimated"] + a["reserved"]
    if not total:
        return "no call tokens recorded"
    parts = [f"{a['reported'] / total:.0%} reported", f"{a['estimated'] / total:.0%} estimated"]
    if a["reserved"]:
        parts.append(f"{a['reserved'] / total:.0%} charged at reservation (lost calls)")
    return ", ".join(parts)


def published_lines(section: dict[str, Any], with_cost: bool) -> list[str]:
    """What seed 000's checklist and seed 002 ask to publish with the numbers."""
    pub = section["published"]
    budget = budget_line(section)
    lines = [
        f"attempt budget: {budget}",
        "prices: " + "; ".join(f"{arm} {_price(t)}" for arm, t in pub["prices"].items()),
        f"grading compute: ${pub['grading_cpu_hour']:g} per CPU-hour (hidden-test wall time read as one "
        "core busy; set with --grading-cpu-hour)"
        if with_cost
        else "grading compute: not priced (the report has no cost)",
        "token accounting: " + "; ".join(f"{arm} {_accounting(a)}" for arm, a in pub["accounting"].items()),
    ]
    if not pub["same_accounting"]:
        lines.append(
            "† QAP not comparable between arms: their tokens were counted differently (reported vs "
            "estimated); seed 002 compares QAP only under the same accounting"
        )
    for server in pub["shared_servers"]:
        lines.append(
            f"shared server {server['url']}: arms {', '.join(server['arms'])} use one machine; its cost "
            "is billed once and split between them by busy time"
        )
    return lines


def lost_line(attempts: int, tokens: int, usd: float | None = None) -> str:
    """What the run's interruptions cost an arm: spent, charged against the cap, in no figure."""
    one = attempts == 1
    billed = f" ({_money(usd)}, billed)" if usd else ""
    return (
        f"lost spend: {tokens:,} tokens{billed} in {attempts} attempt{'' if one else 's'} the run cut off (a kill, an "
        "abort, a stop or the cap) — charged against the cap, kept out of QAP, CPSP, retry tax, first-try "
        f"share and tokens/attempt; {'its retry' if one else 'a retry'} runs under the same attempt number"
    )


def _arm_details(arm: dict[str, Any]) -> list[str]:
    m, cost = arm["metrics"], arm["cost"]
    spread = m["tokens_per_attempt"]
    taxonomy = ", ".join(f"{CLASS_LABELS.get(k, k)} {v}" for k, v in m["taxonomy"].items() if v or k != "aborted")
    lines = [
        f"tokens/attempt mean {_int(spread['mean'])}, median {_int(spread['median'])}, "
        f"p90 {_int(spread['p90'])} (n={spread['n']} attempts); wall {_minutes(m['wall_ms'])}, "
        f"endpoint busy {_minutes(m['busy_ms'])}{BUSY_SOURCES.get(m['busy_source'], '')}; calls {m['calls']:,}, transport "
        f"retries {m['transport_retries']:,}, malformed tool calls {m['malformed_tool_calls']:,}",
        f"failure taxonomy (n={m['n_tasks']} tasks): {taxonomy}",
        f"visible pass but hidden fail: {_rate(m['visible_flatter_rate'])} "
        f"({m['visible_pass_hidden_fail']} of n={m['visible_pass_n']} visible-pass attempts)",
    ]
    if m["censored"]:
        lines.insert(
            0,
            f"not comparable: {m['not_comparable']} — acceptance is over the finished tasks only; "
            "QAP, retry tax, CPSP and first-try share are not reported",
        )
    if cost is not None:
        model = "tokens" if cost["kind"] == "tokens" else "machine"
        if cost.get("cost_source"):
            model += f" ({COST_SOURCES.get(cost['cost_source'], cost['cost_source'])})"
        lines.append(
            f"cost: {model} {_money(cost['model'])} + grading {_money(cost['grading'])} "
            f"({cost['grading_cpu_s']:,.1f} CPU s at ${cost['grading_cpu_hour']:g}/CPU-hour) = "
            f"total {_money(cost['total'])}; {_money(cost['per_attempt'])}/attempt (n={cost['n_attempts']})"
        )
        if cost["kind"] == "gpu":
            line = (
                f"self-hosted: {cost['busy_hours']:.3f} busy h at {_percent(cost['utilization'])} utilization "
                f"({cost['utilization_source']})"
            )
            if cost["shared_with"]:
                line += (
                    f"; shares {cost['server']} with {', '.join(cost['shared_with'])}: "
                    f"{_percent(cost['machine_share'])} of the machine's {_money(cost['machine_total'])}"
                )
            lines.append(line)
    if provider := provider_line(arm.get("provider")):
        lines.append(provider)
    if m.get("lost_attempts"):
        lines.append(lost_line(m["lost_attempts"], m["lost_tokens"], cost.get("lost") if cost else None))
    if m["unfinished"]:
        shown = ", ".join(m["unfinished"][:10]) + (" ..." if len(m["unfinished"]) > 10 else "")
        lines.append(f"never finished (n={len(m['unfinished'])}): {shown}")
    return lines


def comparison_lines(c: dict[str, Any]) -> list[str]:
    iv, mc, bs = c["interval"], c["mcnemar"], c["bootstrap"]
    lines = [
        f"read: {c['verdict']['text']}",
        f"acceptance gap {c['second']} − {c['first']}: {_signed(iv['gap'])}, {iv['level']:.0%} CI "
        f"[{_signed(iv['lo'])}, {_signed(iv['hi'])}] ({iv['method']} interval; n={c['n_paired']} paired tasks: "
        f"{c['first']} {c['first_accepted']}, {c['second']} {c['second_accepted']})",
        f"McNemar exact: {mc['only_b']} tasks only {c['second']}, {mc['only_a']} only {c['first']} "
        f"(n={mc['only_a'] + mc['only_b']} decided pairs), p = {mc['p_value']:.3g}",
    ]
    if bs:
        lines.append(
            f"second view, paired bootstrap over tasks: [{_signed(bs['lo'])}, {_signed(bs['hi'])}], "
            f"P(gap > 0) = {bs['p_positive']:.2f} ({bs['resamples']:,} resamples, seed {bs['seed']}; "
            "under-covers at small n, decides nothing)"
        )
    lines.append(
        "tasks per arm to detect this gap at 80% power, α = 0.05: "
        + ("— (no gap)" if c["tasks_needed"] is None else f"{c['tasks_needed']:,}")
        + f" (have n={c['n_paired']})"
    )
    if c["excluded"]:
        lines.append(
            f"excluded (n={len(c['excluded'])}): tasks unfinished in either arm (censored, stopped, "
            "aborted or lost) or not run after the comparison was decided"
        )
    if not c.get("qap_same_accounting", True):
        lines.append("QAP: not compared — the arms' tokens were counted differently (†)")
    ratio = c.get("cost_ratio")
    if ratio and (ratio["of"] == "cpsp" or c.get("qap_same_accounting", True)) and bs:
        lines.append(ratio_line(ratio, c["n_paired"], bs["resamples"], bs["seed"]) or "")
    be = c.get("break_even")
    if be:
        now = f"now {_percent(be['current_utilization'])}, {be['utilization_source']}"
        if be["censored"]:
            lines.append(
                f"break-even utilization {be['self_hosted']} vs {be['priced']}: — (not comparable: "
                f"{', '.join(be['censored'])} did not finish every task)"
            )
        elif be["utilization"] is None:
            lines.append(f"break-even utilization {be['self_hosted']} vs {be['priced']}: — (a side solved nothing)")
        elif be["utilization"] > 1:
            lines.append(
                f"break-even utilization {be['self_hosted']} vs {be['priced']}: none — "
                f"{be['self_hosted']} costs more per solved task even at 100% ({now})"
            )
        else:
            ci = be.get("ci") or {}
            span = (
                f", 95% CI [{_percent(ci['lo'])}, {'—' if ci.get('hi') is None else _percent(ci['hi'])}]"
                if ci.get("lo") is not None
                else ""
            )
            lines.append(
                f"break-even utilization {be['self_hosted']} vs {be['priced']}: {_percent(be['utilization'])}{span} ({now})"
            )
    return lines


def _pass_cell(a: dict[str, Any], pk: dict[str, Any]) -> str:
    if not a["pass_at_k"]:
        return "—"
    return (
        ", ".join(f"pass@{k} {v['value']:.2f} [{v['lo']:.2f}, {v['hi']:.2f}]" for k, v in a["pass_at_k"].items())
        + f" n={pk['n_tasks']}"
    )


def _replicate_blocks(rep: dict[str, Any]) -> list[tuple[Any, ...]]:
    sched, pk = rep["schedule"], rep["pass_at_k"]
    blocks: list[tuple[Any, ...]] = [
        ("heading", f"Replicates: {rep['n_runs']} runs of manifest {rep['manifest_sha256']}")
    ]
    blocks.append(
        (
            "table",
            ["run", "created", "session"],
            [[r["run_id"], r["created_utc"] or "—", r["session_id"] or "—"] for r in sched["runs"]],
        )
    )
    rows = []
    for name, a in rep["arms"].items():
        scores = ", ".join(map(str, a["scores"])) + f" (n={max(a['n_tasks'])} tasks)" if a["scores"] else "—"
        left = ", ".join(f"{x['run_id'][:10]}" for x in a["left_out"]) or "none"
        rows.append(
            [
                name,
                scores,
                "—" if a["median"] is None else f"{a['median']:g}",
                "—" if a["range"] is None else str(a["range"]),
                left,
                _pass_cell(a, pk),
                f"{a['failed_at_least_once']} / {a['failed_every_run']}",
            ]
        )
    headers = [
        "arm",
        "accepted per comparable run",
        "median",
        "range",
        "left out",
        "pass@k over runs [95% CI]",
        "tasks failed: any run / every run",
    ]
    blocks.append(("table", headers, rows))
    lines = []
    for name, a in rep["arms"].items():
        for x in a["left_out"]:
            lines.append(
                f"{name}: run {x['run_id']} left out of the spread and pass@k — {x['why']} "
                "(a censored run is a missing measurement, not a low score)"
            )
    lines.append(
        f"pass@k: k = {pk['k']} (the fewest comparable runs of any arm), over the same {pk['n_tasks']} tasks "
        f"for every arm; 95% CI by bootstrap over tasks ({pk['resamples']:,} resamples, seed {pk['seed']})"
    )
    if pk["note"]:
        lines.append(pk["note"])
    blocks.append(("lines", lines))
    frequencies = []
    for name, a in rep["arms"].items():
        freq = a["failure_frequency"]
        shown = ", ".join(f"{f['task_id']} {f['failed']}/{f['n']}" for f in freq[:MAX_FREQUENCY_ROWS])
        more = f" ... and {len(freq) - MAX_FREQUENCY_ROWS} more" if len(freq) > MAX_FREQUENCY_ROWS else ""
        frequencies.append(f"{name}: {shown or 'none'}{more}")
    blocks.append(("section", "failure frequency per task (failed / comparable runs that finished it):", frequencies))
    blocks.append(
        (
            "lines",
            [
                "failure lists rotate between runs: read the frequencies, never one run's list (seed 003 result 6)",
                sched["note"],
            ],
        )
    )
    return blocks


def sandbox_warning(sandbox: dict[str, Any]) -> str:
    """One line for a run that graded without the full (bubblewrap) sandbox."""
    outside = {k: v for k, v in sandbox["grades"].items() if k != "bwrap"}
    what = ", ".join(f"{n} {name}" for name, n in sorted(outside.items())) or "none yet"
    why = f": {sandbox['missing']}" if sandbox.get("missing") else ""
    return (
        f"WARNING: graded without the full sandbox (run declared {sandbox['declared']}{why}; "
        f"grades outside bubblewrap: {what}) — model-written code could read or change the host"
    )


def decision_lines(d: dict[str, Any]) -> list[str]:
    """The always-valid test's read, what it is, and what an early stop means."""
    lines = [
        f"{d['line']}; gap {d['second']} − {d['first']} always-valid {1 - d['alpha']:.0%} bounds "
        f"[{d['gap_lo']:+.2f}, {d['gap_hi']:+.2f}] over n={d['n_pairs']} paired tasks "
        f"({d['only_second']} only {d['second']}, {d['only_first']} only {d['first']})",
        f"method: {d['method']}; bounds: {d['cs_method']}",
    ]
    if d["stopped_early"]:
        not_run = ", ".join(f"{arm} {n}" for arm, n in d["not_run"].items())
        lines.append(
            f"the run stopped here (stop_when_decided): tasks not run — {not_run}; they are left out of "
            "every figure, not counted as failures or as censoring"
        )
        lines.append(d["caveat"])
    elif d["decided"] and not d["stop_when_decided"]:
        lines.append(
            "decided while the run went on (stop_when_decided = false): it could have stopped "
            f"after {d['after_tasks']} tasks"
        )
    return lines


def placement_line(p: dict[str, Any]) -> str:
    """Where grading ran and how fast: executor, nodes, run time, queue wait, retries, throughput."""
    where = ", ".join(p["executors"]) + (f" on {len(p['nodes'])} node(s)" if p["nodes"] else "")
    rate = f"; {p['per_minute']:.1f} graded per minute" if p["per_minute"] else ""
    return (
        f"grading: {p['n']} hidden-test runs ({where}), run time median {p['run_ms_median'] / 1000:.1f} s, "
        f"waiting for a worker median {p['queue_ms_median']:,} ms (p90 {p['queue_ms_p90']:,} ms), "
        f"{p['retried']} retried after a lost worker{rate}"
    )


def _blocks(report: dict[str, Any]) -> list[tuple[Any, ...]]:
    with_cost = report["with_cost"]
    blocks: list[tuple[Any, ...]] = []
    for section in report["runs"]:
        run = section["run"]
        blocks.append(
            (
                "heading",
                f"Run {run['id']} ({run['status'] or '—'}, created {run['created_utc'] or '—'}, "
                f"{_session(run['session_id'])}, manifest {run['manifest_sha256'] or '—'}, "
                f"n={section['n_tasks']} tasks{_controls_note(section)})",
            )
        )
        setup = _setup_of(section)
        banner = forced_banner(setup)
        if banner:
            blocks.append(("lines", [banner]))
        if not section["sandbox"]["full"]:
            blocks.append(("lines", [sandbox_warning(section["sandbox"])]))
        blocks.append(("section", "setup:", setup_lines(setup)))
        if section["sandbox"]["placement"]["n"]:
            blocks.append(("lines", [placement_line(section["sandbox"]["placement"])]))
        blocks.append(("table", decision_headers(section, with_cost), decision_rows(section, with_cost)))
        left_out = cost_left_out_line(report)
        if left_out:
            blocks.append(("lines", [left_out]))
        blocks.append(("section", "published with these numbers:", published_lines(section, with_cost)))
        if section.get("broken_tasks"):
            blocks.append(
                (
                    "section",
                    f"task folders left out of this run ({len(section['broken_tasks'])}, not in n): they would not load",
                    broken_lines(section["broken_tasks"]),
                )
            )
        for arm in section["arms"]:
            blocks.append(("section", f"{arm['metrics']['name']}:", _arm_details(arm)))
        if len(section.get("by_kind") or ()) > 1:
            blocks.append(
                ("section", "accepted by task kind (accepted / decided tasks):", kind_lines(section["by_kind"]))
            )
        if section.get("repeated_retries"):
            blocks.append(("section", "retries that could not differ:", repeat_lines(section["repeated_retries"])))
        if section.get("integrity"):
            blocks.append(
                ("section", "grader integrity (apart from acceptance):", integrity_lines(section["integrity"]))
            )
        blocks.extend(strategy_blocks(section, with_cost))
        for c in section["comparisons"]:
            blocks.append(("section", f"paired comparison {c['second']} vs {c['first']}:", comparison_lines(c)))
        if section["comparisons"]:
            blocks.append(("lines", [f"decision rule: {report['decision_rule']['text']}"]))
        blocks.extend(_weak_test_blocks(section))
        if section.get("decision") and section["decision"]["n_pairs"]:
            blocks.append(
                (
                    "section",
                    "sequential decision (stays valid when watched after every task):",
                    decision_lines(section["decision"]),
                )
            )
    for i, group in enumerate(report.get("setup_groups") or []):
        runs = ", ".join(group["run_ids"])
        lines = [f"runs {runs}"] + (group["differences"] or ["the first setup"] if i else ["the first setup"])
        blocks.append(
            (
                "section",
                f"setup {i + 1} of {len(report['setup_groups'])} ({group['setup_sha256'][:16]}): not replicates of the others",
                lines,
            )
        )
        if group.get("replicates"):
            blocks.extend(_replicate_blocks(group["replicates"]))
        if group.get("replicate_statistics"):
            blocks.extend(replicate_stats_blocks(group["replicate_statistics"]))
    if report["replicates"]:
        blocks.extend(_replicate_blocks(report["replicates"]))
        early = [sec["run"]["id"] for sec in report["runs"] if (sec.get("decision") or {}).get("stopped_early")]
        if early:
            blocks.append(
                (
                    "lines",
                    [
                        f"not fixed-n: {', '.join(early)} stopped early when the comparison was "
                        "decided; its figures cover the decided prefix only, and its gap is biased "
                        "toward a larger one (docs/sequential.md)"
                    ],
                )
            )
    if report.get("replicate_statistics"):
        blocks.extend(replicate_stats_blocks(report["replicate_statistics"]))
    if len(report["runs"]) == 1:
        blocks.append(
            (
                "lines",
                [
                    "run-to-run spread: unknown from one run (the model's own error bar, seed 003) — "
                    "`quotabench run CONFIG --replicates 3` measures it"
                ],
            )
        )
    return blocks


def _weak_test_blocks(section: dict[str, Any]) -> list[tuple[Any, ...]]:
    """How strong the hidden tests are, and how a visible-only grader would have read each arm."""
    view = section.get("grader_view") or {}
    hidden = section.get("hidden_tests")
    lines = [hidden["statement"]] if hidden else ["hidden tests: not scored — `quotabench validate --mutants SUITE`"]
    if hidden and hidden["weak"]:
        lines.append("weak tasks: " + ", ".join(f"{w['task_id']} {w['score']:.2f}" for w in hidden["weak"][:10]))
    lines += grader_lines(view.get("arms") or [], view.get("gaps") or [])
    return [("section", "weak-test view (the same tasks, graded by the visible tests alone):", lines)]


def _setup_of(section: dict[str, Any]) -> dict[str, Any]:
    return {**section["setup"], "arms": [a["setup"] for a in section["arms"] if a.get("setup")]}


def _controls_note(section: dict[str, Any]) -> str:
    controls = (section.get("integrity") or {}).get("controls") or []
    return f" + {len(controls)} impossible control{'s' if len(controls) != 1 else ''}" if controls else ""


def _text_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]

    def line(cells: list[str]) -> str:
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def _md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    return [line(headers), "|" + "---|" * len(headers), *(line(r) for r in rows)]


def _render(blocks: list[tuple[Any, ...]], markdown: bool) -> str:
    out: list[str] = []
    for kind, *body in blocks:
        if kind == "heading":
            out += [f"## {body[0]}" if markdown else body[0], ""]
        elif kind == "table":
            out += (_md_table if markdown else _text_table)(*body) + [""]
        elif kind == "section":
            title, lines = body
            out += [f"**{title}**" if markdown else title]
            out += [f"- {line}" if markdown else f"  {line}" for line in lines] + [""]
        else:
            out += [f"- {line}" if markdown else line for line in body[0]] + [""]
    return "\n".join(out).rstrip() + "\n"


def render_report(report: dict[str, Any], fmt: str) -> str:
    """The report as `text` (aligned plain table), `markdown` or `json`: the same content."""
    if fmt == "json":
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    if fmt not in FORMATS:
        raise ReportError(f"report format {fmt!r} is unknown — use one of: {', '.join(FORMATS)}")
    return _render(_blocks(report), markdown=fmt == "markdown")
