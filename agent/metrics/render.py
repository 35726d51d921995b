"""`render_report`: the report dict as plain aligned text, markdown or JSON. Same content in
each; every number is printed next to its n (seed 000's checklist). No colours.
"""
from __future__ import annotations

import json

from agent.classify import CLASS_LABELS
from agent.metrics.errors import ReportError
from agent.metrics.replicate_stats import replicate_stats_blocks


FORMATS = ("text", "markdown", "json")
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
    return f"${x:.4f}" if x >= 1e-3 else f"${x:.2g}"


def _percent(x: float) -> str:
    return f"{x:.0%}" if x >= 0.01 else f"{x:.2%}"


def _minutes(ms: float | None) -> str:
    return "—" if ms is None else f"{ms / 60000:.1f} min"


def _acceptance(m: dict) -> str:
    lo, hi = m["acceptance_ci"]
    value = f"{_rate(m['acceptance'])} [{lo:.2f}, {hi:.2f}] n={m['n_tasks']}"
    return f"not comparable ({value})" if m["censored"] else value


def _censored(m: dict) -> str:
    if not m["censored"]:
        return "no"
    return f"yes: {len(m['unfinished'])}/{m['n_tasks']} unfinished" + (", cap hit" if m["cap_hit"] else "")


def _cpsp(arm: dict, with_cost: bool) -> str:
    if not with_cost or arm["cost"] is None:
        return "no price"
    cost = arm["cost"]
    return f"{_money(cost['cpsp'])} n={cost['solved']}"


def decision_rows(section: dict, with_cost: bool) -> list[list[str]]:
    rows = []
    for arm in section["arms"]:
        m = arm["metrics"]
        rows.append([
            m["name"], _acceptance(m), f"{_int(m['qap'])} n={m['accepted']}",
            f"{_rate(m['retry_tax'])} of {_tokens(m['total_tokens'])} tok", _censored(m),
            _cpsp(arm, with_cost), f"{_rate(m['first_try_share'])} n={m['accepted']}", arm["read"]])
    return rows


DECISION_HEADERS = ["arm", "acceptance [95% CI]", "QAP tok/patch", "retry tax", "censored",
                    "CPSP", "first-try share", "practical read"]


def _arm_details(arm: dict) -> list[str]:
    m, cost = arm["metrics"], arm["cost"]
    spread = m["tokens_per_attempt"]
    taxonomy = ", ".join(f"{CLASS_LABELS.get(k, k)} {v}" for k, v in m["taxonomy"].items()
                         if v or k != "aborted")
    lines = [
        f"tokens/attempt mean {_int(spread['mean'])}, median {_int(spread['median'])}, "
        f"p90 {_int(spread['p90'])} (n={spread['n']} attempts); wall {_minutes(m['wall_ms'])}, "
        f"endpoint busy {_minutes(m['busy_ms'])}; calls {m['calls']:,}, transport retries "
        f"{m['transport_retries']:,}, malformed tool calls {m['malformed_tool_calls']:,}",
        f"failure taxonomy (n={m['n_tasks']} tasks): {taxonomy}",
        f"visible pass but hidden fail: {_rate(m['visible_flatter_rate'])} "
        f"({m['visible_pass_hidden_fail']} of n={m['visible_pass_n']} visible-pass attempts)",
    ]
    if cost is not None:
        line = (f"cost {_money(cost['per_attempt'])}/attempt (n={cost['n_attempts']}), "
                f"total {_money(cost['total'])}")
        if cost["kind"] == "gpu":
            line += (f"; self-hosted, {cost['busy_hours']:.2f} busy h at "
                     f"{_percent(cost['utilization'])} utilization ({cost['utilization_source']})")
        lines.append(line)
    if m["unfinished"]:
        shown = ", ".join(m["unfinished"][:10]) + (" ..." if len(m["unfinished"]) > 10 else "")
        lines.append(f"never finished (n={len(m['unfinished'])}): {shown}")
    return lines


def comparison_lines(c: dict) -> list[str]:
    b, mc = c["bootstrap"], c["mcnemar"]
    lines = [
        f"acceptance gap {c['second']} − {c['first']}: {_signed(b['gap'])} 95% CI "
        f"[{_signed(b['lo'])}, {_signed(b['hi'])}], P(gap > 0) = {b['p_positive']:.2f} "
        f"(n={c['n_paired']} paired tasks: {c['first']} {c['first_accepted']}, {c['second']} "
        f"{c['second_accepted']}; bootstrap over tasks, {b['resamples']:,} resamples, seed {b['seed']})",
        f"McNemar exact: {mc['only_b']} tasks only {c['second']}, {mc['only_a']} only {c['first']} "
        f"(n={mc['only_a'] + mc['only_b']} discordant), p = {mc['p_value']:.3g}",
        "tasks per arm to detect this gap at 80% power, α = 0.05: "
        + ("— (no gap)" if c["tasks_needed"] is None else f"{c['tasks_needed']:,}")
        + f" (have n={c['n_paired']})",
    ]
    if c["excluded"]:
        lines.append(f"excluded (n={len(c['excluded'])}): tasks censored in either arm")
    be = c.get("break_even")
    if be:
        now = f"now {_percent(be['current_utilization'])}, {be['utilization_source']}"
        if be["censored"]:
            now += f"; not comparable: {', '.join(be['censored'])} censored"
        if be["utilization"] is None:
            lines.append(f"break-even utilization {be['self_hosted']} vs {be['priced']}: — (a side solved nothing)")
        elif be["utilization"] > 1:
            lines.append(f"break-even utilization {be['self_hosted']} vs {be['priced']}: none — "
                         f"{be['self_hosted']} costs more per solved task even at 100% ({now})")
        else:
            lines.append(f"break-even utilization {be['self_hosted']} vs {be['priced']}: "
                         f"{_percent(be['utilization'])} ({now})")
    return lines


