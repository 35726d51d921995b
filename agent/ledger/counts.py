"""The ledger as the grader's `CountStore`: each task version's reference run (every test id
with its place and outcome), kept across runs so a task's reference runs once per ledger, not
once per attempt."""

from __future__ import annotations

import json

from agent.ledger.store import Ledger, utc_now
from verifiers.verdict import Expected


class LedgerCounts:
    def __init__(self, ledger: Ledger):
        self.ledger = ledger

    def get(self, key: str) -> tuple[bool, Expected | None]:
        rows = self.ledger.query("select passed, tests_json from reference_counts where task_key = ?", [key])
        if not rows:
            return False, None
        if rows[0]["passed"] is None or not rows[0]["tests_json"]:
            return True, None
        return True, Expected.from_json(json.loads(rows[0]["tests_json"]))

    def put(self, key: str, task_id: str, expected: Expected | None) -> None:
        tests = json.dumps(expected.as_json()) if expected is not None else None
        with self.ledger.lock, self.ledger.db.conn:
            self.ledger.db.conn.execute(
                "insert or replace into reference_counts (task_key, task_id, passed, tests_json, created_utc) "
                "values (?, ?, ?, ?, ?)",
                [key, task_id, expected.passed if expected is not None else None, tests, utc_now()],
            )
