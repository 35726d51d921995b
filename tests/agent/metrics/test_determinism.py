"""determinism.py: error bars, rotation and within-session determinism, against seed 003's published
six runs, a brute-force bootstrap, scipy, and properties (hypothesis)."""

from __future__ import annotations

import itertools
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from agent.metrics.determinism import CallSample, ReplicateOutcomes, bootstrap_mean_ci, determinism, error_bar, rotation

# seed 003 result 6: the champion's six runs over 56 tasks and their failure lists
SEED_003_FAILURES = [
    "Q03 Q05 Q25 Q45 Q50 Q51 Q52",
    "Q03 Q05 Q13 Q25 Q51 Q52",
    "Q03 Q05 Q13 Q25 Q51 Q52",
    "Q03 Q05 Q13 Q26 Q36 Q51",
    "Q01 Q03 Q05 Q13 Q25 Q46 Q49 Q51",
    "Q03 Q25 Q46 Q52",
]
TASKS = [f"Q{i:02d}" for i in range(1, 57)]


def seed_003() -> list[ReplicateOutcomes]:
    return [
        ReplicateOutcomes(f"r{i}", i + 1, False, {t: t not in failed.split() for t in TASKS})
        for i, failed in enumerate(SEED_003_FAILURES)
    ]


def test_seed_003_result_6_rotation_and_spread():
    rot = rotation(seed_003())
    # "Thirteen distinct tasks rotate through the failure slots. Exactly one - Q03 - failed all six times."
    assert rot["never_accepted"] == 1 and len(rot["rotating"]) == 12 and rot["always_accepted"] == 43
    freq = {r["task_id"]: r["n"] - r["passed"] for r in rot["rotating"]}
    assert freq == {
        "Q51": 5,
        "Q25": 5,
        "Q05": 5,
        "Q52": 4,
        "Q13": 4,
        "Q46": 2,
        "Q01": 1,
        "Q26": 1,
        "Q36": 1,
        "Q45": 1,
        "Q49": 1,
        "Q50": 1,
    }
    bar = error_bar(seed_003(), seed=1, resamples=4000)
    scores = [49, 50, 50, 50, 48, 52]  # the post's "49, 50, 50, 50, 48, 52"
    assert bar["acceptance"] == pytest.approx([s / 56 for s in scores])
    assert bar["range"] == pytest.approx(4 / 56) and bar["sd"] == pytest.approx(statistics.stdev(scores) / 56)
    assert bar["mean"] == pytest.approx(sum(scores) / 6 / 56)
    lo, hi = bar["ci"]
    assert lo < bar["mean"] < hi and bar["n_tasks"] == 56


def test_a_censored_replicate_is_listed_and_left_out():
    reps = [
        ReplicateOutcomes("r1", 1, False, {"a": True, "b": False}),
        ReplicateOutcomes("r2", 2, True, {"a": False}),  # censored: b never finished
        ReplicateOutcomes("r3", 3, False, {"a": True, "b": True}),
    ]
    bar = error_bar(reps, seed=1, resamples=1000)
    assert bar["replicates"] == [1, 3] and bar["left_out"] == [{"run_id": "r2", "replicate": 2}]
    assert bar["acceptance"] == [0.5, 1.0] and bar["range"] == 0.5
    rot = rotation(reps)
    assert rot["replicates"] == [1, 3] and [r["task_id"] for r in rot["rotating"]] == ["b"]
    assert error_bar([reps[1]], seed=1)["mean"] is None  # nothing comparable: no bar


def _exact_quantiles(values: list[float], level: float = 0.95) -> tuple[float, float, float]:
    """The exact bootstrap distribution of the mean (every resample enumerated): its quantiles, and
    how far the two tail levels are from a jump of its CDF."""
    n = len(values)
    means = sorted(sum(c) / n for c in itertools.product(values, repeat=n))
    cdf_steps = np.cumsum(np.unique(means, return_counts=True)[1]) / len(means)
    tail = (1 - level) / 2
    gap = min(abs(cdf_steps - tail).min(), abs(cdf_steps - (1 - tail)).min())
    return float(np.quantile(means, tail)), float(np.quantile(means, 1 - tail)), gap


def test_bootstrap_interval_against_the_enumerated_bootstrap():
    values = [0.0, 1 / 3, 2 / 3, 1.0, 1.0]
    lo, hi, gap = _exact_quantiles(values)
    assert gap > 0.003  # the tails sit inside an atom
    assert bootstrap_mean_ci(values, seed=7, resamples=200_000) == pytest.approx((lo, hi), abs=1e-9)


def test_bootstrap_interval_against_scipy():
    rng = np.random.default_rng(3)
    values = list(rng.integers(0, 4, size=40) / 3)
    ours = bootstrap_mean_ci(values, seed=11, resamples=20_000)
    ref = sps.bootstrap(
        (np.asarray(values),), np.mean, method="percentile", n_resamples=20_000, random_state=np.random.default_rng(12)
    ).confidence_interval
    assert ours == pytest.approx((ref.low, ref.high), abs=0.02)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30), st.integers(0, 2**32 - 1))
def test_bootstrap_interval_properties(values, seed):
    lo, hi = bootstrap_mean_ci(values, seed=seed, resamples=500)
    assert min(values) - 1e-12 <= lo <= hi <= max(values) + 1e-12
    if len(set(values)) == 1:
        assert lo == pytest.approx(values[0]) and hi == pytest.approx(values[0])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=4, max_size=4), min_size=1, max_size=6), st.data())
def test_rotation_partitions_the_tasks(rows, data):
    reps = [ReplicateOutcomes(f"r{i}", i, False, {f"t{j}": x for j, x in enumerate(row)}) for i, row in enumerate(rows)]
    rot = rotation(reps)
    assert rot["always_accepted"] + rot["never_accepted"] + len(rot["rotating"]) == 4
    assert all(0 < r["passed"] < r["n"] == len(rows) for r in rot["rotating"])
    shuffled = data.draw(st.permutations(reps))
    assert {r["task_id"] for r in rotation(shuffled)["rotating"]} == {r["task_id"] for r in rot["rotating"]}


def test_determinism_flags():
    same_session = [CallSample("s1", "q1", "a"), CallSample("s1", "q1", "a")]
    restarted = [CallSample("s2", "q1", "b")]
    assert determinism(same_session + restarted)["flag"] == "deterministic within a session, varies across restarts"
    assert (
        determinism(same_session + [CallSample("s2", "q1", "a")])["flag"]
        == "deterministic within a session and across restarts"
    )
    assert determinism([CallSample("s1", "q1", "a"), CallSample("s1", "q1", "x")])["flag"] == "varies within a session"
    assert determinism(same_session)["flag"] == "deterministic within a session; across restarts unknown"
    assert (
        determinism([CallSample("s1", "q1", "a"), CallSample("s2", "q1", "a")])["flag"]
        == "identical across restarts; within a session unknown"
    )
    assert (
        determinism([CallSample("s1", "q1", "a"), CallSample("s1", "q2", "b")])["flag"]
        == "unknown: no request was repeated"
    )
    d = determinism(same_session + restarted + [CallSample("s1", "q2", "c"), CallSample("s2", "q2", "c")])
    assert (d["within"], d["within_identical"], d["across"], d["across_identical"], d["sessions"]) == (1, 1, 2, 1, 2)
