"""Statistics with no knowledge of the ledger: intervals, pass@k, paired tests, power.

Every function here is checked in tests against an independent reference (seed 000's worked
numbers, brute-force enumeration, scipy, a plain-loop bootstrap) and hypothesis properties.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
from scipy.stats import binomtest, norm

WILSON_Z = 1.96


def wilson(k: int, n: int, z: float = WILSON_Z) -> tuple[float, float]:
    """Wilson score interval for k successes in n trials, exactly as seed 000 defines it.

    `wilson(57, 120)` is [0.388, 0.564] and `wilson(62, 120)` is [0.428, 0.604] (seed 000).
    With n = 0 nothing is known and the interval is [0, 1].
    """
    if not 0 <= k <= n:
        raise ValueError(f"wilson: need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 0.0, 1.0
    p = k / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = (z / d) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # At k = 0 or k = n the true bound equals p; rounding can land it a hair past p.
    lo = 0.0 if k == 0 else max(0.0, min(centre - half, p))
    hi = 1.0 if k == n else min(1.0, max(centre + half, p))
    return lo, hi


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task with n samples of which c pass (seed 001, Chen et al.).

    1 - C(n-c, k) / C(n, k), computed as 1 - prod_{i=n-c+1..n} (1 - k/i): no large binomials.
    """
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass_at_k: need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def mean_pass_at_k(samples: Iterable[tuple[int, int]], k: int) -> float:
    """pass@k averaged over tasks; `samples` holds one (n, c) pair per task (seed 001)."""
    values = [pass_at_k(n, c, k) for n, c in samples]
    if not values:
        raise ValueError("mean_pass_at_k: no tasks")
    return float(np.mean(values))


@dataclass(frozen=True)
class PairedGap:
    """Acceptance gap b - a over the same tasks, with its bootstrap interval (seed 000)."""
    gap: float
    lo: float
    hi: float
    p_positive: float
    n: int
    seed: int
    resamples: int


def paired_bootstrap(a: Sequence[int], b: Sequence[int], *, seed: int,
                     resamples: int = 10_000) -> PairedGap:
    """Paired bootstrap of mean(b) - mean(a), resampling tasks (never attempts), seed 000.

    a[i] and b[i] are 0/1 outcomes of the two arms on task i. All resamples are drawn in one
    vectorized call; quantiles use seed 000's rule, gaps[floor(p * (iters - 1))].
    """
    d = np.asarray(b, dtype=np.int64) - np.asarray(a, dtype=np.int64)
    n = d.size
    if n == 0:
        raise ValueError("paired_bootstrap: no paired tasks")
    rng = np.random.default_rng(seed)
    # int32 draws the very same stream as the default int64, at half the cost.
    idx = rng.integers(0, n, size=(resamples, n), dtype=np.int32)
    gaps = d.astype(np.int8)[idx].sum(axis=1, dtype=np.int64) / n
    lo, hi = np.quantile(gaps, [0.025, 0.975], method="lower")
    return PairedGap(gap=float(d.sum() / n), lo=float(lo), hi=float(hi),
                     p_positive=float(np.mean(gaps > 0)), n=n, seed=seed, resamples=resamples)


@dataclass(frozen=True)
class McNemar:
    """Exact McNemar test on the discordant tasks of two paired arms."""
    only_a: int
    only_b: int
    p_value: float


def mcnemar_exact(a: Sequence[int], b: Sequence[int]) -> McNemar:
    """Exact (binomial) McNemar: discordant tasks split 50/50 under H0, two-sided."""
    a_arr, b_arr = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    only_a = int(np.sum(a_arr & ~b_arr))
    only_b = int(np.sum(b_arr & ~a_arr))
    discordant = only_a + only_b
    p = 1.0 if discordant == 0 else float(binomtest(only_b, discordant, 0.5).pvalue)
    return McNemar(only_a=only_a, only_b=only_b, p_value=p)


def tasks_needed_for_power(p1: float, p2: float, alpha: float = 0.05,
                           power: float = 0.80) -> int | None:
    """Tasks per arm to detect p1 vs p2 with a two-sided test (seed 000's power check).

    The normal-approximation two-proportion formula seed 000 uses ("a 4-point difference near
    0.5 needs roughly 2,400"): n = (z_{1-α/2} + z_power)^2 (p1 q1 + p2 q2) / (p1 - p2)^2.
    It ignores the pairing, so for paired tasks it errs on the side of too many. None when
    p1 == p2: no study size detects a zero gap. Near 0 and 1 the normal approximation collapses
    (p1 = 1, p2 = 0 gives n = 1), so the result is floored at the smallest study whose exact
    McNemar test could reject at all: it needs at least 6 discordant tasks at α = 0.05
    (2 · 0.5^6 < 0.05 < 2 · 0.5^5), and a gap d yields about n·|d| of them.
    """
    if p1 == p2:
        return None
    z = norm.ppf(1 - alpha / 2) + norm.ppf(power)
    variance = p1 * (1 - p1) + p2 * (1 - p2)
    normal = math.ceil(z * z * variance / (p1 - p2) ** 2)
    min_discordant = next(k for k in range(1, 64) if 2 * 0.5 ** k < alpha)
    return max(1, normal, math.ceil(min_discordant / abs(p1 - p2)))
