"""Pilot tests on the ledger of a real scripted paired run: runs → run → task → attempt, the
evidence shown for every failure class, filters, search, the diff toggle, the transcript and
going back."""

from __future__ import annotations

import pytest
from textual.widgets import Collapsible, DataTable, Input, TabbedContent

from tuiapp.browse.app import make_app
from tuiapp.browse.attempt import AttemptScreen
from tuiapp.browse.run import RunScreen
from tuiapp.browse.runs import RunsScreen
from tuiapp.browse.task import TaskScreen

from .helpers import open_attempt, open_run, open_task, plain, settle, shown

pytestmark = pytest.mark.anyio
SIZE = (160, 45)

# (task, arm, attempt, failure class, what the evidence must show) — see scripted_ledger.py
EVIDENCE = [
    ("py-add", "A", 1, "accepted", ["Hidden tests: 2 passed, 0 failed"]),
    ("py-add", "B", 1, "harness_error", ["HTTP 500", "retry 1", "after 1 retry"]),
    ("py-add", "B", 2, "reasoning", ["Failing hidden tests (n=1)", "test_hidden.py::test_add_small", "assert -1 == 5"]),
    (
        "py-greet",
        "B",
        1,
        "mechanics",
        ["greet.py:5:1", "syntax_error", "> 5 WORLD = ('world'", "^ tree-sitter error here"],
    ),
    ("py-sleepy", "A", 1, "timeout", ["the limit is 1.0 s", "Running: python test_hidden.py", "checking speed"]),
    ("py-env", "B", 2, "environment", ["No module named 'yaml_not_installed_anywhere'"]),
    ("py-wordy", "B", 1, "censored", ["cap 9,000 tokens", "exceeds it"]),
]


async def test_runs_screen_lists_the_run_with_headlines(scripted):
    ledger, run_id = scripted
    app = make_app(ledger)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        table = app.screen.query_one("#runs", DataTable)
        assert table.row_count == 1
        row = [str(c) for c in table.get_row(run_id)]
        assert row[0] == run_id[:10] and row[1] == "finished"
        assert row[2].splitlines() == ["A", "B"]  # the headline numbers follow the arms: on screen at 80 columns
        # B ran out of its cap on py-wordy: not comparable, acceptance over its 4 finished tasks
        assert row[3].splitlines() == ["0.60  (3/5)", "not comparable (0/4 finished)"]
        assert row[4].splitlines()[1] == "—" and row[5].splitlines()[1] == "—"  # B's QAP and retry tax
        assert row[5].splitlines()[0] != "—"
        assert "yes: 1 unfinished, cap hit" in row[6]


async def test_run_screen_shows_report_and_grid(scripted):
    ledger, run_id = scripted
    app = make_app(ledger)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run(pilot, run_id)
        report = shown(screen, "#report")
        assert "Decision table" in report and "acceptance within 2" in report
        assert "Paired comparison B vs A" in report and "McNemar exact" in report
        assert (
            "read: on the 4 tasks both finished (1 excluded: B censored (cap hit)): no detectable difference at n=4"
            in report
        )
        assert "not comparable (0.00 [0.00," in report  # B: cap hit, the report's own cells
        assert (
            "decision rule: a side wins only when" in report
            and "attempt budget: 2 attempts (2× one attempt's caps) per task on every arm" in report
        )
        grid = screen.query_one("#grid", DataTable)
        assert [k.value for k in grid.rows] == ["py-add", "py-env", "py-greet", "py-sleepy", "py-wordy"]
        cells = {task: [str(c) for c in grid.get_row(task)] for task in ("py-add", "py-greet", "py-wordy")}
        assert cells["py-add"][1].startswith("pass    accepted") and "ok on #1" in cells["py-add"][1]
        assert cells["py-add"][2].startswith("fail    reasoning")
        assert cells["py-greet"][2].startswith("fail    edit-mechanics")
        assert cells["py-wordy"][2].startswith("—       censored")


@pytest.mark.parametrize("task,arm,no,cls,expected", EVIDENCE, ids=[e[3] for e in EVIDENCE])
async def test_attempt_evidence_for_each_class(scripted, task, arm, no, cls, expected):
    ledger, run_id = scripted
    app = make_app(ledger)
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, run_id)
        await open_task(pilot, task)
        screen = await open_attempt(pilot, arm, no)
        assert screen.view.attempt["failure_class"] == cls
        assert screen.query_one("#tabs", TabbedContent).active == "evidence"
        evidence = shown(screen, "#evidence-body")
        for text in expected:
            assert text in evidence, f"{text!r} not in the {cls} evidence:\n{evidence}"


async def test_task_screen_puts_arms_side_by_side(scripted):
    ledger, run_id = scripted
    app = make_app(ledger, run_id)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_task(pilot, "py-add")
        a, b = screen.query_one("#arm-A", DataTable), screen.query_one("#arm-B", DataTable)
        assert a.region.y == b.region.y and a.region.x < b.region.x  # side by side
        assert [str(c) for c in a.get_row_at(0)][:3] == ["1", "pass", "✓ accepted"]
        assert [str(c) for c in b.get_row_at(0)][2] == "harness_error"
        assert [str(c) for c in b.get_row_at(1)][2] == "reasoning"
        outcomes = list(screen.query(".arm-outcome"))
        assert "accepted on attempt 1" in plain(outcomes[0].content)
        assert "not accepted: reasoning" in plain(outcomes[1].content)


