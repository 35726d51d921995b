"""Driving a run from the terminal: headless with the line printer and the signals (Ctrl-C once
aborts, twice, SIGTERM or SIGHUP stops now), whether the live view can run here, and the harness
guarded before any model-written code runs."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:  # the engine's imports take a while: loaded when a run starts, not for --help
    from agent.run.engine import RunEngine

STOP_NOW = (
    "quotabench: stopping now; calls in flight are recorded as lost, a grade in progress is not waited for "
    "(`quotabench resume` grades it)"
)


async def headless(engine: RunEngine, start: Callable[[], Awaitable[str]]) -> str:
    """Drive the engine with the line printer; Ctrl-C once = graceful abort (saying what it waits
    for), twice = stop now (calls in flight recorded as lost, a grade in progress not waited for)."""
    from agent.printer import abort_line, print_events

    result: dict[str, str] = {}

    async def watch_signals() -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGHUP) as signals:
            count = 0
            async for signum in signals:
                count += 1
                if signum in (signal.SIGTERM, signal.SIGHUP) or count > 1:
                    print(STOP_NOW, file=sys.stderr, flush=True)
                    engine.stop_now()
                else:
                    engine.abort()
                    print(f"quotabench: {abort_line(engine.work.waiting_for())}", file=sys.stderr, flush=True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(print_events, engine.events)
        watcher = anyio.CancelScope()

        async def guarded() -> None:
            with watcher:
                await watch_signals()

        tg.start_soon(guarded)
        try:
            result["run_id"] = await start()
        finally:
            watcher.cancel()
    return result["run_id"]


def no_terminal() -> str | None:
    """Why the full-screen views cannot run here (None when they can)."""
    if not sys.stdout.isatty():
        return "its output goes to a pipe or a file, not a terminal"
    if not sys.stdin.isatty():
        return "its input is not a terminal"
    if os.environ.get("TERM") == "dumb":
        return "TERM=dumb"
    return None


def want_tui(headless: bool) -> bool:
    """Whether to show the live view: not with --headless, nor where it cannot run (said once)."""
    if headless:
        return False
    why = no_terminal()
    if why is not None:  # said once, before the first line
        print(
            f"quotabench: printing one line per event instead of the live view: {why} "
            "(--headless chooses this without the note)",
            file=sys.stderr,
            flush=True,
        )
    return why is None


def guard_harness() -> None:
    """Before any model-written code runs: hide this process from same-uid code and clear what
    killed runs left behind (scratch folders, fallback cgroups)."""
    from verifiers.isolation import clean_stale_cgroups, protect_harness
    from verifiers.scratch import clean_stale

    protect_harness()
    clean_stale()
    clean_stale_cgroups()
