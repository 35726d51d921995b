"""Modal screens of the live view: a yes/no confirmation, the auto-pause decision, the attempts
of one task (read from the ledger in a thread) and the fatal-error screen."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from agent.config import MAX_CAP_TOKENS
from tuiapp.browse.labels import tokens_short
from tuiapp.live import figures as fig
from tuiapp.looks import CELL_LOOKS

COMPACT_BELOW = 32  # terminal rows under which dialog buttons and fields take one line each
CAP_CHARACTERS = frozenset("0123456789,._kKmM")  # what a new cap is typed with (parse_cap)


def _compact(screen: ModalScreen[Any]) -> bool:
    return screen.app.size.height < COMPACT_BELOW


class ConfirmModal(ModalScreen[bool]):
    """A question; y / enter on "Yes" confirms, n / escape declines."""

    AUTO_FOCUS = "#no"
    BINDINGS = [
        Binding("y", "answer(True)", "yes", id="confirm-yes"),
        Binding("n,escape", "answer(False)", "no", id="confirm-no"),
    ]

    def __init__(self, question: str, yes: str = "Yes") -> None:
        super().__init__(classes="confirm")
        self.question, self.yes = question, yes

    def compose(self) -> ComposeResult:
        compact = _compact(self)
        with Vertical(classes="dialog"):
            yield Static(Text(self.question), classes="question")
            with Horizontal(classes="buttons"):
                yield Button(f"{self.yes} (y)", id="yes", variant="error", compact=compact)
                yield Button("No (n)", id="no", variant="primary", compact=compact)

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


@dataclass(frozen=True)
class AutoPauseChoice:
    action: str  # continue | raise | stop | abort
    new_cap: int | None = None


def parse_cap(text: str) -> int | None:
    """ "150000", "150,000", "150_000", "150k", "1.5M" -> tokens; None if it is not a number."""
    match = re.fullmatch(r"\s*([0-9][0-9_,]*(?:\.[0-9]+)?)\s*([kKmM]?)\s*", text)
    if not match:
        return None
    number = float(match.group(1).replace(",", "").replace("_", ""))
    scale = {"": 1, "k": 1_000, "m": 1_000_000}[match.group(2).lower()]
    return int(number * scale)


def suggested_cap(used: int, reserved: int, next_call: int, cap: int, pause_share: float) -> int:
    """A cap that lets the next call through below the auto-pause share, and at least 1.5x the
    current one, rounded up to a readable number."""
    need = max(cap * 3 // 2, math.ceil((used + reserved + next_call) / pause_share) + 1)
    step: int = 10 ** max(0, len(str(need)) - 2)
    return -(-need // step) * step


class AutoPauseModal(ModalScreen[AutoPauseChoice]):
    """The run paused before an arm's cap: continue, raise the cap, stop the arm, or abort.

    Its numbers are the meter's, updated while calls in flight settle (`show_quota`)."""

    AUTO_FOCUS = "#continue"  # not the cap field: it would swallow the c / s / a keys
    BINDINGS = [
        Binding("c", "choose('continue')", "continue", id="autopause-continue"),
        Binding("r", "focus_cap", "raise the cap", id="autopause-raise"),
        Binding("s", "choose('stop')", "stop this arm", id="autopause-stop"),
        Binding("a", "choose('abort')", "abort the run", id="autopause-abort"),
        Binding("escape", "leave_cap", "leave the cap field", show=False, id="autopause-leave-cap"),
    ]

    def __init__(
        self,
        arm: str,
        used: int,
        reserved: int,
        cap: int,
        projection: str,
        *,
        next_call: int = 0,
        pause_share: float = 0.9,
    ) -> None:
        super().__init__(classes="autopause")
        self.arm, self.cap, self.next_call, self.pause_share = arm, cap, next_call, pause_share
        self.used, self.reserved, self.projection = used, reserved, projection
        self._typed = False  # keys were typed into the cap field before it had the focus

    @property
    def share_text(self) -> str:
        return fig.percent(fig.share(self.used, self.reserved, self.cap))

    def body(self) -> str:
        lines = [
            f"Arm {self.arm}: {fig.tokens(self.used)} used + {fig.tokens(self.reserved)} in flight / cap "
            f"{fig.tokens(self.cap)} ({self.share_text})."
        ]
        if self.next_call:
            after = fig.share(self.used + self.next_call, self.reserved, self.cap)
            where = (
                "past the cap: without a change the arm is censored at that call"
                if after > 1
                else f"past the auto-pause share of {self.pause_share:.0%}"
            )
            lines.append(
                f"Its next call reserves {fig.tokens(self.next_call)} tokens (prompt + max_tokens): "
                f"{fig.percent(after)}, {where}."
            )
        lines.append(f"Projection: {self.projection.removeprefix('projection ')}.")
        lines.append(
            "The run is paused; calls in flight finish and are recorded. Continue as is (censored if the "
            f"cap runs out), raise the cap, stop arm {self.arm} (the other arm goes on) or abort the run."
        )
        return "\n".join(lines)

    def compose(self) -> ComposeResult:
        compact = _compact(self)
        example = suggested_cap(self.used, self.reserved, self.next_call, self.cap, self.pause_share)
        with Vertical(classes="dialog"):
            yield Static(Text(f"Auto-pause: arm {self.arm} at {self.share_text} of its cap"), classes="title")
            yield Static(Text(self.body()), classes="body")
            with Horizontal(classes="cap-row"):
                yield Input(
                    placeholder=f"new cap above {self.cap:,}, e.g. {example:,} or {tokens_short(example)}",
                    id="new-cap",
                    compact=compact,
                )
                yield Button("Raise cap (r)", id="raise", variant="warning", compact=compact)
            yield Static("", id="cap-error")
            with Horizontal(classes="buttons"):
                yield Button("Continue (c)", id="continue", variant="primary", compact=compact)
                yield Button(f"Stop arm {self.arm} (s)", id="stop", variant="warning", compact=compact)
                yield Button("Abort run (a)", id="abort", variant="error", compact=compact)

    def show_quota(self, used: int, reserved: int, cap: int) -> None:
        """The meter's numbers changed (a call in flight settled): show the same ones here."""
        if (used, reserved, cap) == (self.used, self.reserved, self.cap):
            return
        self.used, self.reserved, self.cap = used, reserved, cap
        if self.is_mounted:
            self.query_one(".title", Static).update(Text(f"Auto-pause: arm {self.arm} at {self.share_text} of its cap"))
            self.query_one(".body", Static).update(Text(self.body()))

    def action_choose(self, action: str) -> None:
        self.dismiss(AutoPauseChoice(action))

    TYPING = "typing the new cap: enter raises it, escape goes back to the keys"

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """While the field has the keys, say so (c / s / a type into it then)."""
        if isinstance(event.widget, Input):
            self.query_one("#cap-error", Static).update(Text(self.TYPING, style="italic"))

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        error = self.query_one("#cap-error", Static)
        if isinstance(event.widget, Input) and str(error.render()) == self.TYPING:
            error.update("")

    def action_focus_cap(self) -> None:
        field = self.query_one("#new-cap", Input)
        field.select_all()  # a refused value is replaced by what is typed next
        field.focus()

    def on_key(self, event: events.Key) -> None:
        """A key meant for the cap field that arrives before the field has the focus (focus moves
        on the next turn of the loop, and a binding acts only once its key has bubbled up, so keys
        typed right after r come here first): typed into the field in order, never lost and never
        a binding."""
        field = self.query_one("#new-cap", Input)
        if field.has_focus:
            return
        if event.key == "r":  # here, not by the binding: a binding acts after the keys typed next
            self.action_focus_cap()
        elif event.key == "enter" and self._typed:  # the field's own enter: raise, not the focused button
            self._raise()
        elif event.character in CAP_CHARACTERS:
            start, end = sorted(field.selection)
            field.replace(event.character, start, end)
            self._typed = True
            field.focus()
        elif event.key == "backspace":
            field.action_delete_left()
            self._typed = True
            field.focus()
        else:
            return
        event.stop()
        event.prevent_default()

    def action_leave_cap(self) -> None:
        self.query_one("#raise", Button).focus()

    def _raise(self) -> None:
        self._typed = False
        raw = self.query_one("#new-cap", Input).value
        new_cap = parse_cap(raw)
        error = self.query_one("#cap-error", Static)
        if new_cap is None:
            error.update(Text(f"{raw!r} is not a number of tokens — r and type e.g. {self.cap * 2:,} or 500k"))
        elif new_cap <= self.cap:
            error.update(Text(f"{new_cap:,} is not above the current cap {self.cap:,} — r and type a larger number"))
        elif new_cap > MAX_CAP_TOKENS:
            error.update(
                Text(f"{new_cap:,} is above the largest cap, {MAX_CAP_TOKENS:,} — r and type a smaller number")
            )
        else:
            self.dismiss(AutoPauseChoice("raise", new_cap))
            return
        # the keys c / r / s / a work again at once: the field does not keep them
        self.query_one("#raise", Button).focus()

    @on(Input.Submitted, "#new-cap")
    def _submitted(self) -> None:
        self._raise()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "raise":
            self._raise()
        else:
            self.action_choose(event.button.id or "continue")


