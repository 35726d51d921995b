"""Deciding early, validly: an anytime-valid paired test and confidence sequence.

The paired comparison acts on a fixed-n confidence bound; checked after every task, such a bound rejects a
true "no difference" far more often than its α. Everything here stays valid under continuous
monitoring and optional stopping:

* The test. Pairs solved by only one arm (discordant) are fair coin flips under "no
  difference": on every task, given the past, either arm is as likely to be the sole solver.
  Against p = 1/2 we average the likelihood ratio over a symmetric Beta(a, a) prior on p,

      E(s, f) = ∫ (2p)^s (2(1 - p))^f  Beta(p; a, a) dp = 2^(s+f) B(a + s, a + f) / B(a, a),

  s = pairs only the second arm solved, f = pairs only the first solved; concordant pairs
  leave it unchanged. E is a nonnegative martingale with E_0 = 1 under that null (an
  e-process), so by Ville's inequality P(E ever reaches 1/α) ≤ α: stopping the first time it
  does keeps the false-decision rate ≤ α. The null allows every task its own difficulty and
  the arms to be correlated. The winner is the arm ahead at that moment; naming the worse arm
  has probability ≤ α too (E ≤ the half-prior mixture pointing that way, a supermartingale
  whenever the other arm is at least as good on every task).

  Prior: a = 1 (uniform; E = 2^k / ((k + 1) C(k, s)), k = s + f, i.e. betting each pair on
  Laplace's rule of succession). Small a favours lopsided splits (a broken endpoint), large a
  slight ones. In docs/sequential.md's simulations a = 1 is within ~1 task of the best a in
  [0.5, 3] on a lopsided gap (0 vs 0.9: 8.9 tasks, 7.8 at a = 1/2) and on a moderate one
  (0.45 vs 0.65: 105 tasks on average within 200, 103.5 at a = 2).

* The confidence sequence for the acceptance gap mean(b - a) over all decided pairs is the
  hedged-capital betting CS of Waudby-Smith & Ramdas, "Estimating means of bounded random
  variables by betting", JRSS-B 86(1), 2024 (arXiv 2010.09686, section 4, predictable
  plug-in bets truncated at 1/2), on (D + 1)/2 ∈ [0, 1] and mapped back to the gap. It takes
  the pairs as i.i.d. draws from the population of tasks the suite stands for (the view seed
  000's bootstrap over tasks takes) and covers the true gap at every task at once with
  probability ≥ 1 - α. It is a separate guarantee from the test (another
  parameter, another martingale): near the threshold one may exclude 0 before the other.

Pairs must come in an order fixed before outcomes are seen (the run's task order), as the
longest prefix decided on both arms (`decided_prefix`): feeding pairs as they complete would
let speed leak into the order (a slow failing arm puts its losses last) and bias the test.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

PRIOR_A = 1.0
CS_TRUNCATION = 0.5
CS_GRID = 2001  # candidate gaps 0.001 apart
CS_BLOCK = 1 << 18  # candidate gaps × pairs evaluated at once: 2 MB per float array
METHOD = "Beta({a:g}, {a:g})-mixture likelihood ratio vs p = 1/2 on discordant pairs (e-process; Ville)"
CS_METHOD = "hedged-capital betting confidence sequence (Waudby-Smith & Ramdas 2024)"
EARLY_STOP_CAVEAT = (
    "The decision is valid under continuous monitoring, but the gap and pass rates "
    "measured at an early stop are biased toward a larger gap; trust the interval, "
    "not the point estimate."
)
_LOG_E_CLAMP = 700.0  # exp(709) is the last finite double; beyond this e is astronomically decided


def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"decision alpha must be in (0, 1), got {alpha!r} — use e.g. 0.05")


def _check_prior(prior_a: float) -> None:
    if not prior_a > 0.0 or not math.isfinite(prior_a):
        raise ValueError(f"Beta prior parameter a must be a positive number, got {prior_a!r} — use e.g. 1.0")


def log_e_value(only_first: int, only_second: int, prior_a: float = PRIOR_A) -> float:
    """log E after `only_first` pairs won by the first arm alone and `only_second` by the second."""
    if only_first < 0 or only_second < 0:
        raise ValueError(f"discordant counts must be >= 0, got {only_first}, {only_second}")
    _check_prior(prior_a)
    a, s, f = prior_a, only_second, only_first
    return (
        (s + f) * math.log(2.0)
        + math.lgamma(a + s)
        + math.lgamma(a + f)
        - math.lgamma(2 * a + s + f)
        - 2 * math.lgamma(a)
        + math.lgamma(2 * a)
    )


def e_value(only_first: int, only_second: int, prior_a: float = PRIOR_A) -> float:
    """The e-value itself (finite: clamped at e^700, far past any threshold)."""
    return math.exp(min(log_e_value(only_first, only_second, prior_a), _LOG_E_CLAMP))


def _differences(pairs: Sequence[tuple[object, object]]) -> np.ndarray:
    d = np.empty(len(pairs), dtype=np.int8)
    for i, pair in enumerate(pairs):
        if len(pair) != 2 or any(x not in (0, 1) for x in pair):  # True/False are 1/0 here
            raise ValueError(f"paired outcome #{i + 1} is {pair!r}: need (first_accepted, second_accepted) as booleans")
        d[i] = int(bool(pair[1])) - int(bool(pair[0]))
    return d


def log_e_path(d: np.ndarray, prior_a: float = PRIOR_A) -> np.ndarray:
    """log E after each pair, along the last axis of d (second minus first, in {-1, 0, 1}).

    Vectorized for the simulations: a 2-D d holds one simulated run per row.
    """
    _check_prior(prior_a)
    d = np.asarray(d)
    n = d.shape[-1]
    s = np.cumsum(d == 1, axis=-1)
    f = np.cumsum(d == -1, axis=-1)
    a = prior_a
    lg_a = np.array([math.lgamma(a + j) for j in range(n + 1)])
    lg_2a = np.array([math.lgamma(2 * a + j) for j in range(n + 1)])
    k = s + f
    out: np.ndarray = k * math.log(2.0) + lg_a[s] + lg_a[f] - lg_2a[k] - 2 * math.lgamma(a) + math.lgamma(2 * a)
    return out


def _bets(y: np.ndarray, alpha: float) -> np.ndarray:
    """Waudby-Smith & Ramdas's predictable plug-in bets, λ_t = sqrt(2 log(2/α) / (σ̂²_{t-1} t log(1 + t))):
    σ̂² is the running variance regularized by one pseudo-observation of variance 1/4, so λ_t
    uses only the pairs before t.
    """
    n = y.shape[-1]
    t = np.arange(1, n + 1, dtype=float)
    mu = (0.5 + np.cumsum(y, axis=-1)) / (t + 1)
    var = (0.25 + np.cumsum((y - mu) ** 2, axis=-1)) / (t + 1)
    var_prev = np.concatenate([np.full(y.shape[:-1] + (1,), 0.25), var[..., :-1]], axis=-1)
    return np.sqrt(2.0 * math.log(2.0 / alpha) / (var_prev * t * np.log1p(t)))


def _log_growth(y: np.ndarray, lam: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log(1 + λ⁺(y - m)) and log(1 - λ⁻(y - m)) per pair: what each of the two bets on the
    mean m multiplies its capital by, λ⁺ and λ⁻ being λ truncated at c/m and c/(1 - m)."""
    with np.errstate(divide="ignore"):
        up = np.minimum(lam, CS_TRUNCATION / m)
        down = np.minimum(lam, CS_TRUNCATION / (1.0 - m))
    return np.log1p(up * (y - m)), np.log1p(-down * (y - m))


