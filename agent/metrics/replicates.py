"""Replicates: several runs of one manifest. Refuses runs whose manifests differ (saying what
differs), then gives each arm's score median and range, each task's failure frequency and
pass@k over runs with an interval over tasks, and whether the replicates ran in one session
or on different days. Runs in which an arm is not comparable are left out of its spread.

The error bar belongs to the model, failure lists rotate between runs, and back-to-back
replicates in one session understate the spread.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import numpy as np

from agent.metrics.errors import ReportError
from agent.metrics.outcome import TaskOutcome
from agent.metrics.stats import bootstrap_mean, median_of_sorted, pass_at_k

HELD_CONSTANTS = (
    "suites_json",
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


def _flatten(value: Any, prefix: str) -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, sub in value.items():
            out.update(_flatten(sub, f"{prefix}.{key}"))
        return out
    return {prefix: value}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def manifest_differences(
    run_a: dict[str, Any], run_b: dict[str, Any], tasks_a: list[dict[str, Any]], tasks_b: list[dict[str, Any]]
) -> list[str]:
    """What the ledger records differently for two runs: config keys, held constants, tasks."""
    diffs = []
    config_a = _flatten(json.loads(run_a.get("config_json") or "{}"), "config")
    config_b = _flatten(json.loads(run_b.get("config_json") or "{}"), "config")
    for key in sorted(config_a.keys() | config_b.keys()):
        if config_a.get(key) != config_b.get(key):
            diffs.append(f"{key}: {_short(config_a.get(key))} vs {_short(config_b.get(key))}")
    for key in HELD_CONSTANTS:
        if run_a.get(key) != run_b.get(key):
            diffs.append(f"{key}: {_short(run_a.get(key))} vs {_short(run_b.get(key))}")
    files_a = {t["task_id"]: t.get("files_sha256") for t in tasks_a}
    files_b = {t["task_id"]: t.get("files_sha256") for t in tasks_b}
    only_a, only_b = files_a.keys() - files_b.keys(), files_b.keys() - files_a.keys()
    if only_a or only_b:
        diffs.append(f"tasks: {len(only_a)} only in the first, {len(only_b)} only in the second")
    changed = sorted(t for t in files_a.keys() & files_b.keys() if files_a[t] != files_b[t])
    if changed:
        diffs.append(f"task files changed: {', '.join(changed[:3])}{' ...' if len(changed) > 3 else ''}")
    return diffs


def check_same_manifest(runs: list[dict[str, Any]], tasks_by_run: dict[str, list[dict[str, Any]]]) -> None:
    """ReportError (one line, both hashes and what differs) unless all runs share a manifest."""
    first = runs[0]
    for other in runs[1:]:
        if other["manifest_sha256"] and other["manifest_sha256"] == first["manifest_sha256"]:
            continue
        diffs = manifest_differences(first, other, tasks_by_run[first["id"]], tasks_by_run[other["id"]])
        if diffs:
            what = "; ".join(diffs[:5]) + (f"; and {len(diffs) - 5} more" if len(diffs) > 5 else "")
        else:
            what = "nothing the ledger records (the difference is in files it does not hold)"
        raise ReportError(
            f"runs {first['id']} (manifest {first['manifest_sha256']}) and {other['id']} "
            f"(manifest {other['manifest_sha256']}) have different manifests, so they are not "
            f"replicates — differs: {what} — report them separately"
        )


def schedule(runs: list[dict[str, Any]], server_sessions: dict[str, set[str]] | None = None) -> dict[str, Any]:
    """Which replicates ran back to back in one session and which on different days (seed 003 r5).
    `server_sessions` maps run id -> the sessions of the servers quotabench started for it: runs
    in one shell session whose servers were restarted in between are not "back to back"."""
    rows = [
        {
            "run_id": r["id"],
            "created_utc": r["created_utc"],
            "day": (r["created_utc"] or "")[:10],
            "session_id": r.get("session_id"),
        }
        for r in sorted(runs, key=lambda r: r["created_utc"] or "")
    ]
    sessions = {r["session_id"] for r in rows}
    days = {r["day"] for r in rows}
    if len(days) > 1:
        kind, note = "different days", f"replicates span {len(sessions)} sessions on {len(days)} days"
    elif len(sessions) > 1:
        kind, note = (
            "one day",
            (
                f"replicates span {len(sessions)} sessions but one day — "
                "a cross-day replicate would test more (seed 003 result 5)"
            ),
        )
    elif _restarted(rows, server_sessions or {}):
        kind, note = (
            "servers restarted",
            (
                "replicates ran one after another, each on a freshly started server "
                "session — a cross-day replicate would test more (seed 003 result 5)"
            ),
        )
    else:
        kind, note = (
            "one session",
            (
                "all replicates ran back to back in one session — their spread "
                "understates the error bar; space them across days (seed 003 result 5)"
            ),
        )
    return {"kind": kind, "sessions": len(sessions), "days": len(days), "runs": rows, "note": note}


def _restarted(rows: list[dict[str, Any]], server_sessions: dict[str, set[str]]) -> bool:
    """Every run talked to servers of its own (no server session shared between two runs)."""
    seen: set[str] = set()
    for row in rows:
        own = server_sessions.get(row["run_id"]) or set()
        if not own or own & seen:
            return False
        seen |= own
    return True


def _spread(scores: list[int]) -> tuple[float | None, int | None]:
    return (
        (median_of_sorted(np.sort(np.asarray(scores, dtype=np.float64))), max(scores) - min(scores))
        if scores
        else (None, None)
    )


def _frequency(outcomes_per_run: list[list[TaskOutcome]]) -> list[dict[str, Any]]:
    failed: dict[str, int] = defaultdict(int)
    finished: dict[str, int] = defaultdict(int)
    for run in outcomes_per_run:
        for o in run:
            if o.decided:
                finished[o.task_id] += 1
                failed[o.task_id] += not o.accepted
    return sorted(
        ({"task_id": t, "failed": failed[t], "n": finished[t]} for t in finished if failed[t]),
        key=lambda f: (-f["failed"] / f["n"], f["task_id"]),
    )


def _pass_at_k(
    outcomes_per_run: list[list[TaskOutcome]], tasks: list[str], ks: tuple[int, ...], *, seed: int, resamples: int
) -> dict[str, Any]:
    """pass@k over runs (each run one sample per task), averaged over `tasks`, with a bootstrap
    interval resampling tasks (seeds 000 and 001)."""
    n = len(outcomes_per_run)
    accepted = {t: 0 for t in tasks}
    for run in outcomes_per_run:
        for o in run:
            if o.task_id in accepted and o.accepted:
                accepted[o.task_id] += 1
    out = {}
    for k in ks:
        values = [pass_at_k(n, accepted[t], k) for t in tasks]
        lo, hi = bootstrap_mean(values, seed=seed, resamples=resamples)
        out[str(k)] = {"value": float(np.mean(values)), "lo": lo, "hi": hi}
    return out


def replicate_summary(
    runs: list[dict[str, Any]],
    outcomes: dict[str, dict[str, list[TaskOutcome]]],
    *,
    not_comparable: dict[tuple[str, str], str] | None = None,
    seed: int = 1,
    resamples: int = 10_000,
    server_sessions: dict[str, set[str]] | None = None,
) -> dict[str, Any]:
    """Per arm: accepted tasks per comparable run with median and range, the runs left out
    (censored, stopped or aborted: a missing measurement, never the bottom of the range),
    each task's failure frequency, and pass@1 / pass@k over runs with a bootstrap interval
    over tasks. pass@k uses the same k and the same tasks for every arm: k = the fewest
    comparable runs of any arm, tasks = those every comparable run of every arm decided.

    `outcomes` maps run id -> arm name -> task outcomes; `not_comparable` maps (run id, arm)
    -> why. Never read one run's failure list as the model's weak spots: the frequencies are
    the finding (seed 003 result 6).
    """
    not_comparable = not_comparable or {}
    arm_names = sorted({arm for per_run in outcomes.values() for arm in per_run})
    ordered = [r["id"] for r in runs]
    kept: dict[str, list[str]] = {}
    arms: dict[str, dict[str, Any]] = {}
    for arm in arm_names:
        present = [run_id for run_id in ordered if arm in outcomes[run_id]]
        kept[arm] = [r for r in present if (r, arm) not in not_comparable]
        scores = [sum(o.accepted for o in outcomes[r][arm]) for r in kept[arm]]
        median, spread = _spread(scores)
        arms[arm] = {
            "runs": len(kept[arm]),
            "run_ids": kept[arm],
            "scores": scores,
            "n_tasks": [len(outcomes[r][arm]) for r in kept[arm]],
            "median": median,
            "range": spread,
            "left_out": [{"run_id": r, "why": not_comparable[(r, arm)]} for r in present if r not in kept[arm]],
            "failure_frequency": _frequency([outcomes[r][arm] for r in kept[arm]]),
        }
        freq = arms[arm]["failure_frequency"]
        arms[arm]["failed_every_run"] = sum(f["failed"] == f["n"] for f in freq)
        arms[arm]["failed_at_least_once"] = len(freq)
    with_runs = [a for a in arm_names if kept[a]]
    own: dict[str, set[str]] = {}
    for arm in with_runs:
        sets = [{o.task_id for o in outcomes[r][arm] if o.decided} for r in kept[arm]]
        own[arm] = set.intersection(*sets)
    common = set.intersection(*own.values()) if own else set()
    task_order = [o.task_id for o in outcomes[ordered[0]][arm_names[0]]] if arm_names else []
    tasks = [t for t in task_order if t in common] + sorted(common - set(task_order))
    k = min((len(kept[a]) for a in with_runs), default=0)
    for arm in arm_names:
        arms[arm]["pass_at_k"] = (
            _pass_at_k(
                [outcomes[r][arm] for r in kept[arm]],
                tasks,
                tuple(dict.fromkeys((1, k))),
                seed=seed,
                resamples=resamples,
            )
            if arm in own and tasks
            else {}
        )
        arms[arm]["own_tasks"] = len(own.get(arm, ()))
    differs = {a: len(own[a]) for a in with_runs if len(own[a]) != len(tasks)}
    note = None
    if differs:
        note = f"pass@k is over the {len(tasks)} tasks that every comparable run of every arm decided; " + ", ".join(
            f"{a} alone decided {n}" for a, n in differs.items()
        )
    return {
        "n_runs": len(runs),
        "manifest_sha256": runs[0]["manifest_sha256"],
        "schedule": schedule(runs, server_sessions),
        "arms": arms,
        "pass_at_k": {
            "k": k,
            "n_tasks": len(tasks),
            "note": note,
            "resamples": resamples,
            "seed": seed,
            "unit": "task",
        },
    }
