"""stats.py against independent references: seed 000/001 worked numbers, brute force, scipy,
a plain-loop bootstrap, and hypothesis properties."""
from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from agent.metrics.stats import (mcnemar_exact, mean_pass_at_k, paired_bootstrap, pass_at_k,
                                 tasks_needed_for_power, wilson)


@pytest.mark.parametrize("k, n, expected", [(57, 120, (0.388, 0.564)), (62, 120, (0.428, 0.604))])
def test_wilson_matches_seed_000(k, n, expected):
    lo, hi = wilson(k, n)
    assert (round(lo, 3), round(hi, 3)) == expected


def test_wilson_edges():
    assert wilson(0, 0) == (0.0, 1.0)
    assert wilson(0, 10)[0] == 0.0
    assert wilson(10, 10)[1] == 1.0
    with pytest.raises(ValueError):
        wilson(5, 4)


@given(st.integers(min_value=0, max_value=100_000).flatmap(
    lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))))
def test_wilson_within_unit_interval_and_contains_estimate(kn):
    k, n = kn
    lo, hi = wilson(k, n)
    p = k / n if n else 0.5
    assert 0.0 <= lo <= p <= hi <= 1.0


def brute_pass_at_k(n: int, c: int, k: int) -> float:
    """Share of all k-subsets of n samples (the first c passing) holding at least one pass."""
    subsets = list(combinations(range(n), k))
    return sum(any(i < c for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n", range(1, 9))
def test_pass_at_k_equals_enumeration(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert pass_at_k(n, c, k) == pytest.approx(brute_pass_at_k(n, c, k), abs=1e-12)


def test_pass_at_k_is_stable_for_large_n():
    value = pass_at_k(2000, 3, 1000)
    exact = 1 - math.comb(1997, 1000) / math.comb(2000, 1000)
    assert value == pytest.approx(exact, rel=1e-12)
    assert pass_at_k(200, 0, 100) == 0.0


def test_pass_at_k_rejects_k_above_n():
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def test_mean_pass_at_k_averages_tasks():
    assert mean_pass_at_k([(4, 1), (4, 0), (4, 4)], 1) == pytest.approx((0.25 + 0 + 1) / 3)


@given(st.integers(min_value=1, max_value=60).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(min_value=0, max_value=n))))
def test_pass_at_k_monotone_in_k(nc):
    n, c = nc
    values = [pass_at_k(n, c, k) for k in range(1, n + 1)]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert all(b >= a - 1e-12 for a, b in zip(values, values[1:]))
    assert values[0] == pytest.approx(c / n)


def exact_mcnemar(b: int, c: int) -> float:
    n = b + c
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


@pytest.mark.parametrize("only_a, only_b, both, neither", [(0, 14, 20, 6), (3, 5, 10, 2), (7, 7, 0, 0), (1, 0, 3, 3)])
def test_mcnemar_equals_scipy_and_hand_computation(only_a, only_b, both, neither):
    a = [1] * only_a + [0] * only_b + [1] * both + [0] * neither
    b = [0] * only_a + [1] * only_b + [1] * both + [0] * neither
    result = mcnemar_exact(a, b)
    assert (result.only_a, result.only_b) == (only_a, only_b)
    assert result.p_value == pytest.approx(binomtest(only_b, only_a + only_b, 0.5).pvalue)
    assert result.p_value == pytest.approx(exact_mcnemar(only_a, only_b))


def test_mcnemar_seed_001_example():
    # seed 001: 14 problems flipped one way, none the other, p = 0.0001
    assert round(mcnemar_exact([1] * 14, [0] * 14).p_value, 4) == 0.0001


def test_mcnemar_without_discordant_tasks_is_one():
    assert mcnemar_exact([1, 0], [1, 0]).p_value == 1.0


def loop_bootstrap(a, b, seed, resamples):
    d = [y - x for x, y in zip(a, b)]
    n = len(d)
    rng = np.random.default_rng(seed)
    gaps = []
    for _ in range(resamples):
        idx = rng.integers(0, n, size=n)
        gaps.append(sum(d[i] for i in idx) / n)
    gaps.sort()

    def q(p):
        return gaps[math.floor(p * (resamples - 1))]  # seed 000's quantile rule
    return q(0.025), q(0.975), sum(g > 0 for g in gaps) / resamples


@pytest.mark.parametrize("n", [1, 7, 13, 40])
def test_vectorized_bootstrap_equals_plain_loop(n):
    rng = np.random.default_rng(n)
    a, b = rng.integers(0, 2, n).tolist(), rng.integers(0, 2, n).tolist()
    result = paired_bootstrap(a, b, seed=20261130, resamples=2000)
    lo, hi, p_pos = loop_bootstrap(a, b, 20261130, 2000)
    assert (result.lo, result.hi, result.p_positive) == (lo, hi, p_pos)
    assert result.gap == (sum(b) - sum(a)) / n


def test_bootstrap_is_reproducible_and_seed_sensitive():
    a, b = [0, 1, 0, 1, 0, 0, 1, 0], [1, 1, 0, 1, 1, 0, 1, 1]
    first = paired_bootstrap(a, b, seed=7)
    assert first == paired_bootstrap(a, b, seed=7)
    assert first.resamples == 10_000 and first.n == 8
    assert first.p_positive != paired_bootstrap(a, b, seed=8).p_positive


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=60),
       st.integers(0, 2**32 - 1))
def test_bootstrap_interval_properties(pairs, seed):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    result = paired_bootstrap(a, b, seed=seed, resamples=500)
    assert -1.0 <= result.lo <= result.hi <= 1.0
    assert 0.0 <= result.p_positive <= 1.0


def test_power_matches_seed_000_rule_of_thumb():
    # seed 000: a 4-point difference near 0.5 at alpha 0.05, 80% power needs "roughly 2,400"
    assert 2300 <= tasks_needed_for_power(0.50, 0.54) <= 2500
    assert tasks_needed_for_power(0.5, 0.5) is None


def test_power_formula_reference():
    # by hand: (1.95996 + 0.84162)^2 * (0.24 + 0.24) / 0.2^2 = 94.2, rounded up
    assert tasks_needed_for_power(0.6, 0.4) == 95