def read_attempts(ledger_path: Path, run_id: str, task_id: str) -> list[dict[str, Any]]:
    """The task's attempts on every arm with their tool calls and grade (own connection: threads)."""
    from agent.ledger import Ledger  # sqlite-utils and numpy: loaded in this thread, not at start-up
    from agent.ledger.live_reads import task_attempts_in_full

    ledger = Ledger(ledger_path)
    try:
        return task_attempts_in_full(ledger, run_id, task_id)
    finally:
        ledger.close()


def describe_attempt(row: dict[str, Any]) -> str:
    cls = row.get("failure_class")
    look = CELL_LOOKS.get(cls or ("running" if row.get("status") == "running" else "grading"))
    symbol, label = (look.glyph, look.label) if look else ("?", cls or row.get("status") or "?")
    stage = row.get("stage") or "attempt"  # a strategy's stage, ★ the submitted one
    if stage != "attempt":
        label = (
            f"{label} [{stage}{' ' + str(row['candidate']) if row.get('candidate') else ''}"
            f"{', submitted ★' if row.get('submitted') == 1 else ''}]"
        )
        if stage in ("critique", "judge") and not cls and row.get("status") == "done":
            symbol, label = "·", f"[{stage}: one model call, not graded]"
    head = (
        f"{row['arm']} attempt {row['attempt_no']}: {symbol} {label}  ·  end {row.get('end_reason') or '—'}"
        f"  ·  {fig.tokens(row.get('total_tokens') or 0)} tokens ({row.get('prompt_tokens') or 0:,} prompt + "
        f"{row.get('completion_tokens') or 0:,} completion)  ·  {row.get('calls') or 0} calls, "
        f"{row.get('transport_retries') or 0} retries, {row.get('turns') or 0} turns"
    )
    lines = [head, f"    started {row.get('started_utc') or '—'}  ·  {(row.get('duration_ms') or 0) / 1000:.1f} s"]
    grade = row.get("grade")
    if grade:
        failing = ", ".join(json.loads(grade.get("failing_tests_json") or "[]")[:4])
        lines.append(
            f"    hidden tests: {grade.get('verdict')} ({grade.get('passed') or 0} passed, "
            f"{grade.get('failed') or 0} failed{': ' + failing if failing else ''})"
        )
    tools = row.get("tools") or []
    if tools:
        shown = [f"{t['tool']}({t['path']})" if t.get("path") else t["tool"] for t in tools[-8:]]
        marks = ["" if t.get("ok") else " ✗" for t in tools[-8:]]
        lines.append(f"    tools ({len(tools)}): " + ", ".join(s + m for s, m in zip(shown, marks)))
    return "\n".join(lines)


