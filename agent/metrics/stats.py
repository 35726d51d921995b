"""Statistics with no knowledge of the ledger: intervals, pass@k, paired tests, power.

Every function here is checked in tests against an independent reference (published worked
numbers, brute-force enumeration, scipy, a plain-loop bootstrap) and hypothesis properties.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

WILSON_Z = 1.96
BISECTION_STEPS = 80  # halvings of [-1, 1]: far below float resolution
BOOTSTRAP_CHUNK = 1 << 21  # task indices drawn at once by a bootstrap: ~25 MB, whatever the task count


def z_two_sided(alpha: float) -> float:
    """The standard normal quantile z_{1-α/2} (stdlib, so scipy stays off the import path)."""
    return NormalDist().inv_cdf(1 - alpha / 2)


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


def median_of_sorted(arr: np.ndarray) -> float:
    """np.median of a sorted, non-empty, nan-free array, to the bit (the mean of its middle one or
    two), without the 14 ms of numpy.ma that np.median imports on first use."""
    mid = arr.size // 2
    return float(arr[mid] if arr.size % 2 else arr[mid - 1 : mid + 1].mean())


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


def _draw_and_fold(
    rng: np.random.Generator, n: int, resamples: int, chunk_elements: int, fold: Callable[[int, np.ndarray], None]
) -> None:
    """Draw `resamples` rows of n task indices, a chunk of rows at a time, and fold(start, idx)
    each chunk. Large runs fold chunk k on a second thread while chunk k + 1 is drawn (numpy
    releases the GIL in both); each chunk writes only its own rows, so the result is the same
    either way."""
    rows = max(1, chunk_elements // n)
    with ThreadPoolExecutor(1) if resamples * n > 2 * chunk_elements else contextlib.nullcontext() as pool:
        folding = None
        for start in range(0, resamples, rows):
            # int32 draws the very same stream as the default int64, at half the cost
            idx = rng.integers(0, n, size=(min(rows, resamples - start), n), dtype=np.int32)
            if pool is None:
                fold(start, idx)
                continue
            if folding is not None:
                folding.result()
            folding = pool.submit(fold, start, idx)
        if folding is not None:
            folding.result()


def _resample(
    values: np.ndarray,
    rng: np.random.Generator,
    resamples: int,
    reduce: Callable[..., Any],
    out_dtype: Any,
    chunk_elements: int,
) -> np.ndarray:
    """reduce(values[idx]) row by row for `resamples` rows of n task indices drawn from `rng`.

    The rows are drawn a chunk at a time (at most `chunk_elements` indices held at once) rather
    than as one resamples × n matrix (2 GB at 50,000 tasks): numpy's generator hands out the
    same stream either way, so the result for a seed does not depend on the chunk size.
    """
    n = values.size
    out = np.empty(resamples, dtype=out_dtype)

    def fold(start: int, idx: np.ndarray) -> None:
        # the gather is faster with native-width indices
        out[start : start + len(idx)] = reduce(values.take(idx.astype(np.intp), mode="wrap"))

    _draw_and_fold(rng, n, resamples, chunk_elements, fold)
    return out


def resample_sums(
    columns: np.ndarray, *, seed: int, resamples: int = 10_000, chunk_elements: int = BOOTSTRAP_CHUNK
) -> np.ndarray:
    """Column sums of `columns` (n tasks × k) over `resamples` bootstrap samples of the n tasks:
    (resamples × k). The task draws are paired_bootstrap's own for the same seed and n (one
    generator stream, whatever the chunking), so figures computed from these sums resample the
    very tasks its acceptance interval resampled."""
    n, k = columns.shape
    if n == 0:
        raise ValueError("resample_sums: no tasks")
    rng = np.random.default_rng(seed)
    values = np.ascontiguousarray(columns, dtype=np.float64)
    out = np.empty((resamples, k), dtype=np.float64)

    def fold(start: int, idx: np.ndarray) -> None:
        # A sample's sums are its task counts times the columns: one count per drawn index and a
        # matrix product, where gathering k values per index moved k times the memory.
        counts = np.empty((len(idx), n), dtype=np.float64)
        for row, drawn in enumerate(idx):
            counts[row] = np.bincount(drawn, minlength=n)
        out[start : start + len(idx)] = counts @ values

    # One BLAS thread: the draws already keep the other core busy, and OpenBLAS's spinning
    # workers took it from them (4.2 s instead of 2.7 s at 50,000 tasks on 2 cores).
    with threadpool_limits(1, user_api="blas"):
        _draw_and_fold(rng, n, resamples, chunk_elements, fold)
    return out


def paired_gap_of(d: np.ndarray, sums: np.ndarray, *, seed: int, resamples: int) -> PairedGap:
    """paired_bootstrap's result from resampled sums of d = b - a (resample_sums' column)."""
    n = d.size
    gaps = sums / n
    lo, hi = np.quantile(gaps, [0.025, 0.975], method="lower")
    return PairedGap(
        gap=float(d.sum() / n),
        lo=float(lo),
        hi=float(hi),
        p_positive=float(np.mean(gaps > 0)),
        n=n,
        seed=seed,
        resamples=resamples,
    )


def paired_bootstrap(
    a: Sequence[int], b: Sequence[int], *, seed: int, resamples: int = 10_000, chunk_elements: int = BOOTSTRAP_CHUNK
) -> PairedGap:
    """Paired bootstrap of mean(b) - mean(a), resampling tasks (never attempts), seed 000.

    a[i] and b[i] are 0/1 outcomes of the two arms on task i. Resamples are drawn in chunks
    of rows (`_resample`); quantiles use seed 000's rule, gaps[floor(p * (iters - 1))].
    """
    d = np.asarray(b, dtype=np.int64) - np.asarray(a, dtype=np.int64)
    n = d.size
    if n == 0:
        raise ValueError("paired_bootstrap: no paired tasks")
    rng = np.random.default_rng(seed)
    sums = _resample(
        d.astype(np.int8), rng, resamples, lambda m: m.sum(axis=1, dtype=np.int64), np.int64, chunk_elements
    )
    gaps = sums / n
    lo, hi = np.quantile(gaps, [0.025, 0.975], method="lower")
    return PairedGap(
        gap=float(d.sum() / n),
        lo=float(lo),
        hi=float(hi),
        p_positive=float(np.mean(gaps > 0)),
        n=n,
        seed=seed,
        resamples=resamples,
    )


def bootstrap_mean(
    values: Sequence[float],
    *,
    seed: int,
    resamples: int = 10_000,
    level: float = 0.95,
    chunk_elements: int = BOOTSTRAP_CHUNK,
) -> tuple[float, float]:
    """Percentile interval of the mean of per-task values, resampling tasks (seed 000/001:
    "resample problems, not attempts"); same quantile rule and chunked draws as the paired bootstrap."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        raise ValueError("bootstrap_mean: no tasks")
    rng = np.random.default_rng(seed)
    means = _resample(v, rng, resamples, lambda m: m.mean(axis=1), np.float64, chunk_elements)
    tail = (1 - level) / 2
    lo, hi = np.quantile(means, [tail, 1 - tail], method="lower")
    return float(lo), float(hi)


