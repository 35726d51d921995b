"""Messages the live view's workers post to the app (only their handlers touch widgets)."""

from __future__ import annotations

from textual.message import Message

from tuiapp.live.figures import Figures


class RunChanged(Message):
    """The run state took new events. High frequency: a pending one is merged into the next."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RunChanged)


class AutoPaused(Message):
    """The engine paused at `arm`'s choice point before its cap; its next call reserves
    `next_call` tokens (0 when usage alone crossed the auto-pause share)."""

    def __init__(self, arm: str, reason: str, next_call: int = 0) -> None:
        super().__init__()
        self.arm, self.reason, self.next_call = arm, reason, next_call


class RunEnded(Message):
    """RunFinished arrived: `status` is finished, aborted or crashed."""

    def __init__(self, status: str) -> None:
        super().__init__()
        self.status = status


class FiguresReady(Message):
    """The timer's recomputation of the aggregate figures finished (in a thread)."""

    def __init__(self, figures: Figures, seen: int) -> None:
        super().__init__()
        self.figures, self.seen = figures, seen  # seen: events folded when the snapshot was taken

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, FiguresReady)
