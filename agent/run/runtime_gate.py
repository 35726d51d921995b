"""Before a task runs: if this machine lacks its runtime (verifiers/runtimes.py), record the task
as `environment` without calling the model, so no tokens are spent on a grade that cannot
happen. What is missing is logged once per run, per tool ("6 typescript tasks need `tsx` on
PATH: npm install -g tsx"), not once per attempt.

The engine calls `skip_missing_runtime(engine, arm, task)` first thing for every task of every
arm; True means "done, skip it".
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

import anyio

from agent import events as ev
from agent.classify import FailureClass
from agent.ledger.store import new_id, utc_now
from agent.states import EndReason
from verifiers.runtimes import missing_runtimes

if TYPE_CHECKING:
    from agent.run.arms import ArmRuntime
    from agent.run.engine import RunEngine
    from verifiers.tasks import Task

# engine -> {task id: what is missing}, filled on the engine's first task (one PATH lookup per tool)
_checked: weakref.WeakKeyDictionary[Any, dict[str, str]] = weakref.WeakKeyDictionary()
_locks: weakref.WeakKeyDictionary[Any, anyio.Lock] = weakref.WeakKeyDictionary()  # both arms start at once: check once


async def _missing(engine: RunEngine) -> dict[str, str]:
    async with _locks.setdefault(engine, anyio.Lock()):
        if engine not in _checked:
            groups, per_task = await anyio.to_thread.run_sync(missing_runtimes, list(engine.tasks))
            for group in groups:
                engine.log(f"{group} — marked environment, no model is called for them", level="warning")
            _checked[engine] = per_task
        return _checked[engine]


async def skip_missing_runtime(engine: RunEngine, arm: ArmRuntime, task: Task) -> bool:
    """True if the task cannot be graded here: then one attempt row (no calls, 0 tokens, class
    environment) and its grade say why, unless a resumed run already recorded the task."""
    problem = (await _missing(engine)).get(task.id)
    if problem is None:
        return False
    progress = engine.resume_state.progress.get((arm.name, task.id)) if engine.resume_state else None
    if progress:
        return True  # recorded before the run was resumed; the machine still lacks it
    attempt_id, now = new_id(), utc_now()
    await engine.ledger.insert(
        "attempts",
        {
            "id": attempt_id,
            "run_id": engine.run_id,
            "arm_id": arm.arm_id,
            "arm": arm.name,
            "task_id": task.id,
            "attempt_no": 1,
            "started_utc": now,
            "ended_utc": now,
            "end_reason": EndReason.RUNTIME_MISSING,
            "status": "done",
            "verdict": "error",
            "failure_class": FailureClass.ENVIRONMENT,
            "accepted": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "total_tokens": 0,
            "calls": 0,
            "transport_retries": 0,
            "malformed_tool_calls": 0,
            "turns": 0,
            "duration_ms": 0,
            "edited": 0,
        },
    )
    await engine.ledger.insert(
        "grades",
        {
            "id": new_id(),
            "attempt_id": attempt_id,
            "created_utc": now,
            "verdict": "error",
            "duration_ms": 0,
            "output": f"not run: {problem}",
            "environment": problem,
            "isolation_json": "{}",
            "failing_tests_json": "[]",
            "mechanics_json": "[]",
        },
    )
    engine.emit(
        ev.TaskGraded(
            engine.run_id,
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
