"""The report's replicate statistics: error bars per model, failure rotation and determinism
(agent/metrics/determinism.py) over several runs of one manifest, read from the ledger, and
the report blocks that show them (render.py's block format).

An arm's replicate is left out of its spread and rotation when the arm is censored in it (an
unfinished task or a cap hit): listed, never counted as a low score. Determinism reads the
calls of kind 'attempt' that succeeded and carry a request hash (ledgers from before m013 have
none, and say so).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from agent.ledger import Ledger
from agent.ledger.report_reads import ok_call_hashes
from agent.metrics.determinism import CallSample, ReplicateOutcomes, determinism, error_bar, rotation

MAX_ROTATION_ROWS = 20
UNDERSTATES = (
    "replicates back to back in one session would understate this model's spread: keep restarting the "
    "server between them (seed 003 result 5)"
)


def _replicate_numbers(runs: list[dict[str, Any]]) -> dict[str, int]:
    ordered = sorted(runs, key=lambda r: (r.get("replicate") or 0, r.get("created_utc") or ""))
    return {r["id"]: r.get("replicate") or i for i, r in enumerate(ordered, start=1)}


def _samples(ledger: Ledger, run_ids: list[str]) -> tuple[dict[str, list[CallSample]], dict[str, bool]]:
    """Per arm: its successful attempt calls as samples, and whether every session was known."""
    rows = ok_call_hashes(ledger, run_ids)
    samples: dict[str, list[CallSample]] = defaultdict(list)
    known: dict[str, bool] = defaultdict(lambda: True)
    for r in rows:
        session = r["server_session_id"]
        known[r["arm"]] &= session is not None
        samples[r["arm"]].append(
            CallSample(session or f"run {r['run_id']}", r["request_sha256"], r["response_sha256"] or "")
        )
    return samples, known


def replicate_statistics(
    ledger: Ledger,
    runs: list[dict[str, Any]],
    outcomes: dict[str, dict[str, list[Any]]],
    *,
    seed: int,
    resamples: int = 10_000,
) -> dict[str, Any]:
    """Per arm: error bar, rotation and determinism over `runs` (one manifest; `outcomes` maps
    run id -> arm -> task outcomes with .task_id, .accepted, .censored)."""
    numbers = _replicate_numbers(runs)
    run_ids = [r["id"] for r in runs]
    arm_rows = {(row["run_id"], row["name"]): row for rid in run_ids for row in ledger.arms(rid)}
    samples, known = _samples(ledger, run_ids)
    arms = {}
    for name in sorted({arm for per_run in outcomes.values() for arm in per_run}):
        reps, models = [], []
        for rid in sorted(run_ids, key=lambda r: numbers.get(r, 0)):
            if name not in outcomes[rid]:
                continue
            row = arm_rows.get((rid, name), {})
            models.append(row.get("model") or "")
            task_outcomes = outcomes[rid][name]
            censored = bool(row.get("censored")) or any(o.censored for o in task_outcomes)
            reps.append(
                ReplicateOutcomes(
                    rid, numbers[rid], censored, {o.task_id: bool(o.accepted) for o in task_outcomes if not o.censored}
                )
            )
        arms[name] = {
            "models": sorted(set(models)),
            "error_bar": error_bar(reps, seed=seed, resamples=resamples),
            "rotation": rotation(reps),
            "determinism": determinism(samples.get(name, [])),
            "sessions_known": known[name] if name in samples else None,
        }
    return {
        "n_runs": len(runs),
        "replicates": [numbers[r] for r in run_ids],
        "arms": arms,
        "bootstrap": {"seed": seed, "resamples": resamples, "unit": "replicate and task (two-level)"},
    }


def _rate(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def _determinism_line(name: str, a: dict[str, Any]) -> str:
    d = a["determinism"]
    if a["sessions_known"] is None:
        return f"{name}: no calls with a request hash (a ledger from before issue 17)"
    where, across = ("session", "restarts") if a["sessions_known"] else ("run", "runs")
    flag = d["flag"] if a["sessions_known"] else d["flag"].replace("session", "run").replace("restarts", "runs")
    facts = []
    if d["within"]:
        facts.append(
            f"within one {where} {d['within_identical']} of {d['within']} repeated requests got the same reply"
        )
    if d["across"]:
        facts.append(
            f"across {across} {d['across_identical']} of {d['across']} requests got the same reply "
            f"({d['sessions']} {where}s)"
        )
    if not a["sessions_known"]:
        facts.append("server restarts are not known: the endpoint was not started by quotabench")
    return f"{name}: {flag}" + (f" — {'; '.join(facts)}" if facts else "")


def replicate_stats_blocks(stats: dict[str, Any]) -> list[tuple[Any, ...]]:
    boot = stats["bootstrap"]
    blocks: list[tuple[Any, ...]] = [("heading", f"Error bars per model over {stats['n_runs']} replicates (seed 003)")]
    rows, left_out = [], []
    for name, a in stats["arms"].items():
        eb = a["error_bar"]
        lo_hi = "—" if eb["ci"] is None else f"[{eb['ci'][0]:.2f}, {eb['ci'][1]:.2f}]"
        rows.append(
            [
                name,
                ", ".join(a["models"]) or "—",
                f"{len(eb['replicates'])} of {stats['n_runs']}",
                ", ".join(_rate(x) for x in eb["acceptance"]) or "—",
                _rate(eb["mean"]),
                _rate(eb["range"]),
                _rate(eb["sd"]),
                f"{lo_hi} n={eb['n_tasks']} tasks",
            ]
        )
        left_out += [
            f"{name}: replicate {x['replicate']} (run {x['run_id']}) censored — not comparable, left out "
            "of the spread and the rotation"
            for x in eb["left_out"]
        ]
    blocks.append(
        (
            "table",
            [
                "arm",
                "model",
                "replicates",
                "acceptance per replicate",
                "mean",
                "range",
                "SD",
                "95% CI (replicates × tasks)",
            ],
            rows,
        )
    )
    blocks.append(
        (
            "lines",
            left_out
            + [
                f"CI: two-level bootstrap of the mean pass rate, resampling the replicates (sessions) and the "
                f"tasks independently ({boot['resamples']:,} resamples, seed {boot['seed']}), so the spread "
                "across replicates is in it: the model's own error bar (result 4)"
            ],
        )
    )
    for name, a in stats["arms"].items():
        rot = a["rotation"]
        title = (
            f"{name}: failure rotation over replicates {', '.join(map(str, rot['replicates'])) or '—'} "
            f"(n={rot['n_tasks']} tasks: {rot['always_accepted']} always accepted, {rot['never_accepted']} "
            f"never, {len(rot['rotating'])} rotating)"
        )
        if not rot["rotating"]:
            blocks.append(("lines", [f"{title}: the same verdicts in every replicate"]))
            continue
        table = [
            [r["task_id"], *("✓" if x else "✗" for x in r["accepted"]), f"{r['passed']}/{r['n']}"]
            for r in rot["rotating"][:MAX_ROTATION_ROWS]
        ]
        more = len(rot["rotating"]) - MAX_ROTATION_ROWS
        blocks.append(("lines", [title + ":"]))
        blocks.append(("table", ["task", *(f"r{n}" for n in rot["replicates"]), "accepted"], table))
        if more > 0:
            blocks.append(("lines", [f"... and {more} more rotating tasks"]))
    lines = [_determinism_line(name, a) for name, a in stats["arms"].items()]
    understated = [
        name
        for name, a in stats["arms"].items()
        if a["sessions_known"] and a["determinism"]["flag"].startswith("deterministic within a session, varies")
    ]
    if understated:
        lines.append(f"{', '.join(understated)}: {UNDERSTATES}")
    blocks.append(("section", "determinism (identical requests: the same conversation at the same settings):", lines))
    return blocks
