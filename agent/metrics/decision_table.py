"""The report's decision table (one row per arm, its headers) and the lines published with it
(budgets, prices, token accounting, shared servers)."""

from __future__ import annotations

import json
from typing import Any

from agent.metrics import cells
from agent.metrics.cost_ci import bracket


def _acceptance(m: dict[str, Any]) -> str:
    lo, hi = m["acceptance_ci"]
    value = f"{cells.rate(m['acceptance'])} [{lo:.2f}, {hi:.2f}] n={m['decided']}"
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
    return f"{cells.money(cost['cpsp'])}{bracket(cost.get('cpsp_ci'), cells.money)} n={cost['solved']}"


def _qap(m: dict[str, Any], same_accounting: bool) -> str:
    if m["qap"] is None and m["censored"]:
        return "—"
    return f"{cells.count(m['qap'])}{bracket(m.get('qap_ci'), cells.count)} n={m['accepted']}" + (
        "" if same_accounting else " †"
    )


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
                _or_dash(m, f"{cells.rate(m['retry_tax'])} of {cells.tokens(m['total_tokens'])} tok"),
                _censored(m),
                *cpsp,
                _or_dash(m, f"{cells.rate(m['first_try_share'])} n={m['accepted']}"),
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
