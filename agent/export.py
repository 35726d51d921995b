"""`quotabench export`: the per-attempt table as CSV or JSONL, for use in other tools.

One row per attempt, and one row (`row_kind = no_attempt`, attempt columns empty) for each task
an arm never attempted — censored, aborted or not run — so every (arm, task) of the run is there.
Each row carries the arm's model and final state, the attempt's strategy stage, candidate and
submitted mark, and the task's outcome on that arm exactly as the report counts it
(`task_outcome`, `task_accepted`: agent/metrics/outcome.py's task_outcome): counting tasks with
`task_accepted = 1` gives the report's accepted tasks, on a strategy run too (where a candidate
that passed but was not submitted is `accepted = 1` and `task_accepted = 0`).

Streamed: SQLite hands over one row at a time, in the run's task order along its index (no sort
held in memory), and only the columns written (never the diffs or files_json); an (arm, task)'s
rows are held only until its outcome is known. Memory stays flat however many attempts the run
has (`select a.*` would hold hundreds of MB at 100k attempts).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import groupby
from typing import Any, TextIO

from agent.ledger.export_reads import AT, SELECTED, export_stream
from agent.ledger.store import Ledger
from agent.metrics.arm import records_of, unfinished_of
from agent.metrics.outcome import TaskOutcome, task_outcome
from agent.states import ArmState

# The columns read from the ledger, then the task's outcome on the arm as the report counts it
COLUMNS = (*SELECTED, "task_outcome", "task_accepted")


@dataclass(frozen=True)
class Exported:
    attempts: int
    unattempted: int  # (arm, task) rows without an attempt

    @property
    def rows(self) -> int:
        return self.attempts + self.unattempted


def _outcome(group: list[tuple[Any, ...]], arm: dict[str, Any], unfinished: set[str]) -> TaskOutcome:
    """The task's outcome on the arm from its rows (none attempted: no attempt rows)."""
    attempts = [dict(zip(SELECTED, row)) for row in group if row[AT["row_kind"]] == "attempt"]
    task_id = group[0][AT["task_id"]]
    return task_outcome(
        task_id,
        records_of(attempts),
        max_attempts=arm.get("max_attempts"),
        arm_state=arm.get("state") or ArmState.RUNNING,
        listed_unfinished=task_id in unfinished,
        cap_hit=bool(arm.get("censored")),
    )


def export_rows(ledger: Ledger, run_id: str) -> Iterator[tuple[bool, list[Any]]]:
    """(attempted, the row's values in COLUMNS order) for every row of `run_id`'s export."""
    arms = {a["name"]: a for a in ledger.arms(run_id)}
    unfinished = {name: unfinished_of(a) for name, a in arms.items()}
    with export_stream(ledger, run_id) as rows:
        for (_, name), grouped in groupby(rows, key=lambda r: (r[AT["task_id"]], r[AT["arm"]])):
            group = list(grouped)  # one task's attempts on one arm: a handful of rows
            outcome = _outcome(group, arms[name], unfinished[name])
            for row in group:
                yield row[AT["row_kind"]] == "attempt", [*row, outcome.failure_class, int(outcome.accepted)]


def export_attempts(ledger: Ledger, run_id: str, fmt: str, out: TextIO) -> Exported:
    """Write every attempt of `run_id` (and every task an arm never attempted) to `out` in the
    run's task order; returns what was written."""
    attempts = unattempted = 0
    writer = csv.writer(out) if fmt == "csv" else None
    if writer is not None:
        writer.writerow(COLUMNS)
    for attempted, values in export_rows(ledger, run_id):
        attempts += attempted
        unattempted += not attempted
        if writer is not None:
            writer.writerow(values)
        else:
            out.write(json.dumps(dict(zip(COLUMNS, values))) + "\n")
    return Exported(attempts, unattempted)
