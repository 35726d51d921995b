"""The text report fitted to a terminal's width (the one printed after a run).

`render_report(report, "text")` lays tables out at their natural width (~190 columns for the
decision table), which a narrower terminal wraps mid-cell. Here every table of that text is
found by its rule line (dashes under each column) and re-laid out by `fitted_table` (the
browser's run screen uses it too): a table of a few rows (the decision table: one per arm) is
turned on its side, a metric per line and an arm per column; a longer one wraps its cells, or
becomes a block per row. Other lines are word-wrapped with a hanging indent. The content is
the report's own, cell for cell; nothing is dropped.
"""

from __future__ import annotations

import io
import re
import textwrap

from rich import box
from rich.console import Console
from rich.table import Table

MIN_COLUMN = 10  # characters a column keeps in a wrapped table; below that, one block per row
TRANSPOSE_ROWS = 4  # a table of up to this many rows (arms) is turned on its side when it does not fit
_RULE = re.compile(r"^-+(  -+)*$")


def fit_text(text: str, width: int) -> str:
    """`text` (a rendered text report) in lines of at most `width` characters."""
    lines = text.splitlines()
    if not lines or max(map(len, lines)) <= width:
        return text
    out: list[str] = []
    i = 0
    while i < len(lines):
        if i + 1 < len(lines) and _RULE.match(lines[i + 1].strip()) and not lines[i + 1].startswith(" "):
            end = i + 2
            while end < len(lines) and lines[end].strip():
                end += 1
            out += _table(lines[i], lines[i + 1], lines[i + 2 : end], width)
            i = end
            continue
        out += _wrap(lines[i], width)
        i += 1
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def _columns(rule: str) -> list[tuple[int, int | None]]:
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", rule)]
    return [(start, spans[k + 1][0] if k + 1 < len(spans) else None) for k, (start, _) in enumerate(spans)]


def _cells(line: str, columns: list[tuple[int, int | None]]) -> list[str]:
    return [line[start:end].strip() for start, end in columns]


def natural_width(headers: list[str], rows: list[list[str]], gap: int = 2) -> int:
    """Columns wide enough for every cell on one line, `gap` apart."""
    return sum(max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))) + gap * (len(headers) - 1)


def fitted_table(headers: list[str], rows: list[list[str]], width: int) -> Table:
    """A table for `width` columns: as laid out when it fits; with few rows (the decision
    table's arms), transposed — a line per column, an arm per column — so each value keeps
    room; else its cells wrap inside their columns."""
    if natural_width(headers, rows, 3) > width and len(rows) <= TRANSPOSE_ROWS:
        table = Table("", *(str(r[0]) for r in rows), box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        for i, head in enumerate(headers[1:], 1):
            table.add_row(head, *(str(r[i]) for r in rows))
        return table
    table = Table(*headers, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for row in rows:
        table.add_row(*(str(c) for c in row))
    return table


def _table(header: str, rule: str, rows: list[str], width: int) -> list[str]:
    columns = _columns(rule)
    heads = _cells(header, columns)
    body = [_cells(row, columns) for row in rows]
    if len(body) > TRANSPOSE_ROWS and len(heads) * (MIN_COLUMN + 2) > width:
        out: list[str] = []
        for row in body:  # too many rows to transpose, too many columns to wrap: a block per row
            out += _wrap(f"{heads[0]} {row[0]}", width)
            for head, cell in zip(heads[1:], row[1:]):
                out += _wrap(f"  {head}: {cell}", width)
        return out
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, force_terminal=False, highlight=False, emoji=False)
    console.print(fitted_table(heads, body, width))
    return [line.rstrip() for line in buffer.getvalue().splitlines()]


def _wrap(line: str, width: int) -> list[str]:
    if len(line) <= width:
        return [line]
    indent = " " * (len(line) - len(line.lstrip()))
    return textwrap.wrap(
        line.strip(), width=width, initial_indent=indent, subsequent_indent=indent + "    ", break_on_hyphens=False
    ) or [line]
