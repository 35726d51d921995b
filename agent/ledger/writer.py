"""Ledger writes off the event loop: one worker thread at a time, awaited by the engine.

Awaiting each write (rather than queueing it) is what makes "a kill loses at most the call in
flight" true: when the engine moves on, the row is committed.
"""
from __future__ import annotations

from typing import Any, Callable

import anyio

from agent.ledger.store import Ledger


class AsyncLedger:
    def __init__(self, ledger: Ledger):
        self.ledger = ledger
        self._limiter = anyio.CapacityLimiter(1)

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await anyio.to_thread.run_sync(fn, *args, limiter=self._limiter)

    async def insert(self, table: str, row: dict) -> None:
        await self.run(self.ledger.insert, table, row)

    async def update(self, table: str, pk: Any, fields: dict) -> None:
        await self.run(self.ledger.update, table, pk, fields)

    async def batch(self, ops: list[tuple]) -> None:
        await self.run(self.ledger.batch, ops)

    async def insert_shielded(self, table: str, row: dict) -> None:
        """For finally blocks during cancellation: the row must still land."""
        with anyio.CancelScope(shield=True):
            await self.insert(table, row)

    async def update_shielded(self, table: str, pk: Any, fields: dict) -> None:
        with anyio.CancelScope(shield=True):
            await self.update(table, pk, fields)
