"""Driving the browser in tests: wait for reads, read what a widget shows, walk to a screen."""

from __future__ import annotations

import io

from rich.console import Console
from textual.widgets import DataTable, Static

from tuiapp.browse.attempt import AttemptScreen
from tuiapp.browse.run import RunScreen
from tuiapp.browse.task import TaskScreen


def plain(renderable, width: int = 160) -> str:
    """What a Rich renderable (a Static's content) reads as, without colours."""
    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False)
    console.print(renderable)
    return console.file.getvalue()


async def settle(pilot) -> None:
    """Let every ledger read finish and its result reach the screen."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def shown(screen, selector: str) -> str:
    """The text a Static on `screen` shows."""
    return plain(screen.query_one(selector, Static).content)


async def select_row(pilot, table: DataTable, key: str) -> None:
    """Put the cursor on the row with `key` and press enter, as a user would."""
    table.focus()
    table.move_cursor(row=table.get_row_index(key))
    await pilot.pause()
    await pilot.press("enter")
    await settle(pilot)


async def open_run(pilot, run_id: str) -> RunScreen:
    """From the runs screen, open `run_id`."""
    await settle(pilot)
    await select_row(pilot, pilot.app.screen.query_one("#runs", DataTable), run_id)
    assert isinstance(pilot.app.screen, RunScreen)
    return pilot.app.screen


async def open_task(pilot, task_id: str) -> TaskScreen:
    """From the run screen, open `task_id`."""
    await select_row(pilot, pilot.app.screen.query_one("#grid", DataTable), task_id)
    assert isinstance(pilot.app.screen, TaskScreen)
    return pilot.app.screen


async def open_attempt(pilot, arm: str, attempt_no: int) -> AttemptScreen:
    """From the task screen, tab to `arm`'s table and open its attempt `attempt_no`."""
    screen = pilot.app.screen
    table = screen.query_one(f"#arm-{arm}", DataTable)
    for _ in range(4):
        if screen.focused is table:
            break
        await pilot.press("tab")
    assert screen.focused is table
    table.move_cursor(row=attempt_no - 1)
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(pilot.app.screen, AttemptScreen)
    return pilot.app.screen
