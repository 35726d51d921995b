"""A run's setup: what besides the tasks decides its numbers, per arm — the model configured
and the model the endpoint reported, every sampling setting sent, the cap, the attempt budget
(max_attempts times the strategy's multiplier, and what a task's budget buys), and the held
constants (runtimes' versions, isolation). `setup_sha256` hashes it: two runs of one manifest
whose setups differ are two benchmarks, never replicates of one.

Also what the report prints with every run: the load average at start and end (flagged above
the core count: self-hosted cost comes from busy time, which load inflates) and the preflight
verdict, with a banner when the run was forced past an invalidating one.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from agent.strategy_spec import StrategyError, parse_strategy

HELD = (
    "harness_version",
    "prompt_template_version",
    "python_version",
    "node_version",
    "cargo_version",
    "tsx_version",
    "go_version",
    "java_version",
    "gxx_version",
    "isolation_network",
    "isolation_pids",
)
INVALIDATING = ("invalidating",)  # agent/preflight: the run would not measure what the config says


def _json(text: str | None, default: Any) -> Any:
    try:
        value = json.loads(text) if text else default
    except ValueError:
        return default
    return value if value is not None else default


def attempt_budget(arm: dict[str, Any]) -> dict[str, Any]:
    """What one task may get on this arm: attempts × the strategy's multiplier, in words too."""
    max_attempts = arm.get("max_attempts") or 1
    try:
        strategy = parse_strategy(arm.get("strategy") or "direct")
    except StrategyError:
        strategy = parse_strategy("direct")
    if strategy.kind == "parallel":
        judge = " and a judge call" if arm.get("select_rule") == "judge" else ""
        what = f"{strategy.k} candidates{judge}, each within one attempt's caps"
    elif strategy.kind == "revise":
        what = "an attempt, a critique and a revision"
    else:
        what = f"{max_attempts} attempt{'s' if max_attempts != 1 else ''}"
    return {
        "max_attempts": max_attempts,
        "strategy": strategy.name,
        "multiplier": strategy.multiplier,
        "per_task": max_attempts * strategy.multiplier,
        "text": f"{what} ({max_attempts * strategy.multiplier}× one attempt's caps)",
    }


