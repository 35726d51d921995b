"""The task grid and the event tail: Line-API widgets that repaint only the lines that changed.

A DataTable re-renders every visible row whenever one cell changes; at a few hundred events a
second that alone ate most of the frame budget (benchmarks/tui.py). Here a row is rendered
once per change and kept as a Strip; moving the cursor repaints two lines.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from tuiapp.browse.labels import tokens_short
from tuiapp.live.state import RunState, TaskCell
from tuiapp.looks import GRAMMAR_GAP, LOOKS

STATUS_CLASSES = {f"status--{status}" for status in LOOKS}
# A cell is CELL_W wide ("✗ reasoning #2  11.1k"), or CELL_W_COMPACT ("✗ #2  11.1k") when the
# task column would otherwise drop below TASK_W_MIN: the task column shrinks first.
CELL_W, CELL_W_COMPACT, GAP, TASK_W_MAX, TASK_W_MIN = 20, 11, 2, 30, 14

Look = tuple[str, str, str]  # (status, words, tokens)


def cell_words(cell: TaskCell, compact: bool = False) -> Look:
    """(status, words, tokens) of a cell: symbol, status word (not when compact) and attempt
    number; the tokens once the task is no longer running (they would change on every call)."""
    look = LOOKS.get(cell.status)
    symbol, short = (look.glyph, look.short) if look else ("?", cell.status)
    if cell.grammar_gap and cell.status not in ("running", "grading"):
        symbol += GRAMMAR_GAP.glyph  # `✓§ accepted`: a note beside the class, never the class
    if cell.staged:
        return _staged_words(cell, symbol, compact)
    if cell.status == "running":
        return cell.status, f"{symbol} #{cell.attempt}" if compact else f"{symbol} {short} {cell.attempt}", ""
    number = f" #{cell.attempt}" if cell.attempt > 1 or cell.status == "grading" else ""
    words = f"{symbol}{number}" if compact else f"{symbol} {short}{number}"
    tokens = "" if cell.status in ("pending", "grading") or not cell.tokens else tokens_short(cell.tokens)
    return cell.status, words, tokens


def _staged_words(cell: TaskCell, symbol: str, compact: bool) -> Look:
    """A strategy task: `2/3 ✓ → ✓` — candidates passing the hidden tests / graded
    candidates, whether any does, then the submitted one's result; tokens when not compact."""
    pool = f"{sum(cell.pool)}/{len(cell.pool)}"
    if cell.submitted is None:
        running = cell.status in ("running", "grading")
        return cell.status, f"{symbol} {pool}" if running or cell.pool else symbol, ""
    covered = "✓" if any(cell.pool) else "✗"
    words = f"{pool} {covered}→{symbol}" if compact else f"{pool} {covered} → {symbol}"
    return cell.status, words, "" if compact else tokens_short(cell.tokens)


def _cut(text: str, width: int) -> str:
    """`text` in exactly `width` columns: padded, or cut with an ellipsis (never silently)."""
    return f"{text:<{width}}" if len(text) <= width else text[: max(0, width - 1)] + "…"