def gap_log_capital(d: np.ndarray, gap: float | np.ndarray, alpha: float) -> np.ndarray:
    """log of the hedged capital K_t(gap) after each pair, along the last axis of d.

    With y = (d + 1)/2 ∈ [0, 1] and m = (gap + 1)/2 (Waudby-Smith & Ramdas 2024, section 4):
        K_t = ½ Π (1 + λ⁺_i (y_i - m)) + ½ Π (1 - λ⁻_i (y_i - m)),
        λ⁺_i = min(λ_i, c/m),  λ⁻_i = min(λ_i, c/(1 - m)),  c = 1/2,
    with the predictable bets of `_bets`. If the true gap is `gap`, both products are
    nonnegative martingales, so P(K_t ever ≥ 1/α) ≤ α (Ville): the gaps whose capital never
    reached 1/α form the confidence sequence. `gap` may be an array (e.g. a column of
    candidates) that broadcasts against d.
    """
    y = (np.asarray(d, dtype=float) + 1.0) / 2.0
    m = (np.asarray(gap, dtype=float) + 1.0) / 2.0
    grow_up, grow_down = _log_growth(y, _bets(y, alpha), m)
    out: np.ndarray = np.logaddexp(np.cumsum(grow_up, axis=-1), np.cumsum(grow_down, axis=-1)) - math.log(2.0)
    return out


