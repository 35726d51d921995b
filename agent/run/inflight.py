"""What a run is waiting for, and blocking work that stopping now does not wait for.

`InFlight` holds each model call, visible-test run and grade in progress with the latest time
it can end, so an abort can say what it waits for ("the grade of B py-x #1, up to 30 s").
`off_loop` runs blocking work (a grade, the visible tests) in a daemon thread: a stop-now
cancels the wait at once and the process does not wait for the thread at exit; the attempt's
grade is then never recorded, and `quotabench resume` grades it from its recorded files.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel

T = TypeVar("T")


@dataclass(frozen=True)
class Work:
    """One piece of work in progress: `what` ("a call", "the visible tests", "the grade") of
    attempt `attempt` of `task_id` on `arm` (none for the run's own work, e.g. its preflight),
    over by time.monotonic() `until` at the latest."""

    what: str
    until: float
    arm: str = ""
    task_id: str = ""
    attempt: int = 0

    def describe(self, now: float) -> str:
        of = f" of {self.arm} {self.task_id} #{self.attempt}" if self.task_id else ""
        return f"{self.what}{of} (up to {max(0.0, self.until - now):.0f} s)"


class InFlight:
    """The run's work in progress (only the event loop's thread touches it)."""

    def __init__(self) -> None:
        self._work: dict[int, Work] = {}
        self._keys = itertools.count()

    @contextlib.contextmanager
    def doing(self, what: str, limit_s: float, arm: str = "", task_id: str = "", attempt: int = 0) -> Iterator[None]:
        key = next(self._keys)
        self._work[key] = Work(what, time.monotonic() + max(0.0, limit_s), arm, task_id, attempt)
        try:
            yield
        finally:
            del self._work[key]

    def waiting_for(self) -> tuple[str, ...]:
        """What is in progress, the longest wait first."""
        now = time.monotonic()
        return tuple(w.describe(now) for w in sorted(self._work.values(), key=lambda w: -w.until))


async def off_loop(fn: Callable[..., T], *args: Any, name: str = "quotabench work") -> T:
    """fn(*args) in a daemon thread. Cancelling the caller stops waiting at once (the thread runs
    on, its result dropped); at exit the process does not wait for the thread either."""
    done = anyio.Event()
    token = anyio.lowlevel.current_token()
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 — handed to the waiting task, raised there
            outcome["error"] = exc
        finally:
            with contextlib.suppress(RuntimeError):  # the event loop is gone: nobody waits any more
                anyio.from_thread.run_sync(done.set, token=token)

    threading.Thread(target=target, name=name, daemon=True).start()
    await done.wait()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]
