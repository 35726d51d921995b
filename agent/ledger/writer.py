"""Ledger writes off the event loop, in order, on one writer thread per ledger.

Two ways to write. `await insert/update/batch/run(...)` returns once the write is committed:
what a kill must never lose goes this way (the in-flight call row before its request is sent,
an attempt's end, the grade). `batch_queued(...)` hands the write to the thread and returns at
once: the thread commits it straight away, in order behind every earlier write, while the
engine goes on (a finished call's final row while its tool runs). A queued write cannot be
cancelled; if it fails, the next awaited write (or `flush`) raises its error.

Every awaited write waits for the queued writes before it (one FIFO, one thread), so when an
awaited write returns, everything written before it is committed too.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import queue
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import anyio

from agent.ledger.ops import Insert, Op, Update
from agent.ledger.store import Ledger

IDLE_S = 2.0  # an idle writer thread ends after this long; the next write starts a new one
GROUP_MAX = 64  # writes found waiting that commit in one transaction
_writers: weakref.WeakSet[AsyncLedger] = weakref.WeakSet()


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


class AsyncLedger:
    def __init__(self, ledger: Ledger):
        self.ledger = ledger
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None
        _writers.add(self)

    # -- the writer thread ------------------------------------------------------------------
    def _submit(self, item: tuple[Any, ...]) -> None:
        """item: ("ops", ops, done) — rows to commit — or ("call", (fn, args), done)."""
        with self._lock:
            self._queue.put(item)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._work, name=f"ledger-writer {self.ledger.path.name}", daemon=True
                )
                self._thread.start()

    def _work(self) -> None:
        while True:
            try:
                items = [self._queue.get(timeout=IDLE_S)]
            except queue.Empty:
                with self._lock:
                    if self._queue.empty():
                        self._thread = None
                        return
                continue
            with contextlib.suppress(queue.Empty):
                while len(items) < GROUP_MAX:
                    items.append(self._queue.get_nowait())
            start = 0
            while start < len(items):
                end = start + 1
                if items[start][0] == "ops":
                    while end < len(items) and items[end][0] == "ops":
                        end += 1
                    self._commit(items[start:end])
                else:
                    fn, args = items[start][1]
                    self._finish(items[start][2], fn, *args)
                start = end

    def _commit(self, group: list[tuple[Any, ...]]) -> None:
        """Writes found waiting together commit in one transaction (group commit: one WAL commit
        instead of one per write); if that fails, each is tried alone so the error is its own."""
        if len(group) > 1:
            try:
                self.ledger.batch([op for _, ops, _ in group for op in ops])
            except BaseException:  # noqa: BLE001 — retried one by one below
                pass
            else:
                for _, _, done in group:
                    if done is not None:
                        done(None, None)
                return
        for _, ops, done in group:
            self._finish(done, self.ledger.batch, ops)

    def _finish(self, done: Callable[..., Any] | None, fn: Callable[..., Any], *args: Any) -> None:
        try:
            result = fn(*args)
        except BaseException as exc:  # noqa: BLE001 — handed to whoever waits, or to the next awaited write
            if done is None:
                self._failure = self._failure or exc
            else:
                done(None, exc)
        else:
            if done is not None:
                done(result, None)

    def _raise_queued_failure(self) -> None:
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block (no event loop needed) until every write handed over so far is done."""
        reached = threading.Event()
        self._submit(("call", (reached.set, ()), None))
        return reached.wait(timeout)

    # -- awaited ----------------------------------------------------------------------------
    async def _wait(self, kind: str, payload: Any) -> Any:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()

        def done(result: Any, error: BaseException | None) -> None:
            try:
                loop.call_soon_threadsafe(_settle, future, result, error)
            except RuntimeError:  # the loop is closed: nobody is waiting any more
                pass

        self._submit((kind, payload, done))
        with anyio.CancelScope(shield=True):  # as to_thread.run_sync: a write started is waited for
            result = await future
        self._raise_queued_failure()
        return result

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(*args) on the writer thread, after every write handed over before it."""
        return await self._wait("call", (fn, args))

    async def insert(self, table: str, row: dict[str, Any]) -> None:
        await self._wait("ops", [Insert(table, row)])

    async def update(self, table: str, pk: Any, fields: dict[str, Any]) -> None:
        await self._wait("ops", [Update(table, pk, fields)])

    async def write(self, *ops: Op) -> None:
        """These writes, committed together (as `batch`)."""
        await self._wait("ops", list(ops))

    async def batch(self, ops: Sequence[Op]) -> None:
        """Ledger.batch's ops, committed together (and maybe with writes waiting beside them)."""
        await self._wait("ops", list(ops))

    async def flush(self) -> None:
        """Wait for every queued write; raise the error of one that failed."""
        await self.run(lambda: None)

    # -- queued -----------------------------------------------------------------------------
    def batch_queued(self, ops: Sequence[Op]) -> None:
        """Commit `ops` in one transaction on the writer thread, without waiting for it."""
        self._submit(("ops", list(ops), None))


@atexit.register
def _drain() -> None:
    """A process that ends normally first commits what it queued (the writer thread is a daemon)."""
    for writer in list(_writers):
        if writer._thread is not None:
            with contextlib.suppress(RuntimeError):  # the thread went idle meanwhile: nothing was queued
                writer.wait_idle(timeout=30)
