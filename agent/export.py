"""`quotabench export`: the per-attempt table as CSV or JSONL, for use in other tools.

Streamed: SQLite hands over one row at a time and only the columns written (never the diffs or
files_json), so memory stays flat however many attempts the run has (issue 15: `select a.*`
held 424 MB at 100k attempts).
"""

from __future__ import annotations

import csv
import json
from typing import TextIO

from agent.ledger.store import Ledger

COLUMNS = (
    "run_id",
    "arm",
    "task_id",
    "language",
    "kind",
    "control",
    "attempt_no",
    "verdict",
    "failure_class",
    "accepted",
    "end_reason",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "calls",
    "transport_retries",
    "malformed_tool_calls",
    "turns",
    "duration_ms",
    "started_utc",
    "tampering",
)
_FROM_TASKS = ("language", "kind", "control")
# `tampering`: the rules of the grade's tamper findings, comma-separated (empty: none).
_COLUMN_SQL = {
    "tampering": "(select group_concat(json_extract(j.value, '$.rule'), ',') from grades g, json_each(g.tampering_json) j "
    "where g.attempt_id = a.id) as tampering"
}
SQL = (
    "select "
    + ", ".join(_COLUMN_SQL.get(c) or (("t." if c in _FROM_TASKS else "a.") + c) for c in COLUMNS)
    + " from attempts a join tasks t on t.run_id = a.run_id and t.task_id = a.task_id where a.run_id = ? "
    "order by t.position, a.arm, a.attempt_no"
)


def export_attempts(ledger: Ledger, run_id: str, fmt: str, out: TextIO) -> int:
    """Write every attempt of `run_id` to `out` in the run's task order; returns the count."""
    count = 0
    with ledger.stream(SQL, [run_id]) as rows:
        if fmt == "csv":
            writer = csv.writer(out)
            writer.writerow(COLUMNS)
            for row in rows:
                writer.writerow(row)
                count += 1
        else:
            for row in rows:
                out.write(json.dumps(dict(zip(COLUMNS, row))) + "\n")
                count += 1
    return count
