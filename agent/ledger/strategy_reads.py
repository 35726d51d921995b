"""What a strategy task (agent/run/strategies.py) reads back from the ledger: the stages a killed
run recorded for one task of one arm, whether it submitted, and a stage's row once it ended."""

from __future__ import annotations

from typing import Any

from agent.ledger.store import Ledger


def task_stages(ledger: Ledger, run_id: str, arm: str, task_id: str) -> list[dict[str, Any]]:
    """The task's attempt rows on the arm, in order, each with its last answered call's text
    ("answer": what a critique or judge stage said)."""
    return ledger.query(
        "select a.*, (select c.response_text from calls c where c.attempt_id = a.id and c.status = 'ok' "
        "order by c.started_utc desc limit 1) as answer from attempts a "
        "where a.run_id = ? and a.arm = ? and a.task_id = ? order by a.attempt_no",
        [run_id, arm, task_id],
    )


def submitted_already(ledger: Ledger, run_id: str, arm: str, task_id: str) -> bool:
    """Whether the task has its submission on the arm."""
    return bool(
        ledger.query("select 1 from submissions where run_id = ? and arm = ? and task_id = ?", [run_id, arm, task_id])
    )


def attempt(ledger: Ledger, attempt_id: str) -> dict[str, Any]:
    """One attempt's row (it must be there)."""
    return ledger.query("select * from attempts where id = ?", [attempt_id])[0]
