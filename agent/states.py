"""The states a run, an arm and the engine report, and why an attempt ended: the values the
engine records in the ledger and sends in its events (agent/events.py). Each lists exactly what
the engine writes or emits; StrEnum members are their strings, so rows and JSON read the same."""

from __future__ import annotations

from enum import StrEnum


class RunStatus(StrEnum):
    """runs.status, and RunFinished.status for the four that end a run."""

    RUNNING = "running"  # the row while the run goes (and again while a resume drives it)
    FINISHED = "finished"
    ABORTED = "aborted"  # aborted, stopped now, or cancelled
    CRASHED = "crashed"
    REFUSED = "refused"  # the preflight refused the run before its first attempt


class EngineState(StrEnum):
    """EngineStateChanged.state; the engine's own `state` is one of the first three."""

    RUNNING = "running"
    PAUSED = "paused"
    ABORTING = "aborting"  # nothing new starts; what is in flight finishes and is recorded
    PREFLIGHT = "preflight"  # the endpoints are probed before the first attempt


class ArmState(StrEnum):
    """arms.state and ArmStateChanged.state."""

    RUNNING = "running"
    FINISHED = "finished"
    CENSORED = "censored"  # its cap (or its provider's quota) ran out
    STOPPED = "stopped"  # by the user or the auto-pause policy
    ABORTED = "aborted"  # the run was aborted, or the arm failed
    DECIDED = "decided"  # the paired test decided and both arms were stopped
    REFUSED = "refused"  # the preflight refused the run


class EndReason(StrEnum):
    """attempts.end_reason and AttemptFinished.end_reason: why an attempt (or a stage) ended."""

    FINISHED = "finished"  # the model called finish
    TURN_LIMIT = "turn_limit"
    TOKEN_LIMIT = "token_limit"
    TIME_LIMIT = "time_limit"
    CONTEXT_OVERFLOW = "context_overflow"
    HARNESS_ERROR = "harness_error"  # the endpoint failed after its retries, or the harness did
    CENSORED = "censored"  # the arm's cap or its provider's quota ran out
    ABORTED = "aborted"  # the run was aborted, stopped, or the arm stopped
    LOST = "lost"  # in flight when the run was killed (set by resume)
    RUNTIME_MISSING = "runtime_missing"  # the machine lacks the task's runtime: the model was not called
    ANSWERED = "answered"  # a model stage without tools (critique, judge) got its reply
