"""The task grid and the event tail: Line-API widgets that repaint only the lines that changed.

A DataTable re-renders every visible row whenever one cell changes; at a few hundred events a
second that alone ate most of the frame budget (benchmarks/tui.py). Here a row is rendered
once per change and kept as a Strip; moving the cursor repaints two lines.
"""
from __future__ import annotations

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from tuiapp.live.state import CELL_LOOK, RunState, TaskCell

STATUS_CLASSES = {f"status--{status}" for status in CELL_LOOK}
CELL_W, GAP, TASK_W_MAX = 20, 2, 30


def cell_words(cell: TaskCell) -> tuple[str, str, str]:
    """(status, words, tokens) of a cell: symbol, status word and attempt number; the tokens
    once the task is no longer running (they would change on every call)."""
    symbol, short, _ = CELL_LOOK.get(cell.status, ("?", cell.status, cell.status))
    if cell.status == "running":
        return cell.status, f"{symbol} {short} {cell.attempt}", ""
    words = f"{symbol} {short}" + (f" #{cell.attempt}" if cell.attempt > 1 or cell.status == "grading" else "")
    tokens = "" if cell.status in ("pending", "grading") or not cell.tokens else _compact(cell.tokens)
    return cell.status, words, tokens


def _compact(n: int) -> str:
    return f"{n}" if n < 1000 else f"{n / 1000:.1f}k" if n < 100_000 else f"{n // 1000}k"


class TaskGrid(Widget, can_focus=True):
    """A row per task, a cell per arm. Enter (or a click) posts TaskChosen for the cursor's task."""

    COMPONENT_CLASSES = {"task-grid--header", "task-grid--cursor"} | STATUS_CLASSES
    BINDINGS = [
        Binding("enter", "choose", "task attempts", id="grid-attempts"),
        Binding("up,k", "move(-1)", "up", show=False), Binding("down,j", "move(1)", "down", show=False),
        Binding("pageup", "page(-1)", "page up", show=False), Binding("pagedown", "page(1)", "page down", show=False),
        Binding("home", "move_to(0)", "first", show=False), Binding("end", "move_to(-1)", "last", show=False),
    ]

    class TaskChosen(Message):
        def __init__(self, task_id: str) -> None:
            super().__init__()
            self.task_id = task_id

    def __init__(self, arms: list[str], **kwargs) -> None:
        super().__init__(**kwargs)
        self.arms = arms
        self.task_ids: list[str] = []
        self._row_of: dict[str, int] = {}
        self.cells: dict[tuple[str, str], tuple[str, str, str]] = {}
        self.cursor = self.top = 0
        self.task_w = 8
        self._strips: dict[str, tuple[tuple, Strip]] = {}

    # -- data in ---------------------------------------------------------------------------------
    def sync_rows(self, state: RunState) -> None:
        """Take the task list (it arrives with RunStarted) and every cell's current look."""
        self.task_ids = list(state.task_ids)
        self._row_of = {t: i for i, t in enumerate(self.task_ids)}
        self.task_w = min(TASK_W_MAX, max([4, *map(len, self.task_ids)]))
        for arm in self.arms:
            for task_id, cell in state.arms[arm].cells.items():
                self.cells[(arm, task_id)] = cell_words(cell)
        self._set_subtitle()
        self.refresh(layout=True)

    def show_cell(self, state: RunState, arm: str, task_id: str) -> None:
        look = cell_words(state.arms[arm].cells[task_id])
        if arm not in self.arms or self.cells.get((arm, task_id)) == look:
            return
        self.cells[(arm, task_id)] = look
        if task_id in self._row_of:
            self._refresh_row(self._row_of[task_id])

    @property
    def cursor_task(self) -> str | None:
        return self.task_ids[self.cursor] if self.task_ids else None

    # -- rendering ---------------------------------------------------------------------------------
    def get_content_width(self, container, viewport) -> int:
        return self.task_w + len(self.arms) * (GAP + CELL_W)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if y == 0:
            header = Text(f"{'task':<{self.task_w}}" + "".join(" " * GAP + f"{a:<{CELL_W}}" for a in self.arms),
                          style=self.get_component_rich_style("task-grid--header"))
            return self._strip(header, width)
        row = self.top + y - 1
        if row >= len(self.task_ids):
            return Strip.blank(width, self.rich_style)
        task_id = self.task_ids[row]
        looks = tuple(self.cells.get((a, task_id), ("pending", "", "")) for a in self.arms)
        key = (row == self.cursor, width, looks)
        cached = self._strips.get(task_id)
        if cached is not None and cached[0] == key:
            return cached[1]
        base = self.get_component_rich_style("task-grid--cursor") if row == self.cursor else self.rich_style
        name = task_id if len(task_id) <= self.task_w else task_id[: self.task_w - 1] + "…"
        text = Text(f"{name:<{self.task_w}}", style=base)
        for status, words, tokens in looks:
            text.append(" " * GAP)
            text.append(words, self.get_component_rich_style(f"status--{status}", partial=True))
            text.append(f"{tokens:>{CELL_W - len(words)}}")
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

    def __init__(self, **kwargs) -> None:
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
