"""The sequential decision's printed bounds and e-values on fixed ledgers, pinned to the digits
the grid × tasks computation gave, so that computing the confidence sequence in bounded memory
cannot move them. The outcomes come from splitmix64, written out here, so no library's random
stream can change them either.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from agent.metrics.sequential import decision, gap_confidence_sequence

MASK = (1 << 64) - 1


def splitmix64(seed: int) -> Iterator[float]:
    """Uniforms in [0, 1) from Steele, Lea & Flood's splitmix64."""
    x = seed
    while True:
        x = (x + 0x9E3779B97F4A7C15) & MASK
        z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        yield (z ^ (z >> 31)) / 2.0**64


def hashed_pairs(n: int, p_first: float, p_second: float, seed: int) -> list[tuple[bool, bool]]:
    u = splitmix64(seed)
    return [(next(u) < p_first, next(u) < p_second) for _ in range(n)]


LEDGERS = {
    "lopsided": lambda: [(False, True)] * 12 + [(True, True)] * 3,
    "mixed40": lambda: hashed_pairs(40, 0.4, 0.6, 1),
    "null200": lambda: hashed_pairs(200, 0.5, 0.5, 2),
    "big_45_55": lambda: hashed_pairs(50_000, 0.45, 0.55, 3),
    "big_50_51": lambda: hashed_pairs(50_000, 0.50, 0.51, 4),
    # The arms swap places halfway: the sequence empties the set (all gaps rejected) and then
    # keeps the least rejected gap.
    "drift_600": lambda: [(True, False)] * 300 + [(False, True)] * 300,
    "drift_400": lambda: [(False, False)] * 200 + [(False, True)] * 200,
}

# name: (gap_lo, gap_hi, printed bounds, e_value, line, only_first, only_second)
PINNED = {
    "lopsided": (
        0.16200000000000003,
        1.0,
        "[+0.16, +1.00]",
        315.0769230769224,
        "decided after 8 tasks: B better (e = 28.4)",
        0,
        12,
    ),
    "mixed40": (
        -0.11199999999999999,
        0.45000000000000007,
        "[-0.11, +0.45]",
        1.610300260455056,
        "undecided: e = 1.6 of 20 needed (α = 0.05)",
        5,
        13,
    ),
    "null200": (
        -0.11299999999999999,
        0.18800000000000006,
        "[-0.11, +0.19]",
        0.13952014037525548,
        "undecided: e = 0.1 of 20 needed (α = 0.05)",
        45,
        49,
    ),
    "big_45_55": (
        0.08199999999999996,
        0.11599999999999999,
        "[+0.08, +0.12]",
        6.745243687845575e216,
        "decided after 680 tasks: B better (e = 20.0)",
        10134,
        15168,
    ),
    "big_50_51": (
        0.015000000000000013,
        0.04700000000000004,
        "[+0.02, +0.05]",
        1214.9487205026305,
        "decided after 1556 tasks: B better (e = 21.0)",
        12095,
        12867,
    ),
    "drift_600": (
        -0.905,
        -0.903,
        "[-0.91, -0.90]",
        0.051102488322133766,
        "decided after 8 tasks: A better (e = 28.4)",
        300,
        300,
    ),
    "drift_400": (
        0.13300000000000012,
        0.13500000000000012,
        "[+0.13, +0.14]",
        7.99471663810457e57,
        "decided after 208 tasks: B better (e = 28.4)",
        0,
        200,
    ),
}

# name: {tasks: (lo, hi)} along the path
PINNED_PATH = {
    "lopsided": {10: (0.05599999999999994, 1.0), 15: (0.16200000000000003, 1.0)},
    "mixed40": {10: (-0.386, 0.8170000000000001), 40: (-0.11199999999999999, 0.45000000000000007)},
    "null200": {
        10: (-0.477, 0.5810000000000001),
        100: (-0.15900000000000003, 0.235),
        200: (-0.11299999999999999, 0.18800000000000006),
    },
    "big_45_55": {
        10: (-0.8079999999999999, 0.5020000000000001),
        100: (-0.15200000000000002, 0.247),
        1000: (0.005000000000000005, 0.16499999999999992),
        10000: (0.061999999999999944, 0.126),
        50000: (0.08199999999999996, 0.11599999999999999),
    },
    "big_50_51": {
        10: (-0.672, 0.67),
        100: (-0.04999999999999993, 0.3510000000000001),
        1000: (0.0010000000000000018, 0.17000000000000004),
        10000: (0.015000000000000013, 0.07799999999999996),
        50000: (0.015000000000000013, 0.04700000000000004),
    },
    "drift_600": {
        10: (-1.0, -0.05599999999999994),
        100: (-1.0, -0.86),
        300: (-1.0, -0.951),
        391: (-0.953, -0.951),
        392: (-0.952, -0.95),
        393: (-0.952, -0.95),
        600: (-0.905, -0.903),
    },
    "drift_400": {
        10: (-0.472, 0.4720000000000001),
        100: (-0.06999999999999995, 0.06999999999999995),
        300: (0.08799999999999997, 0.08999999999999997),
        391: (0.12900000000000011, 0.13100000000000012),
        392: (0.13, 0.132),
        393: (0.13, 0.132),
        400: (0.13300000000000012, 0.13500000000000012),
    },
}

# name: {alpha: (lo, hi)} at the end
PINNED_ALPHAS = {
    "drift_600": {0.01: (-0.905, -0.903), 0.2: (-0.907, -0.905)},
    "drift_400": {0.01: (0.15100000000000013, 0.15300000000000014), 0.2: (0.1110000000000001, 0.1130000000000001)},
}


@pytest.fixture(scope="module")
def ledgers() -> dict[str, list[tuple[bool, bool]]]:
    return {name: build() for name, build in LEDGERS.items()}


def differences(pairs: list[tuple[bool, bool]]) -> np.ndarray:
    return np.array([int(b) - int(a) for a, b in pairs])


@pytest.mark.parametrize("name", PINNED)
def test_decision_prints_the_pinned_digits(ledgers, name):
    lo, hi, printed, e, line, only_first, only_second = PINNED[name]
    now = decision(ledgers[name], 0.05)
    assert (now.gap_lo, now.gap_hi) == (lo, hi)
    assert f"[{now.gap_lo:+.2f}, {now.gap_hi:+.2f}]" == printed
    assert now.e_value == pytest.approx(e, rel=1e-12)
    assert now.line == line
    assert (now.only_first, now.only_second) == (only_first, only_second)


@pytest.mark.parametrize("name", PINNED_PATH)
def test_confidence_sequence_path_is_pinned(ledgers, name):
    lo, hi = gap_confidence_sequence(differences(ledgers[name]), 0.05)
    assert len(lo) == len(hi) == len(ledgers[name])
    for tasks, bounds in PINNED_PATH[name].items():
        assert (float(lo[tasks - 1]), float(hi[tasks - 1])) == bounds, tasks


@pytest.mark.parametrize("name", PINNED_ALPHAS)
def test_other_alphas_are_pinned(ledgers, name):
    d = differences(ledgers[name])
    for alpha, bounds in PINNED_ALPHAS[name].items():
        lo, hi = gap_confidence_sequence(d, alpha)
        assert (float(lo[-1]), float(hi[-1])) == bounds, alpha
