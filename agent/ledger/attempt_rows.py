"""The rows of one attempt: the attempt itself, its model calls (in flight, finished, lost; a
preflight probe's calls too), its tool calls and its grade, as typed writes (agent/ledger/ops.py). The attempt runner
(agent/run/attempt.py) decides when each is written; this module knows the columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent.endpoints.endpoint import CallTry
from agent.endpoints.provider import RateLimits
from agent.ledger.ops import Insert, Update
from agent.ledger.store import capped, new_id, to_json, utc_now
from verifiers.grading import GradeResult
from verifiers.mechanics import Finding

# Columns an attempt row starts with at zero (the runner adds to them as it goes).
_ZERO = (
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "calls",
    "transport_retries",
    "malformed_tool_calls",
    "turns",
    "accepted",
    "edited",
)


@dataclass(frozen=True)
class AttemptKey:
    """Where an attempt's rows belong: its id, run and arm (and the arm's row id)."""

    id: str
    run_id: str
    arm_id: str
    arm: str
    task_id: str
    attempt_no: int


def attempt_started(key: AttemptKey, stage: str, candidate: int | None) -> Insert:
    """The attempt's row as it starts: running, nothing spent yet."""
    return Insert(
        "attempts",
        {
            "id": key.id,
            "run_id": key.run_id,
            "arm_id": key.arm_id,
            "arm": key.arm,
            "task_id": key.task_id,
            "attempt_no": key.attempt_no,
            "started_utc": utc_now(),
            "status": "running",
            **dict.fromkeys(_ZERO, 0),
            "stage": stage,
            "candidate": candidate,
        },
    )


def environment_skip(key: AttemptKey, end_reason: str, failure_class: str, problem: str) -> list[Insert]:
    """An attempt not run because the machine lacks the task's runtime, and its error grade:
    classed, no tokens spent."""
    now = utc_now()
    attempt = {
        "id": key.id,
        "run_id": key.run_id,
        "arm_id": key.arm_id,
        "arm": key.arm,
        "task_id": key.task_id,
        "attempt_no": key.attempt_no,
        "started_utc": now,
        "ended_utc": now,
        "end_reason": end_reason,
        "status": "done",
        "verdict": "error",
        "failure_class": failure_class,
        **dict.fromkeys(_ZERO, 0),
        "duration_ms": 0,
    }
    grade = {
        "id": new_id(),
        "attempt_id": key.id,
        "created_utc": now,
        "verdict": "error",
        "duration_ms": 0,
        "output": f"not run: {problem}",
        "environment": problem,
        "isolation_json": "{}",
        "failing_tests_json": "[]",
        "mechanics_json": "[]",
    }
    return [Insert("attempts", attempt), Insert("grades", grade)]


def attempt_update(attempt_id: str, **fields: Any) -> Update:
    """Columns of an attempt's row (totals as they grow, its end, its class)."""
    return Update("attempts", attempt_id, fields)


def attempt_classed(attempt_id: str, failure_class: str, accepted: bool, **fields: Any) -> Update:
    """The attempt's class: it is done."""
    return Update(
        "attempts", attempt_id, {**fields, "failure_class": failure_class, "accepted": int(accepted), "status": "done"}
    )


def call_columns(t: CallTry) -> dict[str, Any]:
    """The calls-row columns one HTTP try fills, for attempts and preflight alike."""
    return {
        "retry_index": t.retry_index,
        "started_utc": t.started_utc,
        "latency_ms": t.latency_ms,
        "status": t.status,
        "http_status": t.http_status,
        "prompt_tokens": t.prompt_tokens,
        "completion_tokens": t.completion_tokens,
        "usage_source": t.usage_source,
        "model_reported": t.model_reported,
        "system_fingerprint": t.system_fingerprint,
        "finish_reason": t.finish_reason,
        "error": t.error,
        "response_text": capped(t.text),
        "tool_calls_json": to_json(
            [
                {"id": capped(c.id, 200), "name": capped(c.name, 200), "arguments": capped(c.arguments)}
                for c in t.tool_calls
            ]
        ),
        "request_sha256": t.request_sha256,
        "response_sha256": t.response_sha256,
        "cached_tokens": t.details.cached_tokens,
        "cache_write_tokens": t.details.cache_write_tokens,
        "reasoning_tokens": t.details.reasoning_tokens,
        "cost_usd": t.details.cost_usd,
        "cost_source": t.details.cost_source,
        **(t.limits or RateLimits()).columns(),
        "paced_ms": t.paced_ms,
        "pace_window": t.pace_window,
    }


