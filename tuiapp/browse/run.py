"""The run screen: the report's decision table and paired comparison on top, the task × arm
grid below (verdict and failure class of each cell), with filters and a task-id search."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Header, Input, Static

from tuiapp.browse import labels
from tuiapp.browse.base import BrowseScreen, cursor_key
from tuiapp.browse.data import (
    NOT_RUN,
    UNFINISHED_STATUS,
    Cell,
    Filters,
    GridRow,
    Reader,
    RunView,
    filter_choices,
    load_run,
)
from tuiapp.looks import CONTROL_STATUS
from tuiapp.report_fit import fitted_table

UNFINISHED = {NOT_RUN, *UNFINISHED_STATUS.values()}
FILTERS = (
    ("verdict", "v", "Verdict"),
    ("failure_class", "c", "Class"),
    ("language", "l", "Language"),
    ("kind", "k", "Kind"),
)


class GridTable(DataTable[Any]):
    """DataTable hides its enter binding; this one shows in the footer what enter opens."""

    BINDINGS = [Binding("enter", "select_cursor", "Open task", id="browse.open_task")]


FULL_CELLS_FROM = 150  # screen columns from which a grid cell shows its verdict and full token count
TASK_CHARS = 20  # a task id in the compact grid; longer ones end in "…" (the task screen has the whole id)


def cell_text(cell: Cell, compact: bool = False, control: bool = False) -> Text:
    """'fail    reasoning      2 att  563 tok' — compact: 'reasoning      2 att  563', the
    verdict left to the task screen; running / ungraded / not run cells say so once. An
    impossible control's pass reads '⚠ gamed control', its reasoning failure '○ held control'."""
    out = Text()
    if not compact:
        out = Text() if cell.verdict in UNFINISHED else labels.verdict_text(cell.verdict)
        out.pad_right(8 - len(out.plain))
    start = len(out.plain)
    shown = CONTROL_STATUS.get(cell.failure_class or "", cell.failure_class) if control else cell.failure_class
    out.append_text(labels.class_text(shown))
    out.pad_right(start + 15 - len(out.plain))
    if cell.attempts:
        if compact:  # an accepted cell's attempts end at the accepted one: its number is the count
            out.append(f"{cell.attempts} att {labels.tokens_short(cell.tokens):>5}", style="bright_black")
        else:
            out.append(
                f"  {cell.attempts} att" + (f", ok on #{cell.accepted_on}" if cell.accepted_on else ""),
                style="bright_black",
            )
            out.append(f"  {labels.tokens(cell.tokens)} tok", style="bright_black")
    return out


def report_renderable(report: dict[str, Any], width: int = 160) -> RenderableType:
    # The report's own cell formatting, so the browser and `quotabench report` print the same
    # numbers. Imported here: agent.metrics is loaded by the worker that built `report`.
    from agent.metrics.decision_table import cost_left_out_line, decision_headers, decision_rows, published_lines
    from agent.metrics.run_lines import comparison_lines

    section = report["runs"][0]
    table = fitted_table(
        decision_headers(section, report["with_cost"]), decision_rows(section, report["with_cost"]), width
    )
    table.title, table.title_justify, table.title_style = "Decision table", "left", "bold"
    parts: list[RenderableType] = [table]
    for c in section["comparisons"]:
        parts.append(Text(f"Paired comparison {c['second']} vs {c['first']}", style="bold"))
        parts.extend(Text(f"  {line}") for line in comparison_lines(c))
    if section["comparisons"]:
        parts.append(Text(f"  decision rule: {report['decision_rule']['text']}", style="bright_black"))
    parts.append(Text("Published with these numbers", style="bold"))
    parts.extend(Text(f"  {line}") for line in published_lines(section, report["with_cost"]))
    if not section["comparisons"]:
        parts.append(Text("No paired comparison: fewer than two arms, or no task finished by both.", style="italic"))
    left_out = cost_left_out_line(report)
    if left_out:
        parts.append(Text(left_out[0].upper() + left_out[1:], style="italic bright_black"))
    return Group(*parts)


