"""The lines of a run's report sections: each arm's details, a paired comparison, the
sequential decision, where grading ran and the sandbox warning."""

from __future__ import annotations

from typing import Any

from agent.classify import CLASS_LABELS
from agent.metrics import cells
from agent.metrics.billing import COST_SOURCES, provider_line
from agent.metrics.cost_ci import ratio_line

BUSY_SOURCES = {"calls": " (union of call intervals)", "engine": " (engine's sum of call latencies)"}


def lost_line(attempts: int, tokens: int, usd: float | None = None) -> str:
    """What the run's interruptions cost an arm: spent, charged against the cap, in no figure."""
    one = attempts == 1
    billed = f" ({cells.money(usd)}, billed)" if usd else ""
    return (
        f"lost spend: {tokens:,} tokens{billed} in {attempts} attempt{'' if one else 's'} the run cut off (a kill, an "
        "abort, a stop or the cap) — charged against the cap, kept out of QAP, CPSP, retry tax, first-try "
        f"share and tokens/attempt; {'its retry' if one else 'a retry'} runs under the same attempt number"
    )


def grammar_gap_line(gaps: dict[str, int] | None) -> str | None:
    """Attempts whose parse errors the toolchain overruled: noted, never edit-mechanics (None: none)."""
    if not gaps or not gaps.get("attempts"):
        return None
    n, files = gaps["attempts"], gaps["files"]
    return (
        f"grammar gaps: {n} attempt{'' if n == 1 else 's'} ({files} file{'' if files == 1 else 's'}) that "
        "tree-sitter could not parse but the language's toolchain built and tested — noted, not edit-mechanics"
    )


def arm_details(arm: dict[str, Any]) -> list[str]:
    m, cost = arm["metrics"], arm["cost"]
    spread = m["tokens_per_attempt"]
    taxonomy = ", ".join(f"{CLASS_LABELS.get(k, k)} {v}" for k, v in m["taxonomy"].items() if v or k != "aborted")
    lines = [
        f"tokens/attempt mean {cells.count(spread['mean'])}, median {cells.count(spread['median'])}, "
        f"p90 {cells.count(spread['p90'])} (n={spread['n']} attempts); wall {cells.minutes(m['wall_ms'])}, "
        f"endpoint busy {cells.minutes(m['busy_ms'])}{BUSY_SOURCES.get(m['busy_source'], '')}; calls {m['calls']:,}, transport "
        f"retries {m['transport_retries']:,}, malformed tool calls {m['malformed_tool_calls']:,}",
        f"failure taxonomy (n={m['n_tasks']} tasks): {taxonomy}",
        f"visible pass but hidden fail: {cells.rate(m['visible_flatter_rate'])} "
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
            f"cost: {model} {cells.money(cost['model'])} + grading {cells.money(cost['grading'])} "
            f"({cost['grading_cpu_s']:,.1f} CPU s at ${cost['grading_cpu_hour']:g}/CPU-hour) = "
            f"total {cells.money(cost['total'])}; {cells.money(cost['per_attempt'])}/attempt (n={cost['n_attempts']})"
        )
        if cost["kind"] == "gpu":
            line = (
                f"self-hosted: {cost['busy_hours']:.3f} busy h at {cells.percent(cost['utilization'])} utilization "
                f"({cost['utilization_source']})"
            )
            if cost["shared_with"]:
                line += (
                    f"; shares {cost['server']} with {', '.join(cost['shared_with'])}: "
                    f"{cells.percent(cost['machine_share'])} of the machine's {cells.money(cost['machine_total'])}"
                )
            lines.append(line)
    if provider := provider_line(arm.get("provider")):
        lines.append(provider)
    if m.get("lost_attempts"):
        lines.append(lost_line(m["lost_attempts"], m["lost_tokens"], cost.get("lost") if cost else None))
    if gaps := grammar_gap_line(arm.get("grammar_gaps")):
        lines.append(gaps)
    if m["unfinished"]:
        shown = ", ".join(m["unfinished"][:10]) + (" ..." if len(m["unfinished"]) > 10 else "")
        lines.append(f"never finished (n={len(m['unfinished'])}): {shown}")
    return lines


def comparison_lines(c: dict[str, Any]) -> list[str]:
    iv, mc, bs = c["interval"], c["mcnemar"], c["bootstrap"]
    lines = [
        f"read: {c['verdict']['text']}",
        f"acceptance gap {c['second']} − {c['first']}: {cells.signed(iv['gap'])}, {iv['level']:.0%} CI "
        f"[{cells.signed(iv['lo'])}, {cells.signed(iv['hi'])}] ({iv['method']} interval; n={c['n_paired']} paired tasks: "
        f"{c['first']} {c['first_accepted']}, {c['second']} {c['second_accepted']})",
        f"McNemar exact: {mc['only_b']} tasks only {c['second']}, {mc['only_a']} only {c['first']} "
        f"(n={mc['only_a'] + mc['only_b']} decided pairs), p = {mc['p_value']:.3g}",
    ]
    if bs:
        lines.append(
            f"second view, paired bootstrap over tasks: [{cells.signed(bs['lo'])}, {cells.signed(bs['hi'])}], "
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
            "aborted or lost), never served by its endpoint (harness_error) or not run after the comparison was decided"
        )
    if not c.get("qap_same_accounting", True):
        lines.append("QAP: not compared — the arms' tokens were counted differently (†)")
    ratio = c.get("cost_ratio")
    if ratio and (ratio["of"] == "cpsp" or c.get("qap_same_accounting", True)) and bs:
        lines.append(ratio_line(ratio, c["n_paired"], bs["resamples"], bs["seed"]) or "")
    be = c.get("break_even")
    if be:
        now = f"now {cells.percent(be['current_utilization'])}, {be['utilization_source']}"
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
                f", 95% CI [{cells.percent(ci['lo'])}, {'—' if ci.get('hi') is None else cells.percent(ci['hi'])}]"
                if ci.get("lo") is not None
                else ""
            )
            lines.append(
                f"break-even utilization {be['self_hosted']} vs {be['priced']}: {cells.percent(be['utilization'])}{span} ({now})"
            )
    return lines


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
