"""Replicates: several runs of one manifest. Refuses runs whose manifests differ (saying what
differs), then gives each arm's score median and range, each task's failure frequency and
pass@k over runs, and whether the replicates ran in one session or on different days.

Seed 003 results 4-6: the error bar belongs to the model, failure lists rotate between runs,
and back-to-back replicates in one session understate the spread.
"""
from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import numpy as np

from agent.metrics.arm import TaskOutcome
from agent.metrics.errors import ReportError
from agent.metrics.stats import mean_pass_at_k

HELD_CONSTANTS = ("suites_json", "harness_version", "prompt_template_version", "python_version",
                  "node_version", "cargo_version", "tsx_version", "isolation_network", "isolation_pids")


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


def manifest_differences(run_a: dict, run_b: dict, tasks_a: list[dict], tasks_b: list[dict]) -> list[str]:
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


def check_same_manifest(runs: list[dict], tasks_by_run: dict[str, list[dict]]) -> None:
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
            f"replicates — differs: {what} — report them separately")


def schedule(runs: list[dict]) -> dict:
    """Which replicates ran back to back in one session and which on different days (seed 003 r5)."""
    rows = [{"run_id": r["id"], "created_utc": r["created_utc"], "day": (r["created_utc"] or "")[:10],
             "session_id": r.get("session_id")} for r in sorted(runs, key=lambda r: r["created_utc"] or "")]
    sessions = {r["session_id"] for r in rows}
    days = {r["day"] for r in rows}
    if len(days) > 1:
        kind, note = "different days", f"replicates span {len(sessions)} sessions on {len(days)} days"
    elif len(sessions) > 1:
        kind, note = "one day", (f"replicates span {len(sessions)} sessions but one day — "
                                 "a cross-day replicate would test more (seed 003 result 5)")
    else:
        kind, note = "one session", ("all replicates ran back to back in one session — their spread "
                                     "understates the error bar; space them across days (seed 003 result 5)")
    return {"kind": kind, "sessions": len(sessions), "days": len(days), "runs": rows, "note": note}


def _arm_replicates(outcomes_per_run: list[list[TaskOutcome]]) -> dict:
    scores = [sum(o.accepted for o in run) for run in outcomes_per_run]
    n_tasks = [len(run) for run in outcomes_per_run]
    failed: dict[str, int] = defaultdict(int)
    finished: dict[str, int] = defaultdict(int)
    accepted: dict[str, int] = defaultdict(int)
    for run in outcomes_per_run:
        for o in run:
            if not o.censored:
                finished[o.task_id] += 1
                failed[o.task_id] += not o.accepted
                accepted[o.task_id] += o.accepted
    frequency = sorted(({"task_id": t, "failed": failed[t], "n": finished[t]} for t in finished if failed[t]),
                       key=lambda f: (-f["failed"] / f["n"], f["task_id"]))
    k_runs = len(outcomes_per_run)
    complete = [(k_runs, accepted[t]) for t in finished if finished[t] == k_runs]
    return {
        "scores": scores, "n_tasks": n_tasks, "median": float(np.median(scores)),
        "range": max(scores) - min(scores), "failure_frequency": frequency,
        "failed_every_run": sum(f["failed"] == f["n"] for f in frequency),
        "failed_at_least_once": len(frequency),
        "pass_at_k": {str(k): mean_pass_at_k(complete, k) for k in (1, k_runs)} if complete else {},
        "pass_at_k_tasks": len(complete),
    }


def replicate_summary(runs: list[dict], outcomes: dict[str, dict[str, list[TaskOutcome]]]) -> dict:
    """Per arm: scores per run with median and range, failure frequency per task, pass@1 and
    pass@k over runs (k = number of runs; tasks every run finished), plus the schedule.

    `outcomes` maps run id -> arm name -> task outcomes. Never read one run's failure list as
    the model's weak spots: the frequencies are the finding (seed 003 result 6).
    """
    arm_names = sorted({arm for per_run in outcomes.values() for arm in per_run})
    ordered = [r["id"] for r in runs]
    arms = {}
    for arm in arm_names:
        present = [outcomes[run_id][arm] for run_id in ordered if arm in outcomes[run_id]]
        arms[arm] = _arm_replicates(present) | {"runs": len(present)}
    return {"n_runs": len(runs), "manifest_sha256": runs[0]["manifest_sha256"],
            "schedule": schedule(runs), "arms": arms}
