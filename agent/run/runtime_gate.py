"""Before a task runs: if this machine lacks its runtime (verifiers/runtimes.py), record the task
as `environment` without calling the model, so no tokens are spent on a grade that cannot
happen. What is missing is logged once per run, per tool ("6 typescript tasks need `tsx` on
PATH: npm install -g tsx"), not once per attempt.

The engine holds one RuntimeGate per run and calls `gate.skip(engine, arm, task)` first thing
for every task of every arm; True means "done, skip it".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from agent import events as ev
from agent.classify import FailureClass
from agent.ledger.attempt_rows import AttemptKey, environment_skip
from agent.ledger.store import new_id
from agent.states import EndReason
from verifiers.runtimes import missing_runtimes

if TYPE_CHECKING:
    from agent.run.arms import ArmRuntime
    from agent.run.host import RunHost
    from verifiers.tasks import Task


class RuntimeGate:
    """One run's view of the machine's runtimes: looked up on the run's first task (one PATH
    lookup per tool, once although both arms start at once), then read for every task."""

    def __init__(self) -> None:
        self._missing: dict[str, str] | None = None  # task id -> what is missing
        self._lock: anyio.Lock | None = None

    async def missing(self, host: RunHost) -> dict[str, str]:
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if self._missing is None:
                groups, missing = await anyio.to_thread.run_sync(missing_runtimes, list(host.tasks))
                for group in groups:
                    host.log(f"{group} — marked environment, no model is called for them", level="warning")
                self._missing = missing
            return self._missing

    async def skip(self, host: RunHost, arm: ArmRuntime, task: Task) -> bool:
        """True if the task cannot be graded here: then one attempt row (no calls, 0 tokens, class
        environment) and its grade say why, unless a resumed run already recorded the task."""
        problem = (await self.missing(host)).get(task.id)
        if problem is None:
            return False
        return await _record_skip(host, arm, task, problem)


async def _record_skip(host: RunHost, arm: ArmRuntime, task: Task, problem: str) -> bool:
    progress = host.resume_state.progress.get((arm.name, task.id)) if host.resume_state else None
    if progress:
        return True  # recorded before the run was resumed; the machine still lacks it
    key = AttemptKey(new_id(), host.run_id, arm.arm_id, arm.name, task.id, 1)
    await host.ledger.batch(environment_skip(key, EndReason.RUNTIME_MISSING, FailureClass.ENVIRONMENT, problem))
    host.emit(
        ev.TaskGraded(
            host.run_id,
            arm=arm.name,
            task_id=task.id,
            attempt=1,
            verdict="error",
            failure_class=FailureClass.ENVIRONMENT,
            accepted=False,
            tokens=0,
        )
    )
    return True