@dataclass(frozen=True)
class McNemar:
    """Exact McNemar test on the discordant tasks of two paired arms."""

    only_a: int
    only_b: int
    p_value: float


def binomial_two_sided_half(k: int, n: int) -> float:
    """Exact two-sided binomial p-value of k successes in n trials at p = 1/2.

    The distribution is symmetric, so "outcomes no likelier than k" (scipy's rule) are the two
    tails beyond m = min(k, n - k): p = min(1, 2 · Σ_{i ≤ m} C(n, i) / 2^n), in exact integers
    until the one (correctly rounded) division. The sum runs down from C(n, m), each term from
    the one before, and stops once the terms left, bounded by a geometric series, cannot change
    that division's float: at 50,000 discordant tasks that is ~2,000 of the 25,000 terms.
    """
    if not 0 <= k <= n:
        raise ValueError(f"binomial_two_sided_half: need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 1.0
    whole = 2**n
    i = min(k, n - k)
    term = tail = math.comb(n, i)
    while i > 0:
        term = term * i // (n - i + 1)  # C(n, i - 1), exactly
        i -= 1
        tail += term
        if i % 64 == 0 and i:
            # the terms below C(n, i) shrink by at most i / (n - i + 1) < 1 each step
            left = term * i // (n - 2 * i + 1) + 1
            p = min(1.0, 2 * tail / whole)
            if p == min(1.0, 2 * (tail + left) / whole):
                return float(p)
    return float(min(1.0, 2 * tail / whole))


def mcnemar_exact(a: Sequence[int], b: Sequence[int]) -> McNemar:
    """Exact (binomial) McNemar: discordant tasks split 50/50 under H0, two-sided."""
    a_arr, b_arr = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    only_a = int(np.sum(a_arr & ~b_arr))
    only_b = int(np.sum(b_arr & ~a_arr))
    return McNemar(only_a=only_a, only_b=only_b, p_value=binomial_two_sided_half(only_b, only_a + only_b))


def min_discordant_to_reject(alpha: float) -> int:
    """The fewest discordant tasks with which the exact McNemar test can reject at `alpha`:
    with all k on one side p = 2 · 0.5^k, so k = 6 at α = 0.05 (2 · 0.5^6 < 0.05 < 2 · 0.5^5)."""
    return next(k for k in range(1, 1100) if 2 * 0.5**k < alpha)


@dataclass(frozen=True)
class PairedInterval:
    """Tango's score interval for the paired gap b - a (seed 000's paired question, done so it
    keeps its coverage at small n and never collapses to a point)."""

    gap: float
    lo: float
    hi: float
    n: int
    only_a: int
    only_b: int
    level: float
    method: str = "Tango score"


def _tango_statistic(delta: float, n12: int, n21: int, n: int) -> float:
    """Tango's score statistic at Δ: (n12 - n21 - nΔ) / sqrt(n (2 p̃21 + Δ(1 - Δ))), with p̃21 the
    maximum-likelihood p21 under the constraint p12 - p21 = Δ (a quadratic's positive root)."""
    a = 2 * n
    b = -n12 - n21 + (2 * n - n12 + n21) * delta
    c = -n21 * delta * (1 - delta)
    p21 = (math.sqrt(max(0.0, b * b - 4 * a * c)) - b) / (2 * a)
    numerator = n12 - n21 - n * delta
    variance = n * (2 * p21 + delta * (1 - delta))
    if variance <= 0:
        return math.copysign(math.inf, numerator) if numerator else 0.0
    return numerator / math.sqrt(variance)


def tango_interval(only_a: int, only_b: int, n: int, alpha: float = 0.05) -> PairedInterval:
    """Score interval for π_b - π_a from n paired 0/1 outcomes (Tango 1998, Stat Med 17:891).

    Like the exact McNemar test it depends only on the discordant counts and n. The set
    {Δ : |T(Δ)| ≤ z} is found by bisection (T falls as Δ rises). Unlike the percentile
    bootstrap it keeps close to nominal coverage at small n, and unlike Newcombe's method 10
    it never has zero width: with every pair agreeing it is ±z²/(n + z²).
    """
    if n <= 0 or only_a < 0 or only_b < 0 or only_a + only_b > n:
        raise ValueError(f"tango_interval: need 0 <= only_a + only_b <= n, n > 0; got {only_a}, {only_b}, {n}")
    z = z_two_sided(alpha)
    gap = (only_b - only_a) / n

    def root(lo: float, hi: float, target: float) -> float:
        for _ in range(BISECTION_STEPS):
            mid = (lo + hi) / 2
            if _tango_statistic(mid, only_b, only_a, n) > target:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    lower = -1.0 if gap == -1 else root(-1.0, gap, z)
    upper = 1.0 if gap == 1 else root(gap, 1.0, -z)
    return PairedInterval(gap=gap, lo=lower, hi=upper, n=n, only_a=only_a, only_b=only_b, level=1 - alpha)


def tasks_needed_for_power(p1: float, p2: float, alpha: float = 0.05, power: float = 0.80) -> int | None:
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
    z = z_two_sided(alpha) + NormalDist().inv_cdf(power)
    variance = p1 * (1 - p1) + p2 * (1 - p2)
    normal = math.ceil(z * z * variance / (p1 - p2) ** 2)
    return max(1, normal, math.ceil(min_discordant_to_reject(alpha) / abs(p1 - p2)))
