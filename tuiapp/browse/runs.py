"""The runs screen: every run in the ledger, newest first, with its headline numbers per arm."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Static

from tuiapp.browse import labels
from tuiapp.browse.base import BrowseScreen, cursor_key
from tuiapp.browse.data import ArmHeadline, Reader, RunRow, all_headlines, list_runs
from tuiapp.browse.run import RunScreen

# The headline numbers come right after the run and its arms, so an 80-column screen shows
# them; the table scrolls sideways to the rest.
COLUMNS = (
    "run",
    "status",
    "arm",
    "acceptance",
    "QAP tok/patch",
    "retry tax",
    "censored",
    "model",
    "tasks",
    "attempts",
    "created",
    "manifest",
)


class RunsTable(DataTable[Any]):
    """DataTable hides its enter binding; this one shows in the footer what enter opens."""

    BINDINGS = [Binding("enter", "select_cursor", "Open run", id="browse.open_run")]


def _lines(values: Sequence[str | Text]) -> Text:
    return Text("\n").join(v if isinstance(v, Text) else Text(v) for v in values)


def _acceptance(h: ArmHeadline) -> Text:
    if h.censored:
        return Text(f"not comparable ({h.accepted}/{h.decided} finished)", style="yellow")
    return Text(f"{labels.rate(h.acceptance)}  ({h.accepted}/{h.n_tasks})")


def headline_cells(arms: list[ArmHeadline]) -> list[Text]:
    """Acceptance, QAP, retry tax, censored: one line per arm (a row is as tall as its run has arms).
    A censored, stopped or aborted arm is not comparable: its QAP and retry tax show —."""
    censored = [
        Text(f"yes: {h.unfinished} unfinished" + (", cap hit" if h.cap_hit else ""), style="yellow")
        if h.censored
        else Text("no")
        for h in arms
    ]
    return [
        _lines([_acceptance(h) for h in arms]),
        _lines([labels.tokens(round(h.qap)) if h.qap is not None else "—" for h in arms]),
        _lines(
            [
                "—" if h.retry_tax is None else f"{labels.rate(h.retry_tax)} of {labels.tokens(h.total_tokens)}"
                for h in arms
            ]
        ),
        _lines(censored),
    ]


class RunsScreen(BrowseScreen):
    """Pick a run. The headline numbers fill in once the metrics are computed."""

    def __init__(self, reader: Reader, *, defer: bool = False, **kwargs: Any) -> None:
        super().__init__(reader, **kwargs)
        self.defer = defer

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Runs in this ledger, newest first — enter opens one.", id="runs-help", classes="help")
        yield RunsTable(id="runs", cursor_type="row", zebra_stripes=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = str(self.reader.ledger.path)
        table = self.query_one("#runs", DataTable)
        for name in COLUMNS:
            table.add_column(name, key=name)
        self.runs: list[RunRow] = []
        self.loaded = False

    def on_screen_resume(self) -> None:
        # `browse RUN_ID` opens the run screen on top of this one at once: the list (and its
        # headline metrics) is read when the user first comes back here, not competing with it.
        if self.defer:
            self.defer = False
        elif not self.loaded:
            self.loaded = True
            self.load(list_runs, show=self.show_runs, group="runs", description="reading the list of runs")

    def show_runs(self, runs: list[RunRow]) -> None:
        self.runs = runs
        if not runs:
            self.query_one("#runs-help", Static).update(
                Text("This ledger holds no runs yet — start one with `quotabench run CONFIG.toml`.", style="bold")
            )
            return
        self.fill_table({})
        self.query_one("#runs", DataTable).focus()
        self.load(
            all_headlines,
            [run.id for run in runs],
            show=self.fill_table,
            group="headlines",
            description="computing the runs' headline numbers",
        )

    def fill_table(self, headlines: dict[str, list[ArmHeadline]]) -> None:
        """(Re)build the rows, with headline numbers where computed, keeping the cursor's run."""
        table = self.query_one("#runs", DataTable)
        current = cursor_key(table) if table.row_count else None
        table.clear()
        for run in self.runs:
            arm_names = _lines([Text(name, style="bold") for name, _ in run.arms] or ["—"])
            models = _lines([Text(labels.short_model(model), style="bright_black") for _, model in run.arms] or ["—"])
            status = labels.run_status(
                {"status": run.status, "finished_utc": run.finished_utc, "process_json": run.process_json}, short=True
            )
            warning = labels.sandbox_warning(run.sandbox)
            if warning is not None:
                status = Text("\n").join([status, warning])
            numbers = headline_cells(headlines[run.id]) if headlines.get(run.id) else ["…"] * 4
            table.add_row(
                Text(run.id[:10]),
                status,
                arm_names,
                *numbers,
                models,
                str(run.n_tasks),
                str(run.n_attempts),
                labels.when(run.created_utc)[:16],
                run.manifest_sha256[:12] or "—",
                key=run.id,
                height=max(1, len(run.arms), 2 if warning else 1),
            )
        if current is not None:
            table.move_cursor(row=table.get_row_index(current))
        if headlines and self.runs:  # the metrics are loaded now: prepare the first run's report for enter
            self.load(
                self.reader.report,
                self.runs[0].id,
                show=lambda _: None,
                group="prefetch",
                description="preparing the report of the newest run",
            )

    def load_failed(self, group: str, error: BaseException | None) -> None:
        if group == "runs":
            self.query_one("#runs-help", Static).update(Text(f"Could not read the runs: {error}", style="bold red"))

    def action_open(self) -> None:
        table = self.query_one("#runs", DataTable)
        if not self.runs or table.cursor_row is None:
            return
        run_id = cursor_key(table)
        self.app.push_screen(RunScreen(self.reader, run_id))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()
