"""Typed, frozen events the engine publishes. Consumers: the headless line printer, the TUI.

Every event carries `run_id`; arm-level events carry `arm` (the arm's name, e.g. "A").
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from agent.states import ArmState, EndReason, EngineState, RunStatus
from agent.strategy_spec import Stage

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream


def _now() -> float:
    return time.time()


@dataclass(frozen=True)
class Event:
    run_id: str
    at: float = field(default_factory=_now, kw_only=True)


@dataclass(frozen=True)
class RunStarted(Event):
    manifest_sha256: str
    arms: tuple[str, ...]
    task_ids: tuple[str, ...]
    caps: dict[str, int]
    isolation: dict[str, Any]
    controls: tuple[str, ...] = ()  # impossible controls: shown, but kept out of every figure


@dataclass(frozen=True)
class RunFinished(Event):
    status: RunStatus  # any but RUNNING


@dataclass(frozen=True)
class EngineStateChanged(Event):
    state: EngineState
    waiting_for: tuple[str, ...] = ()  # aborting: the calls, visible tests and grades it waits for


@dataclass(frozen=True)
class ArmStateChanged(Event):
    arm: str
    state: ArmState
    reason: str = ""
    unfinished: tuple[str, ...] = ()


@dataclass(frozen=True)
class AttemptStarted(Event):
    arm: str
    task_id: str
    attempt: int
    attempt_id: str
    stage: Stage = Stage.ATTEMPT  # a strategy's stage: candidate, initial, critique, revision, judge


@dataclass(frozen=True)
class CallFinished(Event):
    arm: str
    task_id: str
    attempt: int
    status: str
    retry_index: int
    prompt_tokens: int
    completion_tokens: int
    usage_source: str
    latency_ms: int
    cached_tokens: int = 0  # of prompt_tokens, served from the provider's prompt cache (as reported)
    reasoning_tokens: int = 0  # of completion_tokens, spent reasoning (as reported)
    paced_ms: int = 0  # waited for the provider's rate limit before the try (not in latency_ms)


@dataclass(frozen=True)
class ModelText(Event):
    arm: str
    task_id: str
    text: str  # a streamed delta


@dataclass(frozen=True)
class ToolCalled(Event):
    arm: str
    task_id: str
    attempt: int
    tool: str
    ok: bool
    summary: str


@dataclass(frozen=True)
class AttemptFinished(Event):
    arm: str
    task_id: str
    attempt: int
    end_reason: EndReason
    tokens: int


@dataclass(frozen=True)
class TaskGraded(Event):
    arm: str
    task_id: str
    attempt: int
    verdict: str
    failure_class: str
    accepted: bool
    tokens: int
    grammar_gaps: int = 0  # parse errors the toolchain accepted (verifiers/grammar_gaps.py): notes, not mechanics


@dataclass(frozen=True)
class Submitted(Event):
    """A strategy arm submitted its answer to a task: the task's outcome on the arm.
    `attempt` is the submitted stage's attempt number (None: nothing was submitted)."""

    arm: str
    task_id: str
    attempt: int | None
    accepted: bool
    candidates: int
    covered: int  # candidates that pass the hidden tests
    route: str


@dataclass(frozen=True)
class QuotaChanged(Event):
    arm: str
    used: int
    reserved: int
    cap: int


@dataclass(frozen=True)
class AutoPaused(Event):
    """The choice point before an arm's cap: its next call (`next_call` tokens reserved; 0 when
    usage alone crossed the share) would reach the auto-pause share or not fit. `policy` is None
    when the engine paused for the user to choose, else what run.auto_pause_policy did (headless)."""

    arm: str
    used: int
    reserved: int
    cap: int
    share: float
    next_call: int = 0
    policy: str | None = None


@dataclass(frozen=True)
class ProviderLimits(Event):
    """What the arm's provider announced in a response's rate-limit headers (None: not said);
    resets in seconds from `at`. `paced_ms`: the arm's calls' waiting for these limits so far."""

    arm: str
    limit_tokens: int | None
    remaining_tokens: int | None
    reset_tokens_s: float | None
    limit_requests: int | None
    remaining_requests: int | None
    reset_requests_s: float | None
    paced_ms: int = 0


@dataclass(frozen=True)
class ProviderQuotaSpent(Event):
    """The arm's provider said its quota is spent (HTTP 402, insufficient_quota): the arm is
    censored by the provider. `policy` None: the run paused until the user tops up and resumes;
    else what run.auto_pause_policy did (headless)."""

    arm: str
    reason: str  # "provider quota: You exceeded your current quota"
    policy: str | None = None


@dataclass(frozen=True)
class LogMessage(Event):
    level: str
    text: str
    arm: str | None = None
    # "preflight_forced": the run goes on past an invalidating preflight (a banner); "task_warning":
    # a task folder left out of the run, or a task an arm's cap cannot pay for (a notification)
    kind: str = ""


@dataclass(frozen=True)
class DecisionUpdated(Event):
    """The always-valid paired test moved (after each newly decided pair), or both arms are being
    stopped on its decision."""

    decided: bool
    winner: str | None
    e_value: float
    threshold: float
    after_tasks: int | None
    n_pairs: int
    gap_lo: float
    gap_hi: float
    futile: bool
    line: str  # "undecided: e = 3.1 of 20 needed (α = 0.05)" / "decided after 27 tasks: B better ..."
    saved: dict[str, int]  # tokens stopping now saves per arm (when decided)
    stopping: bool = False  # the engine stops both arms now (run.stop_when_decided, or the user asked)
    stopped: bool = False  # both arms are stopped (or stopping) on the decision: nothing is left to stop


@runtime_checkable
class RunControls(Protocol):
    """The engine as its drivers see it (the live view, the headless printer): its events and the
    commands they send. RunEngine is one; tuiapp.live.replay.ReplayEngine is the tests' stand-in."""

    run_id: str
    events: MemoryObjectReceiveStream[Event]

    @property
    def state(self) -> str: ...  # an EngineState (running, paused or aborting)

    async def run(self) -> str: ...
    def pause(self, reason: str = "paused") -> None: ...
    def resume(self) -> None: ...
    def abort(self) -> None: ...
    def stop_now(self) -> None: ...
    def stop_arm(self, name: str) -> None: ...
    def raise_cap(self, name: str, new_cap: int) -> None: ...
    def stop_decided(self) -> None: ...  # stop both arms on the paired test's decision, if it has decided
