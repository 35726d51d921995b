"""The attempt screen: the verdict and its evidence, the diff against the fixture (d toggles
unified / side by side) and the transcript, in three tabs."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Static, TabbedContent, TabPane

from tuiapp.browse import labels
from tuiapp.browse.base import BrowseScreen
from tuiapp.browse.data import AttemptView, Reader, load_attempt
from tuiapp.browse.diffview import render_diff
from tuiapp.browse.evidence import attempt_state, render_evidence
from tuiapp.browse.transcript import Transcript


def header_text(view: AttemptView) -> Text:
    a, arm = view.attempt, view.arm
    out = Text(f"{a['task_id']}", style="bold")
    out.append(
        f"  ·  arm {arm.get('name')} ({labels.short_model(arm.get('model'))}, {arm.get('protocol') or '?'})  ·  "
        f"attempt {a['attempt_no']} of {len(view.siblings)}  ·  "
    )
    out.append_text(labels.verdict_text(a["verdict"]))
    out.append(" · ")
    out.append_text(labels.class_text(attempt_state(view)))
    out.append(
        f"\nended: {a['end_reason'] or '—'}  ·  {labels.tokens(a['total_tokens'])} tokens "
        f"({labels.tokens(a['prompt_tokens'])} in / {labels.tokens(a['completion_tokens'])} out)  ·  "
        f"{a['calls'] or 0} HTTP tries, {a['transport_retries'] or 0} retries  ·  {a['turns'] or 0} turns  ·  "
        f"{labels.duration(a['duration_ms'])}  ·  started {labels.when(a['started_utc'])}",
        style="bright_black",
    )
    return out


def no_diff_reason(view: AttemptView) -> str:
    a = view.attempt
    if a["status"] == "running":
        return "No diff: the attempt never ended, so its final workspace was never recorded."
    if not a.get("edited"):
        return "No diff: the attempt changed no file."
    return "No diff recorded."


class AttemptScreen(BrowseScreen):
    BINDINGS = [
        # short descriptions: all of them fit an 80-column footer
        Binding("e", "tab('evidence')", "Evidence", id="browse.tab_evidence"),
        Binding("d", "diff", "Diff/split", tooltip="d again: unified or side by side", id="browse.diff"),
        Binding("t", "tab('transcript')", "Transcript", id="browse.tab_transcript"),
        Binding("x", "expand", "Expand", tooltip="expand or collapse the tool calls", id="browse.expand"),
        Binding("n", "sibling(1)", "Next", tooltip="the next attempt of this arm", id="browse.next_attempt"),
        Binding("p", "sibling(-1)", "Prev", tooltip="the previous attempt of this arm", id="browse.previous_attempt"),
    ]

    def __init__(
        self, reader: Reader, attempt_id: str, *, side_by_side: bool = False, tab: str = "evidence", **kwargs: Any
    ) -> None:
        super().__init__(reader, **kwargs)
        self.attempt_id = attempt_id
        self.side_by_side = side_by_side
        self.initial_tab = tab
        self.view: AttemptView | None = None
        self.expanded = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("Reading the attempt…", style="italic"), id="attempt-title", classes="title")
        with TabbedContent(initial=self.initial_tab, id="tabs"):
            with TabPane("Evidence", id="evidence"):
                yield VerticalScroll(Static(id="evidence-body"), id="evidence-scroll")
            with TabPane("Diff", id="diff"):
                yield Static(id="diff-mode", classes="help")
                yield VerticalScroll(Static(id="diff-body"), id="diff-scroll")
            with TabPane("Transcript", id="transcript"):
                yield Static(
                    Text(
                        "tool calls are collapsed: x expands them all, enter or a click opens one",
                        style="italic bright_black",
                    ),
                    classes="help",
                )
                yield VerticalScroll(id="transcript-box")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = f"attempt {self.attempt_id}"
        self.load(
            load_attempt,
            self.attempt_id,
            show=self.show_attempt,
            group="attempt",
            description=f"reading attempt {self.attempt_id}",
        )

    def show_attempt(self, view: AttemptView) -> None:
        self.view = view
        self.sub_title = f"run {view.attempt['run_id'][:10]} · {view.attempt['task_id']} · arm {view.attempt['arm']}"
        self.query_one("#attempt-title", Static).update(header_text(view))
        self.query_one("#evidence-body", Static).update(render_evidence(view))
        self.show_diff()
        box = self.query_one("#transcript-box", VerticalScroll)
        box.remove_children()
        box.mount(Transcript(view, id="transcript-view"))

    def show_diff(self) -> None:
        if self.view is None:
            return
        mode = Text("d ", style="bold reverse")
        mode.append(" side by side (d: unified)" if self.side_by_side else " unified (d: side by side)")
        mode.append("   fixture (tasks.path/workspace) → final workspace of the attempt", style="bright_black")
        self.query_one("#diff-mode", Static).update(mode)
        self.query_one("#diff-body", Static).update(
            render_diff(
                self.view.attempt["diff"],
                self.view.files,
                self.view.fixture,
                side_by_side=self.side_by_side,
                empty=no_diff_reason(self.view),
            )
        )

    def load_failed(self, group: str, error: BaseException | None) -> None:
        self.query_one("#attempt-title", Static).update(
            Text(f"Could not read attempt {self.attempt_id}: {error}", style="bold red")
        )

    # -- actions ------------------------------------------------------------------------------
    def action_tab(self, tab: str) -> None:
        self.query_one("#tabs", TabbedContent).active = tab

    def action_diff(self) -> None:
        tabs = self.query_one("#tabs", TabbedContent)
        if tabs.active == "diff":
            self.side_by_side = not self.side_by_side
            self.show_diff()
        else:
            tabs.active = "diff"

    def action_expand(self) -> None:
        self.expanded = not self.expanded
        for transcript in self.query(Transcript):
            transcript.set_expanded(self.expanded)
        self.action_tab("transcript")

    def action_sibling(self, step: int) -> None:
        if self.view is None or self.attempt_id not in self.view.siblings:
            return
        siblings = self.view.siblings
        index = siblings.index(self.attempt_id) + step
        if not 0 <= index < len(siblings):
            self.notify("No more attempts of this arm on this task.", timeout=3)
            return
        tabs = self.query_one("#tabs", TabbedContent)
        self.app.switch_screen(
            AttemptScreen(self.reader, siblings[index], side_by_side=self.side_by_side, tab=tabs.active or "evidence")
        )
