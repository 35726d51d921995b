"""The browser app: `make_app(ledger, run_id)` builds it (the CLI and the tests use it),
`run_browser` runs it. The live view can instead push `browse_screen(ledger, run_id)` onto its
own app when a run ends: the screens carry their own stylesheet and need nothing else.
"""

from __future__ import annotations

from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from agent import QuotabenchError
from agent.ledger import Ledger
from tuiapp.browse.data import Reader
from tuiapp.browse.run import RunScreen
from tuiapp.browse.runs import RunsScreen
from tuiapp.terminal import frames_on_the_terminal


class BrowserApp(App[None]):
    TITLE = "quotabench browse"
    ENABLE_COMMAND_PALETTE = False  # its footer entry would push the screens' own keys off an 80-column footer
    BINDINGS = [Binding("q", "quit", "Quit", id="browse.app_quit")]

    def __init__(self, ledger: Ledger, run_id: str | None = None):
        super().__init__()
        self.reader = Reader(ledger)
        self.start_run_id = run_id

    def get_default_screen(self) -> Screen[None]:
        return RunsScreen(self.reader, defer=bool(self.start_run_id))

    def on_mount(self) -> None:
        if self.start_run_id:
            self.push_screen(RunScreen(self.reader, self.start_run_id))


def make_app(ledger: Ledger, run_id: str | None = None) -> BrowserApp:
    """The browser on `ledger`, opened on the runs list, or on `run_id` (b goes back to the list)."""
    return BrowserApp(ledger, run_id)


def browse_screen(ledger: Ledger, run_id: str) -> Screen[None]:
    """The run screen of `run_id`, for another app (the live view) to push when the run ends."""
    return RunScreen(Reader(ledger), run_id)


def run_browser(ledger: Ledger, run_id: str | None = None) -> None:
    """Run the browser until the user quits (q). A failed read is a notification inside the app;
    anything that still escapes is reported as one line, not a traceback."""
    try:
        with frames_on_the_terminal():
            make_app(ledger, run_id).run()
    except Exception as exc:  # Textual has restored the terminal by now
        raise QuotabenchError(
            f"the browser failed ({type(exc).__name__}: {exc}) — the ledger {ledger.path} "
            "is unchanged; `quotabench report` and `sqlite3` still read it"
        ) from None
