"""`quotabench export`: the per-attempt table as CSV or JSONL, for use in other tools.

One row per attempt, and one row (`row_kind = no_attempt`, attempt columns empty) for each task
an arm never attempted — censored, aborted or not run — so every (arm, task) of the run is there.
Each row carries the arm's model and final state, the attempt's strategy stage, candidate and
submitted mark, and the task's outcome on that arm exactly as the report counts it
(`task_outcome`, `task_accepted`: agent/metrics/outcome.py): counting tasks with
`task_accepted = 1` gives the report's accepted tasks, on a strategy run too (where a candidate
that passed but was not submitted is `accepted = 1` and `task_accepted = 0`).

Streamed: SQLite hands over one row at a time and only the columns written (never the diffs or
files_json), so memory stays flat however many attempts the run has (issue 15: `select a.*`
held 424 MB at 100k attempts); the outcomes are computed first from a few columns per attempt.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from typing import TextIO

from agent.ledger.store import Ledger
from agent.metrics.arm import records_of, unfinished_of
from agent.metrics.outcome import TaskOutcome, outcomes_of

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
    "stage",
    "candidate",
    "submitted",
    "model",
    "arm_state",
    "row_kind",
    "task_outcome",
    "task_accepted",
)
_FROM_TASKS = ("task_id", "language", "kind", "control")
_FROM_ARMS = {"run_id": "r.run_id", "arm": "r.name", "model": "r.model", "arm_state": "r.state"}
_COMPUTED = ("row_kind", "task_outcome", "task_accepted")
# `tampering`: the rules of the grade's tamper findings, comma-separated (empty: none).
_COLUMN_SQL = {
    "tampering": "(select group_concat(json_extract(j.value, '$.rule'), ',') from grades g, json_each(g.tampering_json) j "
    "where g.attempt_id = a.id) as tampering",
    "row_kind": "a.id is not null as row_kind",
}
_SELECTED = [c for c in COLUMNS if c not in _COMPUTED[1:]]
SQL = (
    "select "
    + ", ".join(
        _COLUMN_SQL.get(c) or _FROM_ARMS.get(c) or (("t." if c in _FROM_TASKS else "a.") + c) for c in _SELECTED
    )
    + " from tasks t join arms r on r.run_id = t.run_id left join attempts a on a.run_id = t.run_id "
    "and a.task_id = t.task_id and a.arm = r.name where t.run_id = ? order by t.position, r.name, a.attempt_no"
)
_RECORD_SQL = (
    "select task_id, attempt_no, failure_class, accepted, total_tokens, stage, submitted from attempts "
    "where run_id = ? and arm = ?"
)


@dataclass(frozen=True)
class Exported:
    attempts: int
    unattempted: int  # (arm, task) rows without an attempt

    @property
    def rows(self) -> int:
        return self.attempts + self.unattempted


def task_outcomes(ledger: Ledger, run_id: str) -> dict[tuple[str, str], TaskOutcome]:
    """(arm, task id) -> the task's outcome on that arm, as the report computes it."""
    task_ids = [
        r["task_id"] for r in ledger.query("select task_id from tasks where run_id = ? order by position", [run_id])
    ]
    out: dict[tuple[str, str], TaskOutcome] = {}
    for arm in ledger.arms(run_id):
        records = records_of(ledger.rows(_RECORD_SQL, [run_id, arm["name"]]))
        for outcome in outcomes_of(
            task_ids,
            records,
            max_attempts=arm.get("max_attempts"),
            arm_state=arm.get("state") or "running",
            unfinished=unfinished_of(arm),
            cap_hit=bool(arm.get("censored")),
        ):
            out[(arm["name"], outcome.task_id)] = outcome
    return out


def export_attempts(ledger: Ledger, run_id: str, fmt: str, out: TextIO) -> Exported:
    """Write every attempt of `run_id` (and every task an arm never attempted) to `out` in the
    run's task order; returns what was written."""
    outcomes = task_outcomes(ledger, run_id)
    attempts = unattempted = 0
    kind = _SELECTED.index("row_kind")
    arm_at, task_at = _SELECTED.index("arm"), _SELECTED.index("task_id")
    writer = csv.writer(out) if fmt == "csv" else None
    if writer is not None:
        writer.writerow(COLUMNS)
    with ledger.stream(SQL, [run_id]) as rows:
        for row in rows:
            outcome = outcomes.get((row[arm_at], row[task_at]))
            attempted = bool(row[kind])
            values = [
                *row[:kind],
                "attempt" if attempted else "no_attempt",
                outcome.failure_class if outcome else None,
                int(outcome.accepted) if outcome else None,
            ]
            attempts += attempted
            unattempted += not attempted
            if writer is not None:
                writer.writerow(values)
            else:
                out.write(json.dumps(dict(zip(COLUMNS, values))) + "\n")
    return Exported(attempts, unattempted)