def call_in_flight(key: AttemptKey, call_id: str, turn: int, reserved: int, stage: str) -> Insert:
    """A model call's row before its request goes out: a kill leaves a row to charge."""
    return Insert(
        "calls",
        {
            "id": call_id,
            "attempt_id": key.id,
            "run_id": key.run_id,
            "arm": key.arm,
            "turn": turn,
            "retry_index": 0,
            "started_utc": utc_now(),
            "status": "in_flight",
            "reserved_tokens": reserved,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "usage_source": "none",
            "stage": stage,
        },
    )


def call_finished(
    key: AttemptKey,
    call_id: str,
    t: CallTry,
    *,
    turn: int,
    reserved: int,
    server_session_id: str | None,
    stage: str,
    in_flight_row: bool,
) -> Insert | Update:
    """One HTTP try's final row: the in-flight row filled in (the first try), or a new row."""
    row = {
        "attempt_id": key.id,
        "run_id": key.run_id,
        "arm": key.arm,
        "turn": turn,
        "reserved_tokens": reserved,
        "server_session_id": server_session_id,
        "stage": stage,
        **call_columns(t),
    }
    return Update("calls", call_id, row) if in_flight_row else Insert("calls", {"id": call_id, **row})


def preflight_call(
    run_id: str | None, arm: str, preflight_id: str, probe: str, server_session_id: str | None, t: CallTry
) -> Insert:
    """One HTTP try of a preflight probe: a calls row of no attempt (and of no run, for
    `quotabench preflight` alone)."""
    return Insert(
        "calls",
        {
            "id": new_id(),
            "attempt_id": None,
            "run_id": run_id,
            "arm": arm,
            "kind": "preflight",
            "preflight_id": preflight_id,
            "probe": probe,
            "reserved_tokens": 0,
            "server_session_id": server_session_id,
            **call_columns(t),
        },
    )


def call_lost(call_id: str, reserved: int) -> Update:
    """A call cancelled mid-request, charged at its reservation (its row may not be there yet)."""
    return Update(
        "calls", call_id, {"status": "lost", "prompt_tokens": reserved, "usage_source": "reserved"}, must_exist=False
    )


def tool_call(
    attempt_id: str, call_id: str | None, turn: int, tool: str, raw_args: str, ok: bool, output: str, path: str | None
) -> Insert:
    """One tool the model called; call_id as calls.tool_calls_json has it, so they join."""
    return Insert(
        "tool_calls",
        {
            "id": new_id(),
            "attempt_id": attempt_id,
            "call_id": capped(call_id, 200),
            "turn": turn,
            "tool": capped(tool, 200),
            "arguments_json": capped(raw_args),
            "ok": int(ok),
            "error": None if ok else capped(output, 4000),
            "path": path,
            "result": capped(output, 4000),
        },
    )


def grade_row(attempt_id: str, grade: GradeResult, findings: Sequence[Finding], gaps: Sequence[Finding] = ()) -> Insert:
    """The hidden tests' verdict, the mechanics findings and the grammar gaps of one attempt."""
    placement: Mapping[str, Any] = grade.placement
    return Insert(
        "grades",
        {
            "id": new_id(),
            "attempt_id": attempt_id,
            "created_utc": utc_now(),
            "verdict": grade.verdict,
            "exit_status": grade.exit_status,
            "duration_ms": grade.duration_ms,
            "passed": grade.passed,
            "failed": grade.failed,
            "output": capped(grade.output),
            "isolation_json": to_json(grade.isolation),
            "failing_tests_json": to_json(list(grade.failing_tests)),
            "environment": grade.environment,
            "timeout_s": grade.timeout_s,
            "mechanics_json": to_json([f.to_dict() for f in findings]),
            "grammar_gaps_json": to_json([f.to_dict() for f in gaps]) if gaps else None,
            "sandbox": grade.isolation.get("sandbox"),
            "expected_tests": grade.expected_tests,
            "integrity": grade.integrity,
            "restored_json": to_json(list(grade.restored)),
            "executor": placement.get("executor"),
            "node": placement.get("node"),
            "queue_ms": placement.get("queue_ms"),
            "retries": placement.get("retries"),
            "tampering_json": to_json([f.as_dict() for f in grade.tampering]),
            "runner": grade.runner,
            "canaries_json": to_json(grade.canaries) if grade.canaries else None,
            "oracle": grade.oracle,
            "suspects_json": to_json([f.as_dict() for f in grade.suspects]),
        },
    )
