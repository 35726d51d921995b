"""The first ledger schema: its seven tables (m001-m007), the migrations every later one in
schema.py builds on. One `Migrations` object holds them all, applied in the order registered.
"""

from __future__ import annotations

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

migrations = Migrations("quotabench")


@migrations()
def m001_create_runs(db: Database) -> None:
    # One row per run, with every held constant as observed (seed 003 part 4).
    db.table("runs").create(
        {
            "id": str,
            "created_utc": str,
            "finished_utc": str,
            "status": str,
            "manifest_sha256": str,
            "config_path": str,
            "config_json": str,
            "suites_json": str,
            "harness_version": str,
            "prompt_template_version": str,
            "python_version": str,
            "node_version": str,
            "cargo_version": str,
            "tsx_version": str,
            "isolation_network": str,
            "isolation_pids": str,
            "load_start": float,
            "load_end": float,
            "host": str,
            "session_id": str,
        },
        pk="id",
    )


@migrations()
def m002_create_arms(db: Database) -> None:
    # One row per arm of a run: the endpoint as configured and as it reported itself.
    db.table("arms").create(
        {
            "id": str,
            "run_id": str,
            "name": str,
            "kind": str,
            "protocol": str,
            "endpoint_url": str,
            "model": str,
            "model_reported": str,
            "models_listed_json": str,
            "system_fingerprint": str,
            "sampling_json": str,
            "price_json": str,
            "constants_json": str,
            "cap_tokens": int,
            "max_attempts": int,
            "state": str,
            "state_reason": str,
            "tokens_used": int,
            "censored": int,
            "censored_utc": str,
            "unfinished_json": str,
            "busy_ms": int,
        },
        pk="id",
        foreign_keys=[("run_id", "runs", "id")],
    )
    db.table("arms").create_index(["run_id", "name"], unique=True)


@migrations()
def m003_create_tasks(db: Database) -> None:
    # The frozen task list of a run, in the order both arms run it.
    db.table("tasks").create(
        {
            "run_id": str,
            "task_id": str,
            "position": int,
            "suite": str,
            "path": str,
            "language": str,
            "kind": str,
            "files_sha256": str,
            "prompt": str,
        },
        pk=("run_id", "task_id"),
        foreign_keys=[("run_id", "runs", "id")],
    )


@migrations()
def m004_create_attempts(db: Database) -> None:
    # Inserted when the attempt starts, updated as it goes, always before grading (seed 000).
    db.table("attempts").create(
        {
            "id": str,
            "run_id": str,
            "arm_id": str,
            "arm": str,
            "task_id": str,
            "attempt_no": int,
            "started_utc": str,
            "ended_utc": str,
            "end_reason": str,
            "status": str,
            "verdict": str,
            "failure_class": str,
            "accepted": int,
            "prompt_tokens": int,
            "completion_tokens": int,
            "total_tokens": int,
            "calls": int,
            "transport_retries": int,
            "malformed_tool_calls": int,
            "turns": int,
            "duration_ms": int,
            "visible_passed": int,
            "edited": int,
            "diff": str,
            "files_json": str,
        },
        pk="id",
        foreign_keys=[("run_id", "runs", "id"), ("arm_id", "arms", "id")],
    )
    db.table("attempts").create_index(["run_id", "arm", "task_id", "attempt_no"], unique=True)


@migrations()
def m005_create_calls(db: Database) -> None:
    # One row per HTTP try, retries included: the cost hides in retries (seed 002).
    db.table("calls").create(
        {
            "id": str,
            "attempt_id": str,
            "run_id": str,
            "arm": str,
            "turn": int,
            "retry_index": int,
            "started_utc": str,
            "latency_ms": int,
            "status": str,
            "http_status": int,
            "prompt_tokens": int,
            "completion_tokens": int,
            "usage_source": str,
            "reserved_tokens": int,
            "model_reported": str,
            "system_fingerprint": str,
            "finish_reason": str,
            "error": str,
            "response_text": str,
            "tool_calls_json": str,
        },
        pk="id",
        foreign_keys=[("attempt_id", "attempts", "id")],
    )
    db.table("calls").create_index(["attempt_id"])


@migrations()
def m006_create_tool_calls(db: Database) -> None:
    # Every tool call the model made, malformed ones included (they feed edit-mechanics).
    db.table("tool_calls").create(
        {
            "id": str,
            "attempt_id": str,
            "call_id": str,
            "turn": int,
            "tool": str,
            "arguments_json": str,
            "ok": int,
            "error": str,
            "path": str,
            "result": str,
        },
        pk="id",
        foreign_keys=[("attempt_id", "attempts", "id")],
    )
    db.table("tool_calls").create_index(["attempt_id"])


@migrations()
def m007_create_grades(db: Database) -> None:
    # The hidden-test verdict and its evidence, one per graded attempt.
    db.table("grades").create(
        {
            "id": str,
            "attempt_id": str,
            "created_utc": str,
            "verdict": str,
            "exit_status": int,
            "duration_ms": int,
            "passed": int,
            "failed": int,
            "output": str,
            "isolation_json": str,
            "failing_tests_json": str,
            "environment": str,
            "timeout_s": float,
            "mechanics_json": str,
        },
        pk="id",
        foreign_keys=[("attempt_id", "attempts", "id")],
    )
    db.table("grades").create_index(["attempt_id"], unique=True)
