"""What the browser (tuiapp/browse) reads from the ledger, one named read each: the runs list,
a run's grid, a task's attempts on every arm, one attempt's rows. Rows come back as dicts;
the browser shapes them for the screen."""

from __future__ import annotations

from typing import Any

from agent.ledger.report_reads import ATTEMPT_COLUMNS
from agent.ledger.store import Ledger


def run_version(ledger: Ledger, run_id: str) -> tuple[Any, ...]:
    """What changes when a run does (its status, when it finished, how many attempts): a report
    built for one version holds until the next."""
    state = ledger.query(
        "select status, finished_utc, (select count(*) from attempts a where a.run_id = r.id) "
        "as n from runs r where r.id = ?",
        [run_id],
    )
    return tuple(state[0].values()) if state else ()


def runs_with_counts(ledger: Ledger) -> list[dict[str, Any]]:
    """Every run, newest first, with how many tasks and attempts it has."""
    return ledger.query(
        "select r.id, r.created_utc, r.finished_utc, r.status, r.manifest_sha256, r.isolation_sandbox, r.process_json,"
        " (select count(*) from tasks t where t.run_id = r.id) as n_tasks,"
        " (select count(*) from attempts a where a.run_id = r.id) as n_attempts"
        " from runs r order by r.created_utc desc"
    )


def arm_models(ledger: Ledger) -> list[dict[str, Any]]:
    """Every run's arms and their models, by name."""
    return ledger.query("select run_id, name, model from arms order by name")


def metric_attempts(ledger: Ledger, run_id: str) -> list[dict[str, Any]]:
    """The run's attempts with the columns the metrics read (as the report reads them)."""
    return ledger.query(f"select {', '.join(ATTEMPT_COLUMNS)} from attempts where run_id = ?", [run_id])


def grid_attempts(ledger: Ledger, run_id: str) -> list[dict[str, Any]]:
    """The run's attempts as the task x arm grid needs them, by task, arm and attempt."""
    return ledger.query(
        "select arm, task_id, attempt_no, status, verdict, failure_class, accepted, total_tokens, stage, "
        "submitted from attempts where run_id = ? order by task_id, arm, attempt_no, started_utc",
        [run_id],
    )


def preflights(ledger: Ledger, run_id: str) -> list[dict[str, Any]]:
    return ledger.query("select * from preflights where run_id = ?", [run_id])


def task_row(ledger: Ledger, run_id: str, task_id: str) -> dict[str, Any] | None:
    rows = ledger.query("select * from tasks where run_id = ? and task_id = ?", [run_id, task_id])
    return rows[0] if rows else None


def task_attempts(ledger: Ledger, run_id: str, task_id: str) -> list[dict[str, Any]]:
    """One task's attempts on every arm (no diffs or files), by arm and attempt."""
    return ledger.query(
        "select id, arm, task_id, attempt_no, status, end_reason, verdict, failure_class, accepted, prompt_tokens,"
        " completion_tokens, total_tokens, calls, transport_retries, malformed_tool_calls, turns, duration_ms,"
        " stage, candidate, submitted from attempts where run_id = ? and task_id = ? order by arm, attempt_no, started_utc",
        [run_id, task_id],
    )


def task_submissions(ledger: Ledger, run_id: str, task_id: str) -> list[dict[str, Any]]:
    return ledger.query("select * from submissions where run_id = ? and task_id = ?", [run_id, task_id])


def attempt_row(ledger: Ledger, attempt_id: str) -> dict[str, Any] | None:
    rows = ledger.query("select * from attempts where id = ?", [attempt_id])
    return rows[0] if rows else None


def arm_row(ledger: Ledger, run_id: str, name: str) -> dict[str, Any] | None:
    rows = ledger.query("select * from arms where run_id = ? and name = ?", [run_id, name])
    return rows[0] if rows else None


def sibling_attempts(ledger: Ledger, run_id: str, task_id: str, arm: str) -> list[str]:
    """The ids of one arm's attempts on one task, in order."""
    return [
        r["id"]
        for r in ledger.query(
            "select id from attempts where run_id = ? and task_id = ? and arm = ? order by attempt_no, started_utc",
            [run_id, task_id, arm],
        )
    ]
