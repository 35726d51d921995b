"""The browser on the terminal most people open, 80x24 (and 120x40): the runs list shows its
headline numbers, the run screen shows both arms' grid columns and a decision table that fits,
a task's arms stack so their attempt tables keep every column, and each screen's footer shows
all of its keys. The scripted paired run's ledger (scripted_ledger.py)."""

from __future__ import annotations

import pytest
from textual.geometry import Region
from textual.widgets import DataTable, Static

from tuiapp.browse.app import make_app

from .helpers import open_attempt, open_run, open_task, plain, settle

pytestmark = pytest.mark.anyio
SIZES = [(80, 24), (120, 40)]


def column_spans(table: DataTable) -> dict[str, tuple[int, int]]:
    """Each column's (start, end) in the table's content, by its label."""
    spans, x = {}, 0
    for column in table.ordered_columns:
        width = column.get_render_width(table)
        spans[column.label.plain] = (x, x + width)
        x += width
    return spans


def visible_width(table: DataTable) -> int:
    return table.scrollable_content_region.width


def footer_on_screen(app) -> None:
    screen = Region(0, 0, *app.size)
    keys = list(app.screen.query("FooterKey"))
    assert keys, "no footer keys"
    for key in keys:
        assert screen.contains_region(key.region) and key.region.width > 0, key


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_runs_list_shows_the_headline_numbers(scripted, size):
    ledger, run_id = scripted
    app = make_app(ledger)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#runs", DataTable)
        spans = column_spans(table)
        for name in ("run", "status", "arm", "acceptance"):
            assert spans[name][1] <= visible_width(table), (name, spans, visible_width(table))
        footer_on_screen(app)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_run_screen_shows_both_arms_and_a_fitted_decision_table(scripted, size):
    ledger, run_id = scripted
    app = make_app(ledger)
    async with app.run_test(size=size) as pilot:
        screen = await open_run(pilot, run_id)
        grid = screen.query_one("#grid", DataTable)
        spans = column_spans(grid)
        arms = [label for label in spans if label.startswith("arm ")]
        assert len(arms) == 2
        assert max(spans[a][1] for a in arms) <= visible_width(grid), (spans, visible_width(grid))
        row = [str(c) for c in grid.get_row("py-greet")]
        assert "edit-mechanics" in row[2] and " att" in row[2], row  # B, py-greet: class, attempts, tokens
        width = size[0] - 2
        report = plain(screen.query_one("#report", Static).content, width).splitlines()
        table_lines = report[: next(i for i, line in enumerate(report) if line.startswith("Paired comparison"))]
        assert all(len(line.rstrip()) <= width for line in table_lines), table_lines
        assert any(line.lstrip().startswith("QAP tok/patch") for line in table_lines)  # a metric per line
        footer_on_screen(app)


async def test_a_task_stacks_its_arms_on_a_narrow_screen(scripted):
    ledger, run_id = scripted
    app = make_app(ledger)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, run_id)
        screen = await open_task(pilot, "py-add")
        a, b = screen.query_one("#arm-A", DataTable), screen.query_one("#arm-B", DataTable)
        assert b.region.y > a.region.y and a.region.width == b.region.width >= 70
        for table in (a, b):
            spans = column_spans(table)
            assert max(end for _, end in spans.values()) <= visible_width(table), spans
        footer_on_screen(app)
        await open_attempt(pilot, "B", 1)
        footer_on_screen(app)
        labels = {key.description for key in app.screen.query("FooterKey")}
        assert {"Next", "Prev", "Diff/split", "Expand"} <= labels
