"""The report's strategy section (issue 16) as text/markdown blocks for render.py."""

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


def strategy_rows(figures: list[dict[str, Any]]) -> list[list[str]]:
    return [
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


def strategy_lines(figures: list[dict[str, Any]]) -> list[str]:
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
    lines.append(
        "coverage = tasks where any candidate passes the hidden tests (offline ceiling); "
        "conversion = submitted correct / covered; costs at the realized spend"
    )
    return lines


def strategy_blocks(section: dict[str, Any]) -> list[tuple[Any, ...]]:
    figures = section.get("strategies")
    if not figures:
        return []
    return [
        ("table", HEADERS, strategy_rows(figures)),
        ("section", "test-time strategies (where candidates are lost):", strategy_lines(figures)),
    ]