class AttemptsModal(ModalScreen[None]):
    """Every attempt of one task so far, on every arm; r reloads, escape closes."""

    BINDINGS = [
        Binding("escape,q", "close", "close", id="attempts-close"),
        Binding("r", "reload", "reload", id="attempts-reload"),
    ]

    class Loaded(Message):
        def __init__(self, rows: list[dict[str, Any]]) -> None:
            super().__init__()
            self.rows = rows

    def __init__(self, ledger_path: Path, run_id: str, task_id: str) -> None:
        super().__init__(classes="attempts")
        self.ledger_path, self.run_id, self.task_id = ledger_path, run_id, task_id

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(f"Attempts of {self.task_id} so far  (r reload · escape close)"), classes="title")
            with VerticalScroll():
                yield Static("reading the ledger…", id="attempts-body")

    def on_mount(self) -> None:
        self.action_reload()

    def action_reload(self) -> None:
        self._load()

    @work(
        thread=True,
        exclusive=True,
        group="attempts",
        description="read a task's attempts from the ledger",
        exit_on_error=False,
    )
    def _load(self) -> None:
        rows = read_attempts(self.ledger_path, self.run_id, self.task_id)
        self.post_message(self.Loaded(rows))

    def on_attempts_modal_loaded(self, message: Loaded) -> None:
        text = "\n\n".join(describe_attempt(r) for r in message.rows) or "no attempt yet on any arm"
        self.query_one("#attempts-body", Static).update(Text(text))

    def action_close(self) -> None:
        self.dismiss(None)


class FatalModal(ModalScreen[None]):
    """The run cannot go on: say why, keep the screen, quit on q."""

    BINDINGS = [Binding("q,escape,enter", "quit", "quit", id="fatal-quit")]

    def __init__(self, message: str) -> None:
        super().__init__(classes="fatal")
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("The run stopped with an error", classes="title")
            yield Static(Text(self.message), classes="body")
            yield Static("Everything recorded before the error stays in the ledger. Press q to quit.")

    def action_quit(self) -> None:
        self.app.exit(getattr(self.app, "run_id", None))