def arm_setup(arm: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    return {
        "arm": arm["name"],
        "kind": arm.get("kind"),
        "protocol": arm.get("protocol"),
        "model_configured": arm.get("model"),
        "model_reported": arm.get("model_reported"),
        "sampling": _json(arm.get("sampling_json"), {}),
        "cap_tokens": arm.get("cap_tokens"),
        "cap_raises": _json(arm.get("cap_raises_json"), []),
        "attempt_budget": attempt_budget(arm),
        "held_constants": {k: run.get(k) for k in HELD},
    }


def cap_text(s: dict[str, Any]) -> str:
    """An arm's cap as the setup line says it: the configured one, then each raise in the run."""
    raises = [r for r in s.get("cap_raises") or [] if isinstance(r, dict)]
    if not isinstance(s["cap_tokens"], int):
        return "cap —"
    if not raises:
        return f"cap {s['cap_tokens']:,} tokens"
    steps = "; ".join(
        f"raised to {r.get('to', 0):,} at {str(r.get('utc') or '?')[:19].replace('T', ' ')} UTC "
        f"({r.get('used', 0):,} used)"
        for r in raises
    )
    return f"cap {raises[0].get('from', 0):,} tokens configured, {steps}"


def cap_note(setups: list[dict[str, Any]]) -> str | None:
    """Said in a comparison's verdict when the arms did not run under the same cap: a cap one
    arm had raised mid-run, or caps configured apart."""
    caps = {s["arm"]: (s["cap_tokens"], tuple(r.get("to") for r in s.get("cap_raises") or [])) for s in setups}
    if len(set(caps.values())) <= 1:
        return None
    return "different caps: " + ", ".join(cap_text(s).replace("cap ", f"{s['arm']} ", 1) for s in setups)


def budget_note(setups: list[dict[str, Any]]) -> str | None:
    """Said in a comparison's verdict when the arms' per-task budgets differ."""
    budgets = {s["arm"]: s["attempt_budget"] for s in setups}
    if len({b["per_task"] for b in budgets.values()}) <= 1 and len({b["strategy"] for b in budgets.values()}) <= 1:
        return None
    return "unequal budgets: " + ", ".join(f"{arm} {b['per_task']}× one attempt's caps" for arm, b in budgets.items())


def setup_sha256(setups: list[dict[str, Any]]) -> str:
    """The hash of every arm's setup (arms in name order; the budget's wording left out)."""
    canonical = []
    for s in sorted(setups, key=lambda s: s["arm"]):
        budget = {k: v for k, v in s["attempt_budget"].items() if k != "text"}
        kept = {k: v for k, v in s.items() if k != "cap_raises" or v}  # a run with no raise hashes as before
        canonical.append({**kept, "attempt_budget": budget})
    return hashlib.sha256(json.dumps(canonical, sort_keys=True, default=str).encode()).hexdigest()


def run_setup(run: dict[str, Any], arm_rows: list[dict[str, Any]], preflights: list[dict[str, Any]]) -> dict[str, Any]:
    setups = [arm_setup(a, run) for a in arm_rows]
    cores = os.cpu_count() or 1
    load = {"start": run.get("load_start"), "end": run.get("load_end"), "cores": cores}
    load["over_cores"] = any(isinstance(v, (int, float)) and v > cores for v in (load["start"], load["end"]))
    return {
        "sha256": setup_sha256(setups),
        "arms": setups,
        "load": load,
        "preflight": preflight_summary(preflights),
    }


def preflight_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Each arm's last preflight verdict, and whether the run went on past an invalidating one."""
    last: dict[str, dict[str, Any]] = {}
    for row in sorted(rows, key=lambda r: r.get("created_utc") or ""):
        last[row["arm"]] = row
    verdicts = {arm: row.get("verdict") for arm, row in last.items()}
    forced = sorted(arm for arm, row in last.items() if row.get("forced") and _invalidating(row))
    return {
        "ran": bool(rows),
        "verdicts": verdicts,
        "forced_past": forced,
        "differences": {arm: _differences(row) for arm, row in last.items() if _differences(row)},
    }


def _invalidating(row: dict[str, Any]) -> bool:
    if (row.get("verdict") or "") in INVALIDATING:
        return True
    return any(c.get("invalidating") for c in _json(row.get("checks_json"), []) if isinstance(c, dict))


def _differences(row: dict[str, Any]) -> list[str]:
    out = []
    for check in _json(row.get("checks_json"), []):
        if isinstance(check, dict) and check.get("status") == "differs":
            mark = "!" if check.get("invalidating") else ""
            out.append(f"{check.get('check', '?')}{mark}: {check.get('observed') or ''}".strip())
    return out


def setup_differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """One line per setting that differs between two runs' setups, arm by arm."""
    lines = []
    arms_a = {s["arm"]: s for s in a["arms"]}
    arms_b = {s["arm"]: s for s in b["arms"]}
    for arm in sorted(arms_a.keys() | arms_b.keys()):
        x, y = arms_a.get(arm), arms_b.get(arm)
        if x is None or y is None:
            lines.append(f"arm {arm}: only in {'the second' if x is None else 'the first'}")
            continue
        for key in ("model_configured", "model_reported", "kind", "protocol", "cap_tokens"):
            if x.get(key) != y.get(key):
                lines.append(f"arm {arm} {key}: {x.get(key)!r} vs {y.get(key)!r}")
        for key in sorted(x["sampling"].keys() | y["sampling"].keys()):
            if x["sampling"].get(key) != y["sampling"].get(key):
                lines.append(f"arm {arm} {key}: {x['sampling'].get(key)!r} vs {y['sampling'].get(key)!r}")
        if x["attempt_budget"]["per_task"] != y["attempt_budget"]["per_task"]:
            lines.append(f"arm {arm} attempt budget: {x['attempt_budget']['text']} vs {y['attempt_budget']['text']}")
        for key in HELD:
            if x["held_constants"].get(key) != y["held_constants"].get(key):
                lines.append(f"{key}: {x['held_constants'].get(key)!r} vs {y['held_constants'].get(key)!r}")
    return list(dict.fromkeys(lines))


def setup_lines(setup: dict[str, Any]) -> list[str]:
    """The setup as the report prints it: one line per arm, then load and preflight."""
    lines = []
    for s in setup["arms"]:
        reported = s["model_reported"]
        model = s["model_configured"] or "?"
        if reported and reported != model:
            model += f" (endpoint reports {reported})"
        elif reported:
            model += " (reported the same)"
        sampling = ", ".join(f"{k} {v}" for k, v in s["sampling"].items() if v not in (None, False)) or "defaults"
        lines.append(
            f"{s['arm']}: {s['kind'] or '?'} {s['protocol'] or '?'}, model {model}; {sampling}; {cap_text(s)}; "
            f"budget per task: {s['attempt_budget']['text']}"
        )
    held = setup["arms"][0]["held_constants"] if setup["arms"] else {}
    if held:
        lines.append("held constants: " + ", ".join(f"{k} {v}" for k, v in held.items() if v))
    load = setup["load"]
    if isinstance(load["start"], (int, float)):
        end = f"{load['end']:.2f}" if isinstance(load["end"], (int, float)) else "—"
        flag = (
            f" — above the {load['cores']} cores: busy time (self-hosted cost) and wall times are inflated"
            if load["over_cores"]
            else ""
        )
        lines.append(f"load average {load['start']:.2f} at start, {end} at the end ({load['cores']} cores){flag}")
    pre = setup["preflight"]
    if not pre["ran"]:
        lines.append("preflight: not run (--no-preflight, or a ledger from before preflight)")
    else:
        lines.append("preflight: " + ", ".join(f"{arm} {v}" for arm, v in pre["verdicts"].items()))
    lines.append(f"setup {setup['sha256'][:16]} (what besides the tasks decides these numbers; docs/config.md)")
    return lines


def forced_banner(setup: dict[str, Any]) -> str | None:
    forced = setup["preflight"]["forced_past"]
    if not forced:
        return None
    diffs = "; ".join(d for arm in forced for d in setup["preflight"]["differences"].get(arm, []))
    return (
        f"FORCED past an invalidating preflight on arm {', '.join(forced)}"
        + (f" ({diffs})" if diffs else "")
        + ": these numbers may not be the configured endpoint's"
    )
