"""The report's strategy section as text/markdown blocks for render.py."""

from __future__ import annotations

from typing import Any

HEADERS = [
    "arm",
    "strategy",
    "select",
    "coverage",
    "conversion",
    "solved",
    "lost: no selection",
    "lost: wrong choice",
    "fallback",
    "tokens/task",
    "$/task",
    "$/solved",
]


def _share(num: int, den: int, rate: float | None) -> str:
    return "—" if rate is None else f"{rate:.0%} ({num}/{den})"


def _money(x: float | None) -> str:
    return "—" if x is None else f"${x:.4f}"


COST_COLUMNS = 2  # $/task, $/solved: the last columns, left out of a report without cost


def strategy_rows(figures: list[dict[str, Any]], with_cost: bool = True) -> list[list[str]]:
    rows = [
        [
            f["arm"],
            f["strategy"],
            f["select_rule"] or "—",
            _share(f["covered"], f["decided"], f["coverage"]),
            _share(f["submitted_correct"], f["covered"], f["conversion"]),
            f"{f['submitted_correct']}/{f['decided']}",
            str(f["lost_no_selection"]),
            str(f["lost_wrong_choice"]),
            f"{f['fallback']} ({f['fallback_correct']} correct)" if f["fallback"] else "0",
            "—" if f["tokens_per_task"] is None else f"{f['tokens_per_task']:,.0f}",
            _money(f["cost_per_task"]),
            _money(f["cost_per_solved"]),
        ]
        for f in figures
    ]
    return rows if with_cost else [r[:-COST_COLUMNS] for r in rows]


def _times(x: dict[str, Any], invert: bool) -> str:
    value, lo, hi = x.get("value"), x.get("lo"), x.get("hi")
    if value is None:
        return "—"
    if invert:
        value, lo, hi = 1 / value, (1 / hi if hi else None), (1 / lo if lo else None)
    span = f" [{lo:.2f}, {'∞' if hi is None else f'{hi:.2f}'}]" if lo is not None else ""
    return f"{value:.2f}×{span}"


def relative_line(relative: dict[str, Any], direct: str) -> str:
    """The strategy arm's cost relative to Direct's, per task and per solved task (95% intervals,
    the paired bootstrap over tasks)."""
    invert = relative["second"] == direct
    other = relative["first"] if invert else relative["second"]
    parts = [
        f"{label} {_times(relative[key], invert)}"
        for key, label in (
            ("tokens_per_task", "tokens/task"),
            ("dollars_per_task", "$/task"),
            ("dollars_per_solved", "$/solved"),
        )
        if key in relative
    ]
    return f"{other} relative to Direct ({direct}): " + "; ".join(parts) + " (95% CI, paired bootstrap over tasks)"


def strategy_lines(figures: list[dict[str, Any]], relative: dict[str, Any] | None = None) -> list[str]:
    lines = []
    for f in figures:
        stages = ", ".join(f"{stage} {n:,}" for stage, n in sorted(f["stage_tokens"].items()))
        lines.append(f"{f['arm']}: tokens by stage — {stages or 'none'}")
        if f["transitions"] is not None:
            lines.append(
                f"{f['arm']}: revision transitions (initial -> submitted) — "
                + ", ".join(f"{t} {n}" for t, n in f["transitions"].items())
            )
        if f["parse_routes"]:
            lines.append(
                f"{f['arm']}: how selections were parsed — "
                + ", ".join(f"{r} {n}" for r, n in sorted(f["parse_routes"].items()))
            )
        if f["no_submission"]:
            lines.append(f"{f['arm']}: {f['no_submission']} tasks with nothing submitted (counted as not solved)")
    direct = [f["arm"] for f in figures if f["strategy"] == "direct"]
    if direct:
        lines.append(f"Direct's operating point: {', '.join(direct)} (one attempt per task, m = 1)")
    if relative and direct:
        lines.append(relative_line(relative, direct[0]))
    lines.append(
        "coverage = tasks where any candidate passes the hidden tests (offline ceiling); "
        "conversion = submitted correct / covered; costs at the realized spend"
    )
    return lines


def strategy_blocks(section: dict[str, Any], with_cost: bool = True) -> list[tuple[Any, ...]]:
    figures = section.get("strategies")
    if not figures:
        return []
    return [
        ("table", HEADERS if with_cost else HEADERS[:-COST_COLUMNS], strategy_rows(figures, with_cost)),
        (
            "section",
            "test-time strategies (where candidates are lost):",
            strategy_lines(figures, section.get("cost_relative")),
        ),
    ]
