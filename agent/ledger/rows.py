"""The rows of a run and its arms (and a strategy's submissions), as typed writes
(agent/ledger/ops.py): the engine decides when; this module knows the columns.
An attempt's own rows are in agent/ledger/attempt_rows.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agent.ledger.ops import Insert, Update
from agent.ledger.store import new_id, utc_now
from agent.states import ArmState, RunStatus

# An arm censored by its provider's quota: resuming is the user saying the account was topped up.
_UNCENSOR = {"censored": 0, "censored_utc": None, "state": ArmState.RUNNING, "state_reason": None, "censored_by": None}


def run_opened(run_id: str, **columns: Any) -> Insert:
    """A new run's row: running from now; `columns` say what it runs and on which machine."""
    return Insert("runs", {"id": run_id, "created_utc": utc_now(), "status": RunStatus.RUNNING, **columns})


def run_update(run_id: str, **fields: Any) -> Update:
    """Columns of the run's row (runtime versions as they come, the process driving it)."""
    return Update("runs", run_id, fields)


def run_resumed(run_id: str, **fields: Any) -> Update:
    """A run taken up again by `resume`: running, not finished."""
    return Update("runs", run_id, {"status": RunStatus.RUNNING, "finished_utc": None, **fields})


def run_ended(run_id: str, status: str, load_end: Any) -> Update:
    """How the run ended and when."""
    return Update("runs", run_id, {"status": status, "finished_utc": utc_now(), "load_end": load_end})


def arm_opened(arm_id: str, run_id: str, name: str, **columns: Any) -> Insert:
    """A new arm's row: running, nothing spent."""
    return Insert(
        "arms",
        {
            "id": arm_id,
            "run_id": run_id,
            "name": name,
            **columns,
            "state": ArmState.RUNNING,
            "censored": 0,
            "busy_ms": 0,
            "tokens_used": 0,
        },
    )


def arm_update(arm_id: str, **fields: Any) -> Update:
    """Columns of an arm's row (its server, the model the server reports, its cap)."""
    return Update("arms", arm_id, fields)


def arm_reopened(arm_id: str, topped_up: bool, **fields: Any) -> Update:
    """A resumed arm's row refreshed with the server just started; `topped_up`: an arm censored by
    its provider's quota runs again."""
    return Update("arms", arm_id, {**fields, **(_UNCENSOR if topped_up else {})})


def arm_uncensored(arm_id: str) -> Update:
    """An arm censored by its provider's quota runs again (the account was topped up)."""
    return Update("arms", arm_id, dict(_UNCENSOR))


def arm_censored(arm_id: str, reason: str, by: str) -> Update:
    """The arm's quota ran out (its cap, or its provider's quota)."""
    return Update(
        "arms",
        arm_id,
        {
            "censored": 1,
            "censored_utc": utc_now(),
            "state": ArmState.CENSORED,
            "state_reason": reason,
            "censored_by": by,
        },
    )


def arm_finished(
    arm_id: str, state: str, unfinished: Sequence[str], tokens_used: int, busy_ms: int, paced_ms: int
) -> Update:
    """The arm's final row: its state, the tasks it did not finish, what it spent."""
    return Update(
        "arms",
        arm_id,
        {
            "state": state,
            "unfinished_json": json.dumps(list(unfinished)),
            "tokens_used": tokens_used,
            "busy_ms": busy_ms,
            "paced_ms": paced_ms,
        },
    )


def submitted(attempt_id: str, chosen: bool) -> Update:
    """Whether a strategy submitted this candidate attempt."""
    return Update("attempts", attempt_id, {"submitted": int(chosen)})


def submission(run_id: str, arm: str, task_id: str, **columns: Any) -> Insert:
    """What a strategy submitted for one task of one arm, and why."""
    return Insert(
        "submissions",
        {"id": new_id(), "run_id": run_id, "arm": arm, "task_id": task_id, "created_utc": utc_now(), **columns},
    )


def preflight_started(
    preflight_id: str, run_id: str | None, arm: str, endpoint_url: str, model: str, forced: bool
) -> Insert:
    """An arm's preflight as it starts: running, nothing spent."""
    return Insert(
        "preflights",
        {
            "id": preflight_id,
            "run_id": run_id,
            "arm": arm,
            "created_utc": utc_now(),
            "endpoint_url": endpoint_url,
            "model": model,
            "verdict": "running",
            "forced": int(forced),
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "calls": 0,
        },
    )


def preflight_ended(preflight_id: str, verdict: str, checks_json: str, **spent: int) -> Update:
    """The preflight's verdict, its checks and what its probes spent (tokens, calls, duration_ms)."""
    return Update("preflights", preflight_id, {"verdict": verdict, "checks_json": checks_json, **spent})
