"""The browser on fixed ledger rows: a crashed run shows its attempts as they are, malformed
tool calls are quoted, failures become notifications, and SVG snapshots of the run and
attempt screens."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from tests.support.fixed_ledger import CRASHED, FAILING_TEST, MECHANICS_LINE, RUN
from tuiapp.browse.app import browse_screen, make_app
from tuiapp.browse.run import RunScreen

from .helpers import open_attempt, open_task, settle, shown

pytestmark = pytest.mark.anyio
SIZE = (160, 45)


async def test_crashed_run_shows_running_attempts_and_in_flight_calls(fixed):
    app = make_app(fixed, CRASHED)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert "never finished" in shown(screen, "#run-title")
        grid = screen.query_one("#grid", DataTable)
        assert [str(c) for c in grid.get_row("py-add")][1].startswith("        running")
        assert [str(c) for c in grid.get_row("js-clamp")][1].strip() == "not run"
        assert "Decision table" in shown(screen, "#report")  # the report copes with no grades
        task = await open_task(pilot, "py-add")
        for arm in ("A", "B"):
            assert [str(c) for c in task.query_one(f"#arm-{arm}", DataTable).get_row_at(0)][1:3] == [
                "running",
                "running",
            ]
        attempt = await open_attempt(pilot, "B", 1)
        evidence = shown(attempt, "#evidence-body")
        assert "never ended" in evidence
        assert "1 call(s) without a response (in_flight)" in evidence
        assert "in_flight" in evidence and "Not graded" not in evidence
        await pilot.press("d")
        assert "the attempt never ended" in shown(attempt, "#diff-body")
        await pilot.press("t")
        headers = [str(s.content) for s in attempt.query(".turn-header")]
        assert "in flight" in headers[1]


async def test_runs_screen_marks_the_crashed_run(fixed):
    app = make_app(fixed)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#runs", DataTable)
        assert [str(table.get_row(key)[1]) for key in (CRASHED, RUN)] == ["never finished", "finished"]


async def test_an_empty_ledger_says_how_to_fill_it(tmp_path):
    from agent.ledger import Ledger

    ledger = Ledger(tmp_path / "empty.sqlite")
    app = make_app(ledger)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "holds no runs yet" in shown(app.screen, "#runs-help")
        await pilot.press("enter", "b")
        assert app.is_running
    ledger.close()


async def test_mechanics_evidence_quotes_the_malformed_tool_calls(fixed):
    app = make_app(fixed, RUN)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_task(pilot, "py-add")
        screen = await open_attempt(pilot, "B", 2)
        evidence = shown(screen, "#evidence-body")
        assert "The attempt changed no file." in evidence
        assert "Malformed tool calls (n=3" in evidence
        assert '│ {"path": "notes.txt", "content": "unterminated' in evidence
        assert "unknown tool 'delete_file'" in evidence
        assert "No diff: the attempt changed no file." in shown(screen, "#diff-body")


async def test_reasoning_and_mechanics_evidence_from_fixed_rows(fixed):
    app = make_app(fixed, RUN)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_task(pilot, "py-greet")
        screen = await open_attempt(pilot, "A", 1)
        assert FAILING_TEST in shown(screen, "#evidence-body")
        await pilot.press("b", "tab")
        screen = await open_attempt(pilot, "B", 1)
        # tasks.path does not exist here: the snippet comes from files_json, the diff from attempts.diff
        assert MECHANICS_LINE in shown(screen, "#evidence-body")


async def test_a_failed_read_is_a_notification_not_a_crash(fixed):
    app = make_app(fixed, "01NOSUCHRUN0000000000000000")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.is_running and isinstance(app.screen, RunScreen)
        assert "Could not read run" in shown(app.screen, "#run-title")
        messages = [n.message for n in app._notifications]
        assert any("reading run 01NOSUCHRUN" in m and "not in the ledger" in m for m in messages)


async def test_browse_screen_can_be_pushed_by_another_app(fixed):
    from textual.app import App

    class Host(App):
        pass

    host = Host()
    async with host.run_test(size=SIZE) as pilot:
        host.push_screen(browse_screen(fixed, RUN))
        await settle(pilot)
        assert "3 of 3 tasks" in shown(host.screen, "#filters")
        await pilot.press("b")
        assert not isinstance(host.screen, RunScreen)


async def _ready(pilot) -> None:
    await settle(pilot)


def test_snapshot_run_screen(fixed, snap_compare):
    assert snap_compare(make_app(fixed, RUN), terminal_size=SIZE, run_before=_ready)


def test_snapshot_attempt_screen_mechanics_evidence(fixed, snap_compare):
    async def walk(pilot) -> None:
        await settle(pilot)
        await open_task(pilot, "py-greet")
        await open_attempt(pilot, "B", 1)

    assert snap_compare(make_app(fixed, RUN), terminal_size=SIZE, run_before=walk)


def test_snapshot_attempt_screen_side_by_side_diff(fixed, snap_compare):
    async def walk(pilot) -> None:
        await settle(pilot)
        await open_task(pilot, "py-greet")
        await open_attempt(pilot, "A", 1)
        await pilot.press("d", "d")
        await pilot.pause()

    assert snap_compare(make_app(fixed, RUN), terminal_size=SIZE, run_before=walk)
