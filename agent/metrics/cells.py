"""Cell formatters shared by the report's text: rates, signed gaps, counts, tokens, money,
percentages and durations (— where a value can be missing)."""

from __future__ import annotations

import math


def rate(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def signed(x: float) -> str:
    return f"{x:+.3f}"


def count(n: float | None) -> str:
    return "—" if n is None else f"{n:,.0f}"


def tokens(n: int) -> str:
    if n >= 1e6:
        return f"{n / 1e6:.1f}M"
    return f"{n / 1e3:.0f}k" if n >= 1e4 else f"{n:,}"


def money(x: float | None) -> str:
    if x is None:
        return "—"
    if x >= 1:
        return f"${x:,.2f}"
    if x >= 1e-3:
        return f"${x:.4f}"
    return f"${x:.{1 - math.floor(math.log10(x))}f}" if x > 0 else "$0"  # two significant digits


def percent(x: float) -> str:
    return f"{x:.0%}" if x >= 0.01 else f"{x:.2%}"


def minutes(ms: float | None) -> str:
    """A duration read at a glance: seconds under two minutes, else minutes."""
    if ms is None:
        return "—"
    return f"{ms / 1000:.1f} s" if ms < 120_000 else f"{ms / 60000:.1f} min"
