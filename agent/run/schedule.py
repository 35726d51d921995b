"""Replicates: one manifest run N times (`quotabench run CONFIG --replicates N`), seed 003.

Every replicate is a whole paired run (both arms, same task order, same window) with its own
run row carrying its number and the set it belongs to. Each replicate opens its arms afresh,
so every server quotabench starts (llama.cpp, scripted) is restarted between replicates: the
report can then tell within-session determinism from variation across restarts (result 5),
and the spread across replicates is the model's own error bar (result 4). A replicate that
does not finish (aborted, refused by preflight, crashed) ends the schedule.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from agent.config import RunConfig
from agent.ledger.store import Ledger, new_id
from agent.states import RunStatus

if TYPE_CHECKING:
    from agent.run.engine import RunEngine

MAX_REPLICATES = 100


@dataclass(frozen=True)
class Replicate:
    """Run `number` of `of` runs of one manifest (`quotabench run --replicates N`), in set `set_id`."""

    set_id: str
    number: int
    of: int

    def columns(self) -> dict[str, Any]:
        """Its runs columns."""
        return {"replicate": self.number, "replicates": self.of, "replicate_set": self.set_id}


def replicate_plan(n: int) -> list[Replicate]:
    """Replicates 1..n of one new set."""
    set_id = new_id()
    return [Replicate(set_id, k, n) for k in range(1, n + 1)]


async def drain(engine: RunEngine) -> str:
    """Run the engine, reading (and dropping) its events: for callers without a display."""
    async with anyio.create_task_group() as tg:

        async def read() -> None:
            async for _ in engine.events:
                pass

        tg.start_soon(read)
        run_id = await engine.run()
    return run_id


async def run_replicates(
    config: RunConfig,
    ledger: Ledger,
    n: int,
    drive: Callable[[RunEngine], Awaitable[str]] = drain,
    **engine_kwargs: Any,
) -> list[str]:
    """Run replicates 1..n in turn; the run ids so far (the last one did not finish if it is
    not `finished` in the ledger)."""
    from agent.run.engine import RunEngine

    run_ids: list[str] = []
    for replicate in replicate_plan(n):
        engine = RunEngine(config, ledger, replicate=replicate, **engine_kwargs)
        run_ids.append(await drive(engine))
        if (ledger.run(run_ids[-1]) or {}).get("status") != RunStatus.FINISHED:
            break
    return run_ids
