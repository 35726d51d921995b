"""What every browser screen shares: the reader, loading off the event loop, going back, and
the one place worker failures become notifications."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable
from textual.worker import Worker, WorkerState

from tuiapp.browse.data import Reader

CSS = Path(__file__).with_name("browse.tcss")


class BrowseScreen(Screen[None]):
    """A screen that reads the ledger in workers and shows what they return."""

    CSS_PATH = CSS
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]  # browse.tcss: a task's arms stack when narrow
    BINDINGS = [
        Binding("b", "back", "Back", id="browse.back"),
        Binding("escape", "back", "Back", show=False, id="browse.back_escape"),
        Binding("q", "app.quit", "Quit", id="browse.quit"),
    ]

    def __init__(self, reader: Reader, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reader = reader

    def load(
        self, read: Callable[..., Any], *args: Any, show: Callable[[Any], None], group: str, description: str
    ) -> Worker[None]:
        """Run `read(ledger, *args)` in a thread; `show(result)` then runs on the event loop.

        The worker is exclusive in its group (a newer load replaces an older one) and belongs to
        this screen, so leaving the screen cancels it before `show` can touch a dead widget.
        """

        async def work() -> None:
            result = await asyncio.to_thread(self.reader.call, read, *args)
            show(result)

        return self.run_worker(work, group=group, description=description, exclusive=True, exit_on_error=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one handler for failed reads: a notification naming what failed, never a traceback."""
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            self.notify(
                f"{event.worker.description} failed: {error}", title="Ledger read failed", severity="error", timeout=12
            )
            self.load_failed(event.worker.group, error)

    def load_failed(self, group: str, error: BaseException | None) -> None:
        """Screens override this to say in place what could not be shown."""

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
        else:
            self.notify("This is the first screen: press q to quit.", timeout=3)


def cursor_key(table: DataTable[Any]) -> str:
    """The key of the row under the cursor: every table here keys its rows by the id they show."""
    return str(table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value)
