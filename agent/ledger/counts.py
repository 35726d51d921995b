"""The ledger as the grader's `CountStore`: each task version's reference test count, kept
across runs so a task's reference is run once per ledger, not once per attempt."""

from __future__ import annotations

from agent.ledger.store import Ledger, utc_now


class LedgerCounts:
    def __init__(self, ledger: Ledger):
        self.ledger = ledger

    def get(self, key: str) -> tuple[bool, int | None]:
        rows = self.ledger.query("select passed from reference_counts where task_key = ?", [key])
        return (True, rows[0]["passed"]) if rows else (False, None)

    def put(self, key: str, task_id: str, count: int | None) -> None:
        with self.ledger.lock, self.ledger.db.conn:
            self.ledger.db.conn.execute(
                "insert or replace into reference_counts (task_key, task_id, passed, created_utc) values (?, ?, ?, ?)",
                [key, task_id, count, utc_now()],
            )
