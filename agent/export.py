"""`quotabench export`: the per-attempt table as CSV or JSONL, for use in other tools."""
from __future__ import annotations

import csv
import json
from typing import TextIO

from agent.ledger.store import Ledger

COLUMNS = ("run_id", "arm", "task_id", "language", "kind", "attempt_no", "verdict", "failure_class", "accepted",
           "end_reason", "prompt_tokens", "completion_tokens", "total_tokens", "calls", "transport_retries",
           "malformed_tool_calls", "turns", "duration_ms", "started_utc")


def export_attempts(ledger: Ledger, run_id: str, fmt: str, out: TextIO) -> int:
    rows = [{c: row.get(c) for c in COLUMNS} for row in ledger.attempts(run_id)]
    if fmt == "csv":
        writer = csv.DictWriter(out, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    else:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    return len(rows)