async def test_diff_toggles_between_unified_and_side_by_side(scripted):
    ledger, run_id = scripted
    app = make_app(ledger, run_id)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_task(pilot, "py-greet")
        screen = await open_attempt(pilot, "B", 1)
        await pilot.press("d")
        assert screen.query_one("#tabs", TabbedContent).active == "diff"
        unified = shown(screen, "#diff-body")
        assert "-     return 'Hi ' + name" in unified.replace("  -", "-")
        assert "+ WORLD = ('world'" in unified
        await pilot.press("d")
        assert screen.side_by_side
        side = shown(screen, "#diff-body")
        line = next(row for row in side.splitlines() if "WORLD" in row)
        assert "WORLD = 'world'" in line and "WORLD = ('world'" in line  # old and new on one row
        assert "unified" in shown(screen, "#diff-mode")


async def test_transcript_collapses_tool_calls_until_asked(scripted):
    ledger, run_id = scripted
    app = make_app(ledger, run_id)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_task(pilot, "py-add")
        screen = await open_attempt(pilot, "A", 1)
        await pilot.press("t")
        assert screen.query_one("#tabs", TabbedContent).active == "transcript"
        tools = list(screen.query(Collapsible))
        assert [c.title.split()[1] for c in tools] == ["list_files", "write_file", "run_tests", "finish"]
        assert all(c.collapsed for c in tools)
        text = "\n".join(plain(s.content) for s in screen.query(".turn-header"))
        assert "Turn 1" in text and "in /" in text and "out tokens" in text
        await pilot.press("x")
        assert not any(c.collapsed for c in tools)


async def test_filters_and_search_narrow_the_grid(scripted):
    ledger, run_id = scripted
    app = make_app(ledger, run_id)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        grid = screen.query_one("#grid", DataTable)

        def rows() -> list[str]:
            return [k.value for k in grid.rows]

        while screen.filters.failure_class != "mechanics":
            await pilot.press("c")
        assert rows() == ["py-greet"]
        assert "class: edit-mechanics" in shown(screen, "#filters") and "1 of 5 tasks" in shown(screen, "#filters")
        await pilot.press("x")
        while screen.filters.verdict != "timeout":
            await pilot.press("v")
        assert rows() == ["py-sleepy"]
        await pilot.press("x", "k")
        assert screen.filters.kind == "api-misuse" and rows() == ["py-env"]
        await pilot.press("x", "l")
        assert screen.filters.language == "python" and len(rows()) == 5
        await pilot.press("x", "slash")
        search = screen.query_one("#search", Input)
        assert search.display and search.has_focus
        await pilot.press("w", "o", "r")
        assert rows() == ["py-wordy"]
        await pilot.press("enter")
        assert grid.has_focus and rows() == ["py-wordy"]
        await pilot.press("x")
        assert len(rows()) == 5 and not search.display
        await pilot.press("slash", "e", "n", "v")
        assert rows() == ["py-env"]
        await pilot.press("escape")  # leaves the search box and clears it, stays on the run screen
        assert isinstance(app.screen, RunScreen) and not search.display and len(rows()) == 5


async def test_b_goes_back_and_the_footer_shows_the_keys(scripted):
    ledger, run_id = scripted
    app = make_app(ledger)
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, run_id)
        shown_keys = {
            b.binding.key: b.binding.description for b in app.screen.active_bindings.values() if b.binding.show
        }
        for key in ("enter", "b", "q", "x"):
            assert shown_keys.get(key), f"{key} missing from the footer: {shown_keys}"
        filters = shown(app.screen, "#filters")  # the filter keys are listed with their values
        for key in (" v verdict", " c class", " l language", " k kind", " /  task id"):
            assert key in filters, filters
        await open_task(pilot, "py-greet")
        await open_attempt(pilot, "B", 1)
        attempt_keys = {b.binding.key for b in app.screen.active_bindings.values() if b.binding.show}
        assert {"d", "e", "t", "x", "n", "p", "b"} <= attempt_keys
        for expected in (TaskScreen, RunScreen, RunsScreen, RunsScreen):
            await pilot.press("b")
            await settle(pilot)
            assert isinstance(app.screen, expected)


async def test_n_and_p_walk_the_attempts_of_one_arm(scripted):
    ledger, run_id = scripted
    app = make_app(ledger, run_id)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_task(pilot, "py-add")
        screen = await open_attempt(pilot, "B", 1)
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, AttemptScreen) and app.screen is not screen
        assert app.screen.view.attempt["attempt_no"] == 2
        await pilot.press("n")  # no third attempt: a notification, same screen
        await settle(pilot)
        assert app.screen.view.attempt["attempt_no"] == 2
        await pilot.press("p")
        await settle(pilot)
        assert app.screen.view.attempt["attempt_no"] == 1
        await pilot.press("b")
        assert isinstance(app.screen, TaskScreen)
