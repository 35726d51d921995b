"""The task screen: the arms side by side — every attempt, its verdict, class and tokens, and
which attempt was accepted. Enter opens an attempt."""

from __future__ import annotations

import textwrap
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import DataTable, Footer, Header, Static

from agent.classify import is_lost
from tuiapp.browse import labels
from tuiapp.browse.base import BrowseScreen, cursor_key
from tuiapp.browse.data import UNFINISHED_STATUS, Cell, Reader, TaskView, load_task
from tuiapp.looks import CLASS_LOOKS, CONTROL_LOOKS

ACCEPTED = CLASS_LOOKS["accepted"]

ATTEMPT_COLUMNS = ("#", "verdict", "class", "tokens in/out", "retries", "time", "ended")
PROMPT_LINES = 4


class AttemptsTable(DataTable[Any]):
    """DataTable hides its enter binding; this one shows in the footer what enter opens."""

    BINDINGS = [Binding("enter", "select_cursor", "Open attempt", id="browse.open_attempt")]


def outcome_text(
    arm: dict[str, Any], cell: Cell, submission: dict[str, Any] | None = None, control: bool = False
) -> Text:
    out = Text(f"Arm {arm['name']}", style="bold")
    strategy = f" · {arm['strategy']}" if arm.get("strategy") else ""
    out.append(
        f"  {labels.short_model(arm.get('model'))} · {arm.get('protocol') or ''}{strategy}\n", style="bright_black"
    )
    if submission is not None:  # a strategy arm: what was submitted and why
        out.append(f"submitted ({submission['route']}): {submission['reason']}\n", style="italic")
    if cell.accepted_on and control:
        gamed = CONTROL_LOOKS["gamed"]
        out.append(
            f"{gamed.glyph} passed on attempt {cell.accepted_on}: an impossible control, so the grader was gamed",
            style=gamed.style,
        )
    elif cell.accepted_on:
        out.append(f"accepted on attempt {cell.accepted_on}", style="bold green")
    elif cell.attempts == 0:
        out.append("no attempt made", style="bright_black")
    else:
        out.append("not accepted: ")
        out.append_text(labels.class_text(cell.failure_class))
    out.append(
        f"  ·  {cell.attempts} attempt{'s' if cell.attempts != 1 else ''}, {labels.tokens(cell.tokens)} tokens",
        style="bright_black",
    )
    return out


def attempt_number(a: dict[str, Any]) -> str:
    """`2`, `1 lost` (cut off by the run: its retry has the same number), or for a strategy's
    stage `2 cand 2 ★` (★: the submitted one)."""
    stage = a.get("stage") or "attempt"
    if stage == "attempt":
        return f"{a['attempt_no']} lost" if is_lost(a.get("failure_class")) else str(a["attempt_no"])
    name = f"cand {a['candidate']}" if stage == "candidate" else stage
    return f"{a['attempt_no']} {name}" + (" ★" if a.get("submitted") == 1 else "")


def attempt_row(a: dict[str, Any]) -> list[str | Text]:
    state = UNFINISHED_STATUS.get(a["status"]) or a["failure_class"]
    verdict = a["verdict"] or (state if state in ("running", "ungraded") else None)
    klass = (
        Text(f"{ACCEPTED.glyph} {ACCEPTED.short}", style=ACCEPTED.style) if a["accepted"] else labels.class_text(state)
    )
    return [
        attempt_number(a),
        labels.verdict_text(verdict),
        klass,
        f"{labels.tokens(a['prompt_tokens'])} / {labels.tokens(a['completion_tokens'])}",
        str(a["transport_retries"] or 0),
        labels.duration(a["duration_ms"]),
        a["end_reason"] or "—",
    ]


class TaskScreen(BrowseScreen):
    BINDINGS = [Binding("tab", "app.focus_next", "Other arm", id="browse.next_arm")]

    def __init__(self, reader: Reader, run_id: str, task_id: str, **kwargs: Any) -> None:
        super().__init__(reader, **kwargs)
        self.run_id, self.task_id = run_id, task_id

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text(f"Task {self.task_id}", style="bold"), id="task-title", classes="title")
        yield Horizontal(id="arms")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = f"run {self.run_id[:10]} · task {self.task_id}"
        self.load(
            load_task,
            self.run_id,
            self.task_id,
            show=self.show_task,
            group="task",
            description=f"reading task {self.task_id}",
        )

    def show_task(self, view: TaskView) -> None:
        t = view.task
        title = Text(f"Task {t['task_id']}", style="bold")
        title.append(
            f"  ·  {t.get('language') or '?'} · {t.get('kind') or '?'}  ·  {t.get('path') or ''}\n",
            style="bright_black",
        )
        # the prompt's paragraphs reflowed to the screen (its own line breaks are at ~80 columns)
        paragraphs = [" ".join(p.split()) for p in (t.get("prompt") or "").strip().split("\n\n") if p.strip()]
        prompt = textwrap.wrap("  ".join(paragraphs), max(20, self.size.width - 2))
        title.append("\n".join(prompt[:PROMPT_LINES]) + (" …" if len(prompt) > PROMPT_LINES else ""), style="italic")
        self.query_one("#task-title", Static).update(title)
        panes: list[Widget] = []
        for arm in view.arms:
            table = AttemptsTable(cursor_type="row", zebra_stripes=True, id=f"arm-{arm['name']}", classes="attempts")
            for name in ATTEMPT_COLUMNS:
                table.add_column(name)
            for a in view.attempts[arm["name"]]:
                table.add_row(*attempt_row(a), key=a["id"])
            panes.append(
                Vertical(
                    Static(
                        outcome_text(
                            arm,
                            view.cells[arm["name"]],
                            view.submissions.get(arm["name"]),
                            bool(view.task.get("control")),
                        ),
                        classes="arm-outcome",
                    ),
                    table,
                    classes="arm-pane",
                )
            )
        if not panes:
            panes.append(Static(Text("This run has no arms in the ledger.", style="italic")))
        arms = self.query_one("#arms", Horizontal)
        arms.remove_children()
        arms.mount_all(panes)
        self.call_after_refresh(self._focus_first)

    def _focus_first(self) -> None:
        tables = [t for t in self.query(DataTable) if t.row_count]
        if tables:
            tables[0].focus()

    def action_open(self) -> None:
        table = self.focused if isinstance(self.focused, DataTable) else None
        if table is None or table.row_count == 0:
            return
        attempt_id = cursor_key(table)
        from tuiapp.browse.attempt import AttemptScreen  # pygments and the evidence renderers: loaded here

        self.app.push_screen(AttemptScreen(self.reader, attempt_id))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        event.data_table.focus()
        self.action_open()