class RunScreen(BrowseScreen):
    # The filter keys are listed, with their values, on the filter line above the grid.
    BINDINGS = [
        *(
            Binding(key, f"cycle('{name}')", f"{label}", show=False, id=f"browse.filter_{name}")
            for name, key, label in FILTERS
        ),
        Binding("slash", "search", "Search ids", show=False, id="browse.search"),
        Binding("x", "clear_filters", "Clear filters", id="browse.clear_filters"),
    ]

    def __init__(self, reader: Reader, run_id: str, **kwargs: Any) -> None:
        super().__init__(reader, **kwargs)
        self.run_id = run_id
        self.filters = Filters()
        self.rows: list[GridRow] = []
        self.choices: dict[str, list[str]] = {}
        self.report: dict[str, Any] | None = None
        self.compact: bool | None = None  # grid cells laid out for the screen's width

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="run-title", classes="title")
        with VerticalScroll(id="report-box"):
            yield Static(Text("Computing the report…", style="italic"), id="report")
        yield Static(id="filters", classes="help")
        yield Input(placeholder="task id contains… (enter keeps it, escape clears)", id="search")
        yield GridTable(id="grid", cursor_type="row", zebra_stripes=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = f"run {self.run_id}"
        self.query_one("#search", Input).display = False
        self.load(load_run, self.run_id, show=self.show_run, group="run", description=f"reading run {self.run_id}")

    # -- showing what the workers read ----------------------------------------------------------
    def show_run(self, view: RunView) -> None:
        run = view.run
        title = Text(f"Run {run['id']}", style="bold")
        title.append("  ")
        title.append_text(labels.run_status(run))
        title.append(
            f"  ·  created {labels.when(run.get('created_utc'))}  ·  manifest "
            f"{(run.get('manifest_sha256') or '—')[:12]}  ·  {len(view.rows)} tasks  ·  arms: "
            + ", ".join(f"{a['name']} = {labels.short_model(a['model'])} ({a['protocol'] or '?'})" for a in view.arms)
        )
        warning = labels.sandbox_warning(run.get("isolation_sandbox"))
        if warning is not None:
            title.append("  ·  ")
            title.append_text(warning)
        if view.forced:
            title.append("\n⚠ " + view.forced, style="bold yellow")
        self.query_one("#run-title", Static).update(title)
        self.arm_names = [a["name"] for a in view.arms] or [c.arm for c in (view.rows[0].cells if view.rows else ())]
        self.rows = view.rows
        self.choices = filter_choices(view.rows)
        self.models = {a["name"]: labels.short_model(a["model"]) for a in view.arms if a.get("model")}
        self.compact = None
        self.refresh_grid()
        self.query_one("#grid", DataTable).focus()
        # The report (numpy, a bootstrap) starts once the grid is up, so it never delays it.
        self.call_after_refresh(
            self.load,
            self.reader.report,
            self.run_id,
            show=self.show_report,
            group="report",
            description=f"computing the report of run {self.run_id}",
        )

    def show_report(self, report: dict[str, Any]) -> None:
        self.report = report
        self.query_one("#report", Static).update(report_renderable(report, self._width()))

    def _width(self) -> int:
        return max(40, self.size.width - 2)

    def on_resize(self) -> None:
        if self.report is not None:
            self.query_one("#report", Static).update(report_renderable(self.report, self._width()))
        if self.rows and self.compact != (self.size.width < FULL_CELLS_FROM):
            self.refresh_grid()

    def load_failed(self, group: str, error: BaseException | None) -> None:
        if group == "report":
            self.query_one("#report", Static).update(Text(f"Report not available: {error}", style="yellow"))
        elif group == "run":
            self.query_one("#run-title", Static).update(
                Text(f"Could not read run {self.run_id}: {error}", style="bold red")
            )

    def refresh_grid(self) -> None:
        """The task x arm grid: the arms' cells first (compact below FULL_CELLS_FROM columns),
        language and kind after them; wider than the screen, it scrolls sideways."""
        table = self.query_one("#grid", DataTable)
        compact = self.size.width < FULL_CELLS_FROM
        cursor = cursor_key(table) if table.row_count else None
        if compact != self.compact:
            self.compact = compact
            table.clear(columns=True)
            table.add_column("task", key="task")
            for name in self.arm_names:
                model = self.models.get(name)
                table.add_column(f"arm {name} ({model})" if model else f"arm {name}", key=f"arm:{name}")
            table.add_column("language", key="language")
            table.add_column("kind", key="kind")
        table.clear()
        shown = [r for r in self.rows if self.filters.matches(r)]
        for row in shown:
            name = row.task_id if not compact or len(row.task_id) <= TASK_CHARS else row.task_id[: TASK_CHARS - 1] + "…"
            table.add_row(
                Text(name),
                *(cell_text(c, compact, row.control) for c in row.cells),
                row.language,
                row.kind,
                key=row.task_id,
            )
        if cursor is not None and cursor in table.rows:
            table.move_cursor(row=table.get_row_index(cursor))
        self.query_one("#filters", Static).update(self.filter_line(len(shown)))

    def filter_line(self, shown: int) -> Text:
        out = Text("Filters ", style="bold")
        for name, key, label in FILTERS:
            value = getattr(self.filters, name)
            out.append(f" {key}", style="bold reverse")
            out.append(f" {label.lower()}: ")
            shown_value = labels.class_label(value) if name == "failure_class" and value else (value or "all")
            out.append("— (no verdict)" if shown_value == "—" else shown_value, style="bold yellow" if value else "")
            out.append("  ")
        out.append(" / ", style="bold reverse")
        out.append(" task id: ")
        out.append(self.filters.search or "—", style="bold yellow" if self.filters.search else "")
        out.append(f"     {shown} of {len(self.rows)} tasks", style="bold")
        if self.filters.active:
            out.append("  (x clears)", style="bright_black")
        return out

    # -- actions ------------------------------------------------------------------------------
    def action_cycle(self, name: str) -> None:
        values = [None, *self.choices.get(name, [])]
        current = getattr(self.filters, name)
        setattr(self.filters, name, values[(values.index(current) + 1) % len(values)] if current in values else None)
        self.refresh_grid()

    def action_clear_filters(self) -> None:
        self.filters = Filters()
        search = self.query_one("#search", Input)
        search.value = ""
        search.display = False
        self.refresh_grid()

    def action_search(self) -> None:
        search = self.query_one("#search", Input)
        search.display = True
        search.focus()

    @on(Input.Changed, "#search")
    def search_changed(self, event: Input.Changed) -> None:
        self.filters.search = event.value.strip()
        self.refresh_grid()

    @on(Input.Submitted, "#search")
    def search_done(self, event: Input.Submitted) -> None:
        self.query_one("#grid", DataTable).focus()
        if not event.value:
            event.input.display = False

    def action_back(self) -> None:
        search = self.query_one("#search", Input)
        if search.has_focus:
            search.value = ""
            search.display = False
            self.query_one("#grid", DataTable).focus()
            return
        super().action_back()

    def action_open(self) -> None:
        table = self.query_one("#grid", DataTable)
        if table.row_count == 0:
            return
        task_id = cursor_key(table)
        from tuiapp.browse.task import TaskScreen  # its screens (pygments) load when first opened

        self.app.push_screen(TaskScreen(self.reader, self.run_id, task_id))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()
