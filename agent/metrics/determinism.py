"""Replicate statistics: pure functions, no ledger.

- `error_bar`: one arm's acceptance in each replicate, their spread (the model's own error bar)
  and a 95% interval over tasks (bootstrap of the mean per-task pass rate). A replicate in
  which the arm is censored is listed and left out: it is a missing measurement, not a low score.
- `rotation`: tasks that pass in some replicates and fail in others (failure lists rotate;
  never read one run's list as what a model cannot do).
- `determinism`: identical requests (same conversation, same settings: same request hash)
  within one server session vs across sessions. A server deterministic within a session
  varies across restarts, so back-to-back replicates in one session understate the error bar.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

LEVEL = 0.95
CHUNK = 2_000  # resamples drawn at once: bounded memory for large suites


@dataclass(frozen=True)
class ReplicateOutcomes:
    """One arm in one replicate: accepted or not per decided task; censored = not comparable."""

    run_id: str
    replicate: int
    censored: bool
    accepted: dict[str, bool]


@dataclass(frozen=True)
class CallSample:
    """One successful call: the server session it went to, what was asked, what came back."""

    session: str
    request: str
    response: str


def bootstrap_mean_ci(
    values: list[float], *, seed: int, resamples: int = 10_000, level: float = LEVEL
) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(values), resampling the values (here: tasks)."""
    data = np.asarray(values, dtype=np.float64)
    n = data.size
    if n == 0:
        raise ValueError("bootstrap_mean_ci: no values")
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    for start in range(0, resamples, CHUNK):
        size = min(CHUNK, resamples - start)
        means[start : start + size] = data[rng.integers(0, n, size=(size, n))].mean(axis=1)
    tail = (1 - level) / 2
    lo, hi = np.quantile(means, [tail, 1 - tail])
    return float(lo), float(hi)


def _kept(replicates: list[ReplicateOutcomes]) -> tuple[list[ReplicateOutcomes], list[str]]:
    """The comparable replicates, and the tasks every one of them decided (in first-seen order)."""
    kept = [r for r in replicates if not r.censored]
    if not kept:
        return kept, []
    common = set.intersection(*(set(r.accepted) for r in kept))
    return kept, [t for t in kept[0].accepted if t in common]


def two_level_ci(
    matrix: np.ndarray, *, seed: int, resamples: int = 10_000, level: float = LEVEL
) -> tuple[float, float]:
    """Percentile interval of the mean of a replicates × tasks 0/1 matrix, resampling both the
    replicates (sessions) and the tasks, independently (the crossed two-way bootstrap): each
    resample's mean is counts_r · M · counts_t / (R n), with multinomial counts of each draw.
    A replicate-to-replicate spread widens it, which a bootstrap over tasks alone never shows."""
    r, n = matrix.shape
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    step = max(1, min(CHUNK, 2_000_000 // max(n, r)))  # draws held at once: bounded for large suites

    def counts(draws: np.ndarray, k: int) -> np.ndarray:
        offsets = np.arange(draws.shape[0])[:, None] * k
        return np.bincount((draws + offsets).ravel(), minlength=draws.shape[0] * k).reshape(-1, k).astype(np.float64)

    for start in range(0, resamples, step):
        size = min(step, resamples - start)
        row_counts = counts(rng.integers(0, r, size=(size, r)), r)
        col_counts = counts(rng.integers(0, n, size=(size, n)), n)
        means[start : start + size] = np.einsum("br,rt,bt->b", row_counts, matrix, col_counts) / (r * n)
    tail = (1 - level) / 2
    lo, hi = np.quantile(means, [tail, 1 - tail])
    return float(lo), float(hi)


def error_bar(replicates: list[ReplicateOutcomes], *, seed: int, resamples: int = 10_000) -> dict[str, Any]:
    """Acceptance per comparable replicate with mean, range and standard deviation across them,
    and the 95% interval of the mean pass rate resampling replicates and tasks (two_level_ci)."""
    kept, tasks = _kept(replicates)
    left_out = [{"run_id": r.run_id, "replicate": r.replicate} for r in replicates if r.censored]
    out = {
        "replicates": [r.replicate for r in kept],
        "left_out": left_out,
        "n_tasks": len(tasks),
        "acceptance": [],
        "mean": None,
        "range": None,
        "sd": None,
        "ci": None,
    }
    if not tasks:
        return out
    matrix = np.array([[r.accepted[t] for t in tasks] for r in kept], dtype=np.float64)  # replicate x task
    per_replicate = matrix.mean(axis=1)
    out["acceptance"] = [float(a) for a in per_replicate]
    out["mean"] = float(per_replicate.mean())
    out["range"] = float(per_replicate.max() - per_replicate.min())
    out["sd"] = float(per_replicate.std(ddof=1)) if len(kept) > 1 else None
    out["ci"] = list(two_level_ci(matrix, seed=seed, resamples=resamples))
    return out


def rotation(replicates: list[ReplicateOutcomes]) -> dict[str, Any]:
    """Per task over the comparable replicates: always accepted, never, or rotating (with its
    verdict in each replicate, in order)."""
    kept, tasks = _kept(replicates)
    rotating: list[dict[str, Any]] = []
    always = never = 0
    for task in tasks:
        marks = [kept_r.accepted[task] for kept_r in kept]
        if all(marks):
            always += 1
        elif not any(marks):
            never += 1
        else:
            rotating.append({"task_id": task, "accepted": marks, "passed": sum(marks), "n": len(marks)})
    rotating.sort(key=lambda r: (int(r["passed"]) / int(r["n"]), str(r["task_id"])))
    return {
        "replicates": [r.replicate for r in kept],
        "n_tasks": len(tasks),
        "always_accepted": always,
        "never_accepted": never,
        "rotating": rotating,
    }


def determinism(samples: list[CallSample]) -> dict[str, Any]:
    """Do identical requests get identical replies within one session, and across sessions?

    within: requests sent at least twice in one session, and how many always got the same
    reply there. across: requests seen in two or more sessions, and how many got the same
    reply in every session (each session's first reply stands for it)."""
    by_request: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for s in samples:
        by_request[s.request][s.session].append(s.response)
    within = within_same = across = across_same = 0
    for sessions in by_request.values():
        for replies in sessions.values():
            if len(replies) > 1:
                within += 1
                within_same += len(set(replies)) == 1
        if len(sessions) > 1:
            across += 1
            across_same += len({replies[0] for replies in sessions.values()}) == 1
    sessions_seen = {s.session for s in samples}
    return {
        "within": within,
        "within_identical": within_same,
        "across": across,
        "across_identical": across_same,
        "sessions": len(sessions_seen),
        "requests": len(by_request),
        "flag": _flag(within, within_same, across, across_same),
    }


def _flag(within: int, within_same: int, across: int, across_same: int) -> str:
    if within and within_same < within:
        return "varies within a session"
    if within and across and across_same < across:
        return "deterministic within a session, varies across restarts"
    if within and across:
        return "deterministic within a session and across restarts"
    if within:
        return "deterministic within a session; across restarts unknown"
    if across:
        return (
            "identical across restarts" if across_same == across else "varies across restarts"
        ) + "; within a session unknown"
    return "unknown: no request was repeated"