class TaskGrid(Widget, can_focus=True):
    """A row per task, a cell per arm. Enter (or a click) posts TaskChosen for the cursor's task."""

    COMPONENT_CLASSES = {"task-grid--header", "task-grid--cursor"} | STATUS_CLASSES
    BINDINGS = [
        Binding("enter", "choose", "task attempts", id="grid-attempts"),
        Binding("up,k", "move(-1)", "up", show=False),
        Binding("down,j", "move(1)", "down", show=False),
        Binding("pageup", "page(-1)", "page up", show=False),
        Binding("pagedown", "page(1)", "page down", show=False),
        Binding("home", "move_to(0)", "first", show=False),
        Binding("end", "move_to(-1)", "last", show=False),
    ]

    class TaskChosen(Message):
        def __init__(self, task_id: str) -> None:
            super().__init__()
            self.task_id = task_id

    def __init__(self, arms: list[str], labels: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.arms = arms
        self.labels = labels or {}  # arm -> "A · gpt-4.1-mini", shown in the header row when it fits
        self.task_ids: list[str] = []
        self._row_of: dict[str, int] = {}
        self.cells: dict[tuple[str, str], tuple[Look, Look]] = {}  # (full, compact)
        self.cursor = self.top = 0
        self.longest_task = 4
        self._strips: dict[str, tuple[tuple[bool, int, tuple[Look, ...]], Strip]] = {}

    # -- data in ---------------------------------------------------------------------------------
    def sync_rows(self, state: RunState) -> None:
        """Take the task list (it arrives with RunStarted) and every cell's current look."""
        self.task_ids = list(state.task_ids)
        self._row_of = {t: i for i, t in enumerate(self.task_ids)}
        self.longest_task = max([4, *map(len, self.task_ids)])
        for arm in self.arms:
            for task_id, cell in state.arms[arm].cells.items():
                self.cells[(arm, task_id)] = (cell_words(cell), cell_words(cell, compact=True))
        self._set_subtitle()
        self.refresh(layout=True)

    def show_cell(self, state: RunState, arm: str, task_id: str) -> None:
        cell = state.arms[arm].cells[task_id]
        looks = (cell_words(cell), cell_words(cell, compact=True))
        if arm not in self.arms or self.cells.get((arm, task_id)) == looks:
            return
        self.cells[(arm, task_id)] = looks
        if task_id in self._row_of:
            self._refresh_row(self._row_of[task_id])

    @property
    def cursor_task(self) -> str | None:
        return self.task_ids[self.cursor] if self.task_ids else None

    def layout_for(self, width: int) -> tuple[int, int, bool]:
        """(task column width, cell width, compact) for `width` columns: the task column shrinks
        to TASK_W_MIN first, then the cells turn compact; every arm's cell always shows."""
        longest = min(TASK_W_MAX, self.longest_task)
        room = width - len(self.arms) * (GAP + CELL_W)
        if room >= min(longest, TASK_W_MIN):
            return min(longest, room), CELL_W, False
        room = width - len(self.arms) * (GAP + CELL_W_COMPACT)
        return max(4, min(longest, room)), CELL_W_COMPACT, True

    # -- rendering ---------------------------------------------------------------------------------
    def get_content_width(self, container: Size, viewport: Size) -> int:
        return min(TASK_W_MAX, self.longest_task) + len(self.arms) * (GAP + CELL_W)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        task_w, cell_w, compact = self.layout_for(width)
        if y == 0:
            header = Text(_cut("task", task_w), style=self.get_component_rich_style("task-grid--header"))
            for arm in self.arms:
                label = self.labels.get(arm, arm)
                header.append(" " * GAP + _cut(label if len(label) <= cell_w else arm, cell_w))
            return self._strip(header, width)
        row = self.top + y - 1
        if row >= len(self.task_ids):
            return Strip.blank(width, self.rich_style)
        task_id = self.task_ids[row]
        pending = (("pending", "", ""), ("pending", "", ""))
        looks = tuple(self.cells.get((a, task_id), pending)[int(compact)] for a in self.arms)
        key = (row == self.cursor, width, looks)
        cached = self._strips.get(task_id)
        if cached is not None and cached[0] == key:
            return cached[1]
        base = self.get_component_rich_style("task-grid--cursor") if row == self.cursor else self.rich_style
        text = Text(_cut(task_id, task_w), style=base)
        for status, words, tokens in looks:
            text.append(" " * GAP)
            text.append(words, self.get_component_rich_style(f"status--{status}", partial=True))
            text.append(f"{tokens:>{max(0, cell_w - len(words))}}")
        strip = self._strip(text, width)
        self._strips[task_id] = (key, strip)
        return strip

    def _strip(self, text: Text, width: int) -> Strip:
        text.no_wrap, text.overflow = True, "crop"
        return Strip(text.render(self.app.console)).adjust_cell_length(width, self.rich_style)

    def _refresh_row(self, row: int) -> None:
        y = row - self.top + 1
        if 1 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    def _set_subtitle(self) -> None:
        self.border_subtitle = f"{self.cursor + 1}/{len(self.task_ids)}" if self.task_ids else ""

    # -- the cursor --------------------------------------------------------------------------------
    def _place(self, row: int) -> None:
        if not self.task_ids:
            return
        row = max(0, min(len(self.task_ids) - 1, row))
        visible = max(1, self.size.height - 1)
        old_cursor, old_top = self.cursor, self.top
        self.cursor = row
        if row < self.top:
            self.top = row
        elif row >= self.top + visible:
            self.top = row - visible + 1
        if self.top != old_top:
            self.refresh()
        else:
            self._refresh_row(old_cursor)
            self._refresh_row(row)
        self._set_subtitle()

    def action_move(self, delta: int) -> None:
        self._place(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self._place(self.cursor + direction * max(1, self.size.height - 2))

    def action_move_to(self, row: int) -> None:
        self._place(row if row >= 0 else len(self.task_ids) - 1)

    def action_choose(self) -> None:
        if self.cursor_task is not None:
            self.post_message(self.TaskChosen(self.cursor_task))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is not None and offset.y >= 1 and self.top + offset.y - 1 < len(self.task_ids):
            self._place(self.top + offset.y - 1)
            self.action_choose()

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self._place(self.cursor + 3)
        event.stop()

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._place(self.cursor - 3)
        event.stop()


class EventTail(Widget):
    """The newest event-log lines that fit, newest at the bottom; each line rendered once.

    A tail, not a scrolling log: appending repaints this widget only, where a scrolling Log
    re-lays-out the screen on every line. The full history is in the ledger (browse).
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lines: list[str] = []
        self._strips: dict[tuple[str, int], Strip] = {}

    def show(self, lines: list[str]) -> None:
        self.lines = lines
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width, height = self.size.width, self.size.height
        shown = self.lines[-height:] if height else []
        if y >= len(shown):
            return Strip.blank(width, self.rich_style)
        key = (shown[y], width)
        strip = self._strips.get(key)
        if strip is None:
            if len(self._strips) > 4 * max(height, 50):
                self._strips.clear()
            text = Text(shown[y], style=self.rich_style, no_wrap=True, overflow="ellipsis")
            text.truncate(width, overflow="ellipsis")
            strip = self._strips[key] = Strip(text.render(self.app.console)).adjust_cell_length(width, self.rich_style)
        return strip
