"""The seam between the engine and its helpers: what an attempt, a strategy task, the runtime
gate, the decision watch and an arm's ledger row may use of the engine that runs them.
RunEngine is one RunHost; a test's fake can be another. Helpers are typed against it, so none
of them imports the engine."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from agent import events as ev
    from agent.config import RunConfig
    from agent.endpoints.chat import Completion
    from agent.endpoints.provider import RateLimits
    from agent.ledger.store import Ledger
    from agent.ledger.writer import AsyncLedger
    from agent.run.arms import ArmRuntime
    from agent.run.inflight import InFlight
    from agent.run.resume_plan import ResumePlan
    from verifiers.grading import Grader
    from verifiers.tasks import Task


class RunHost(Protocol):
    run_id: str
    config: RunConfig
    ledger: AsyncLedger  # writes go through the writer thread
    ledger_sync: Ledger  # reads (in a thread: `await ledger.run(ledger_sync.query, ...)`)
    grader: Grader
    work: InFlight  # calls, visible tests and grades in progress
    tasks: list[Task]
    arms: dict[str, ArmRuntime]
    resume_state: ResumePlan | None  # what a resumed run had done before

    # -- what it publishes
    def emit(self, event: ev.Event) -> None: ...
    def log(self, text: str, level: str = "info", arm: str | None = None, kind: str = "") -> None: ...
    def mask(self, text: str) -> str: ...

    # -- an arm's quota and its endpoint
    def quota_changed(self, arm: ArmRuntime) -> None: ...
    async def before_reserve(self, arm: ArmRuntime, tokens: int) -> float: ...
    async def censor(self, arm: ArmRuntime, reason: str) -> None: ...
    async def provider_quota(self, arm: ArmRuntime, reason: str) -> None: ...
    def provider_limits(self, arm: ArmRuntime, limits: RateLimits) -> None: ...
    async def observe_server(self, arm: ArmRuntime, completion: Completion) -> None: ...

    # -- pause, stop and abort, as an attempt sees them
    async def checkpoint(self, arm: ArmRuntime) -> float: ...
    async def wait_to_start(self, arm: ArmRuntime) -> bool: ...
    def stop_decided(self) -> None: ...