def _carried_cumsum(carry: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Running sums of the rows of x continuing from `carry`, to the bit what one pass over the
    whole row gives (the carry is the first addend, as the running sum was)."""
    out: np.ndarray = np.cumsum(np.concatenate([carry[:, None], x], axis=1), axis=1)[:, 1:]
    return out


def _scan_grid(y: np.ndarray, alpha: float, candidates: np.ndarray, prune: bool) -> tuple[np.ndarray, np.ndarray]:
    """Lattice indices (first, last) of the gaps still inside after each pair, streaming over
    the pairs in blocks of at most CS_BLOCK gaps × pairs, so memory does not grow with the run.

    A gap whose capital has reached 1/α stays out, so `prune` drops it from later blocks (the
    set narrows fast, and so does the work). Once every gap is out the sequence keeps the least
    rejected one, which needs them all: then the scan starts over without pruning.
    """
    n, grid = y.shape[0], candidates.shape[0]
    lam, log_t = _bets(y, alpha), math.log(1.0 / alpha)
    first, last = np.empty(n, dtype=np.intp), np.empty(n, dtype=np.intp)
    live = np.arange(grid)
    up_sum, down_sum, peak = np.zeros(grid), np.zeros(grid), np.full(grid, -np.inf)
    start = 0
    while start < n:
        stop = min(n, start + max(1, CS_BLOCK // live.size))
        grow_up, grow_down = _log_growth(
            y[None, start:stop], lam[None, start:stop], (candidates[live, None] + 1.0) / 2.0
        )
        up, down = _carried_cumsum(up_sum[live], grow_up), _carried_cumsum(down_sum[live], grow_down)
        log_k = np.maximum.accumulate(
            np.concatenate([peak[live, None], np.logaddexp(up, down) - math.log(2.0)], axis=1), axis=1
        )[:, 1:]
        inside = log_k < log_t
        nothing = ~inside.any(axis=0)
        if nothing.any():
            if prune:
                return _scan_grid(y, alpha, candidates, prune=False)
            inside[np.argmin(log_k, axis=0)[nothing], np.flatnonzero(nothing)] = True
        first[start:stop] = live[np.argmax(inside, axis=0)]
        last[start:stop] = live[live.size - 1 - np.argmax(inside[::-1], axis=0)]
        up_sum[live], down_sum[live], peak[live] = up[:, -1], down[:, -1], log_k[:, -1]
        if prune:
            live = live[inside[:, -1]]
        start = stop
    return first, last


def gap_confidence_sequence(
    d: Sequence[int] | np.ndarray, alpha: float, grid: int = CS_GRID
) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) for mean(d) after each pair of one run: the gaps on a `grid`-point lattice of
    [-1, 1] whose capital has not yet reached 1/α (a running intersection, so it only shrinks),
    widened by one lattice step so that a true gap between two lattice points stays inside.
    """
    _check_alpha(alpha)
    d = np.asarray(d)
    n = d.shape[-1]
    if d.ndim != 1:
        raise ValueError(f"gap_confidence_sequence takes one run, got an array of shape {d.shape}")
    if n == 0:
        return np.empty(0), np.empty(0)
    candidates = np.linspace(-1.0, 1.0, grid)
    y = (d.astype(float) + 1.0) / 2.0
    first, last = _scan_grid(y, alpha, candidates, prune=True)
    step = 2.0 / (grid - 1)
    return np.maximum(-1.0, candidates[first] - step), np.minimum(1.0, candidates[last] + step)


@dataclass(frozen=True)
class Futility:
    """Whether the tasks still to come can decide, in the best case for either arm.

    `first_needs` is the fewest further pairs, all won by the first arm alone, that bring E to
    1/α (0 once decided); `first_best_e` is E if all `remaining` pairs go that way. The best
    case for an arm is exactly that (E is order-free, log E convex in the split), so when both
    needs exceed `remaining`, no outcome of the remaining tasks can decide: `futile`.
    Stopping for futility never raises the false-decision rate: it only forgoes a decision.
    """

    remaining: int
    first_needs: int
    second_needs: int
    first_best_e: float
    second_best_e: float
    futile: bool


def _wins_needed(lead: int, other: int, log_threshold: float, prior_a: float) -> int:
    """Fewest j with log E(lead + j against other) ≥ log_threshold (E rises in j past a tie)."""

    def reaches(j: int) -> bool:
        return log_e_value(other, lead + j, prior_a) >= log_threshold

    if reaches(0):
        return 0
    lo = max(0, other - lead)  # E falls until the counts tie, then rises for good
    hi = max(1, lo)
    while not reaches(hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if reaches(mid) else (mid, hi)
    return hi


def futility(only_first: int, only_second: int, remaining: int, alpha: float, prior_a: float = PRIOR_A) -> Futility:
    """Can any outcome of `remaining` more pairs (decidable within the caps) reach 1/α?"""
    _check_alpha(alpha)
    if remaining < 0:
        raise ValueError(f"remaining pairs must be >= 0, got {remaining}")
    log_t = math.log(1.0 / alpha)
    decided = log_e_value(only_first, only_second, prior_a) >= log_t
    first_needs = 0 if decided else _wins_needed(only_first, only_second, log_t, prior_a)
    second_needs = 0 if decided else _wins_needed(only_second, only_first, log_t, prior_a)
    return Futility(
        remaining=remaining,
        first_needs=first_needs,
        second_needs=second_needs,
        first_best_e=e_value(only_first + remaining, only_second, prior_a),
        second_best_e=e_value(only_first, only_second + remaining, prior_a),
        futile=not decided and min(first_needs, second_needs) > remaining,
    )


@dataclass(frozen=True)
class Decision:
    """Where the sequential comparison of `second` against `first` stands after `n_pairs` pairs.

    Once E first reached 1/α (after `after_tasks` pairs) the comparison stays decided with that
    winner, whatever E does later; `e_value` is E now, `e_at_decision` E at that pair. The gap
    is second minus first over all pairs, with its always-valid bounds; `gap` itself is the
    plain mean and, after an early stop, biased toward a larger gap (EARLY_STOP_CAVEAT).
    """

    first: str
    second: str
    decided: bool
    winner: str | None
    e_value: float
    e_at_decision: float | None
    after_tasks: int | None
    alpha: float
    method: str
    n_pairs: int
    only_first: int
    only_second: int
    gap: float | None
    gap_lo: float
    gap_hi: float
    cs_method: str
    futility: Futility | None

    @property
    def threshold(self) -> float:
        return 1.0 / self.alpha

    @property
    def futile(self) -> bool | None:
        return None if self.futility is None else self.futility.futile

    @property
    def line(self) -> str:
        """The one-line read for the live view and the report (token savings are added there)."""
        if self.decided:
            return f"decided after {self.after_tasks} tasks: {self.winner} better (e = {self.e_at_decision:.1f})"
        text = f"undecided: e = {self.e_value:.1f} of {self.threshold:g} needed (α = {self.alpha:g})"
        if self.futile and self.futility is not None:
            text += f"; the {self.futility.remaining} tasks left cannot decide it"
        return text

    def as_json(self) -> dict[str, Any]:
        """The report's `decision` section."""
        return {
            "decided": self.decided,
            "winner": self.winner,
            "e_value": self.e_value,
            "e_at_decision": self.e_at_decision,
            "after_tasks": self.after_tasks,
            "alpha": self.alpha,
            "method": self.method,
            "n_pairs": self.n_pairs,
            "only_first": self.only_first,
            "only_second": self.only_second,
            "gap": self.gap,
            "gap_lo": self.gap_lo,
            "gap_hi": self.gap_hi,
            "cs_method": self.cs_method,
            "futile": self.futile,
            "caveat": EARLY_STOP_CAVEAT,
        }


def decision(
    pairs: Sequence[tuple[object, object]],
    alpha: float = 0.05,
    *,
    labels: tuple[str, str] = ("A", "B"),
    remaining: int | None = None,
    prior_a: float = PRIOR_A,
) -> Decision:
    """The sequential decision after `pairs`: (first_accepted, second_accepted) per task decided
    on both arms, in task order. `remaining`: pairs that can still be decided within the caps
    (None: futility not assessed).
    """
    _check_alpha(alpha)
    _check_prior(prior_a)
    d = _differences(pairs)
    n = len(d)
    only_first, only_second = int(np.sum(d == -1)), int(np.sum(d == 1))
    log_path = log_e_path(d, prior_a)
    crossed = np.flatnonzero(log_path >= math.log(1.0 / alpha))
    winner = after = e_at = None
    if crossed.size:
        at = int(crossed[0])
        s_at, f_at = int(np.sum(d[: at + 1] == 1)), int(np.sum(d[: at + 1] == -1))
        winner = labels[1] if s_at > f_at else labels[0]  # E ≤ 1 at a tie, so never tied here
        after, e_at = at + 1, math.exp(min(float(log_path[at]), _LOG_E_CLAMP))
    lo, hi = gap_confidence_sequence(d, alpha)
    return Decision(
        first=labels[0],
        second=labels[1],
        decided=winner is not None,
        winner=winner,
        e_value=e_value(only_first, only_second, prior_a),
        e_at_decision=e_at,
        after_tasks=after,
        alpha=alpha,
        method=METHOD.format(a=prior_a),
        n_pairs=n,
        only_first=only_first,
        only_second=only_second,
        gap=float(d.mean()) if n else None,
        gap_lo=float(lo[-1]) if n else -1.0,
        gap_hi=float(hi[-1]) if n else 1.0,
        cs_method=CS_METHOD,
        futility=None if remaining is None else futility(only_first, only_second, remaining, alpha, prior_a),
    )


def decided_prefix(first: Sequence[bool | None], second: Sequence[bool | None]) -> list[tuple[bool, bool]]:
    """Pairs for `decision`: per task in task order, accepted (True/False) or None while that arm
    has not decided it; the result stops at the first task not decided on both arms. Tasks
    excluded from pairing (censored) are to be left out of both lists by the caller.
    """
    if len(first) != len(second):
        raise ValueError(
            f"decided_prefix: the arms list {len(first)} and {len(second)} tasks — pass both in the run's task order"
        )
    pairs = []
    for x, y in zip(first, second):
        if x is None or y is None:
            break
        pairs.append((bool(x), bool(y)))
    return pairs


def tokens_saved(
    used: Mapping[str, int], projected: Mapping[str, float], caps: Mapping[str, int] | None = None
) -> dict[str, int]:
    """Tokens each arm would still spend if the run went on, i.e. what stopping now saves.

    saved = min(projected, cap) - used, floored at 0 and rounded down: `projected` is the
    arm's projected total at the end of the suite (the live meter's tokens-per-decided-task
    projection), an arm never spends past its cap, and tokens already spent are not saved.
    """
    if set(used) != set(projected) or (caps is not None and set(caps) != set(used)):
        raise ValueError(
            f"tokens_saved: arms differ between used {sorted(used)}, projected {sorted(projected)}"
            + (f" and caps {sorted(caps)}" if caps is not None else "")
            + " — pass the same arms to each"
        )
    saved = {}
    for arm, spent in used.items():
        total = projected[arm] if caps is None else min(projected[arm], caps[arm])
        saved[arm] = max(0, math.floor(total - spent))
    return saved
