"""Replicates: one manifest run N times (`quotabench run CONFIG --replicates N`).

Every replicate is a whole paired run (both arms, same task order, same window) with its own
run row carrying its number and the set it belongs to (agent/run/replicate.py). Each replicate
opens its arms afresh, so every server quotabench starts (llama.cpp, scripted) is restarted
between replicates: the report can then tell determinism within one server session from
variation across restarts, and the spread across replicates is the model's own error bar. A
replicate that does not finish (aborted, refused by preflight, crashed) ends the schedule.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from agent.config import RunConfig
from agent.events import RunControls
from agent.ledger.store import Ledger
from agent.run.engine import RunEngine
from agent.run.replicate import replicate_plan
from agent.states import RunStatus

MAX_REPLICATES = 100


async def drain(engine: RunControls) -> str:
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
    run_ids: list[str] = []
    for replicate in replicate_plan(n):
        engine = RunEngine(config, ledger, replicate=replicate, **engine_kwargs)
        run_ids.append(await drive(engine))
        if (ledger.run(run_ids[-1]) or {}).get("status") != RunStatus.FINISHED:
            break
    return run_ids
