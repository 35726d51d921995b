"""What `resume` reads and repairs in the ledger: the rows a killed process left half-written,
the attempts whose grade never landed, and what each arm and task had done before the kill."""

from __future__ import annotations

from typing import Any

from agent.ledger.store import Ledger


def recover(ledger: Ledger, run_id: str) -> None:
    """Mark what the killed process left half-written (idempotent): a call still in flight is
    lost, charged at its reservation; an attempt still running is lost; every attempt's totals
    are its calls' sums."""
    with ledger.transaction():
        ledger.db.execute(
            "update calls set status = 'lost', prompt_tokens = reserved_tokens, completion_tokens = 0, "
            "usage_source = 'reserved' where run_id = ? and status = 'in_flight'",
            [run_id],
        )
        ledger.db.execute(
            "update attempts set end_reason = 'lost', failure_class = 'aborted', status = 'done' "
            "where run_id = ? and status = 'running'",
            [run_id],
        )
        ledger.db.execute(
            "update attempts set prompt_tokens = (select coalesce(sum(prompt_tokens), 0) from calls c where c.attempt_id = attempts.id), "
            "completion_tokens = (select coalesce(sum(completion_tokens), 0) from calls c where c.attempt_id = attempts.id), "
            "calls = (select count(*) from calls c where c.attempt_id = attempts.id) where run_id = ?",
            [run_id],
        )
        ledger.db.execute(
            "update attempts set total_tokens = prompt_tokens + completion_tokens where run_id = ?", [run_id]
        )
        # graded, but killed before the attempt's update landed (ledgers from before the two were one transaction)
        ledger.db.execute(
            "update attempts set verdict = (select g.verdict from grades g where g.attempt_id = attempts.id), "
            "accepted = 0, status = 'graded' where run_id = ? and status = 'ended' "
            "and exists (select 1 from grades g where g.attempt_id = attempts.id)",
            [run_id],
        )


def ungraded_attempts(ledger: Ledger, run_id: str) -> list[dict[str, Any]]:
    """Attempts whose loop ended but whose class was never written (`ended`, or `graded` by recover)."""
    return ledger.query("select * from attempts where run_id = ? and status in ('ended', 'graded')", [run_id])


def arm_tokens_used(ledger: Ledger, run_id: str) -> dict[str, int]:
    """Each arm's tokens as its attempts' sum (lost attempts' included: they were spent), by arm id."""
    rows = ledger.query(
        "select arm_id, coalesce(sum(total_tokens), 0) as n from attempts where run_id = ? group by arm_id", [run_id]
    )
    return {r["arm_id"]: r["n"] for r in rows}


def attempt_outcomes(ledger: Ledger, run_id: str) -> list[dict[str, Any]]:
    """Every attempt's arm, task, number and outcome: where each task of each arm stands."""
    return ledger.query(
        "select arm, task_id, attempt_no, accepted, end_reason, failure_class from attempts where run_id = ?", [run_id]
    )