def _replicate_blocks(rep: dict) -> list[tuple]:
    sched = rep["schedule"]
    blocks: list[tuple] = [("heading", f"Replicates: {rep['n_runs']} runs of manifest {rep['manifest_sha256']}")]
    blocks.append(("table", ["run", "created", "session"],
                   [[r["run_id"], r["created_utc"] or "—", r["session_id"] or "—"] for r in sched["runs"]]))
    rows = []
    for name, a in rep["arms"].items():
        pk = a["pass_at_k"]
        passes = ", ".join(f"pass@{k} {v:.2f}" for k, v in pk.items()) + f" n={a['pass_at_k_tasks']}" if pk else "—"
        rows.append([name, ", ".join(map(str, a["scores"])) + f" (n={max(a['n_tasks'])} tasks)",
                     f"{a['median']:g}", str(a["range"]), passes,
                     f"{a['failed_at_least_once']} / {a['failed_every_run']}"])
    headers = ["arm", "accepted per run", "median", "range", "pass@k over runs", "tasks failed: any run / every run"]
    blocks.append(("table", headers, rows))
    frequencies = []
    for name, a in rep["arms"].items():
        freq = a["failure_frequency"]
        shown = ", ".join(f"{f['task_id']} {f['failed']}/{f['n']}" for f in freq[:MAX_FREQUENCY_ROWS])
        more = f" ... and {len(freq) - MAX_FREQUENCY_ROWS} more" if len(freq) > MAX_FREQUENCY_ROWS else ""
        frequencies.append(f"{name}: {shown or 'none'}{more}")
    blocks.append(("section", "failure frequency per task (failed / runs that finished it):", frequencies))
    blocks.append(("lines", ["failure lists rotate between runs: read the frequencies, never one run's list "
                             "(seed 003 result 6)", sched["note"]]))
    return blocks


def sandbox_warning(sandbox: dict) -> str:
    """One line for a run that graded without the full (bubblewrap) sandbox."""
    outside = {k: v for k, v in sandbox["grades"].items() if k != "bwrap"}
    what = ", ".join(f"{n} {name}" for name, n in sorted(outside.items())) or "none yet"
    why = f": {sandbox['missing']}" if sandbox.get("missing") else ""
    return (f"WARNING: graded without the full sandbox (run declared {sandbox['declared']}{why}; "
            f"grades outside bubblewrap: {what}) — model-written code could read or change the host")


def _blocks(report: dict) -> list[tuple]:
    with_cost = report["with_cost"]
    blocks: list[tuple] = []
    for section in report["runs"]:
        run = section["run"]
        blocks.append(("heading", f"Run {run['id']} ({run['status'] or '—'}, created {run['created_utc'] or '—'}, "
                                  f"session {run['session_id'] or '—'}, manifest {run['manifest_sha256'] or '—'}, "
                                  f"n={section['n_tasks']} tasks)"))
        if not section["sandbox"]["full"]:
            blocks.append(("lines", [sandbox_warning(section["sandbox"])]))
        blocks.append(("table", DECISION_HEADERS, decision_rows(section, with_cost)))
        for arm in section["arms"]:
            blocks.append(("section", f"{arm['metrics']['name']}:", _arm_details(arm)))
        for c in section["comparisons"]:
            blocks.append(("section", f"paired comparison {c['second']} vs {c['first']}:", comparison_lines(c)))
    if report["replicates"]:
        blocks.extend(_replicate_blocks(report["replicates"]))
    if report.get("replicate_statistics"):
        blocks.extend(replicate_stats_blocks(report["replicate_statistics"]))
    return blocks


def _text_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]

    def line(cells: list[str]) -> str:
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def _md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"
    return [line(headers), "|" + "---|" * len(headers), *(line(r) for r in rows)]


def _render(blocks: list[tuple], markdown: bool) -> str:
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


def render_report(report: dict, fmt: str) -> str:
    """The report as `text` (aligned plain table), `markdown` or `json`: the same content."""
    if fmt == "json":
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    if fmt not in FORMATS:
        raise ReportError(f"report format {fmt!r} is unknown — use one of: {', '.join(FORMATS)}")
    return _render(_blocks(report), markdown=fmt == "markdown")
