"""What `quotabench export` (agent/export.py) reads from the ledger: one streamed read of a run's
attempts joined to its tasks and arms, every (arm, task) included, only the columns written."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from agent.ledger.store import Ledger

SELECTED = (
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
)
_FROM_TASKS = ("task_id", "language", "kind", "control")
_FROM_ARMS = {"run_id": "r.run_id", "arm": "r.name", "model": "r.model", "arm_state": "r.state"}
# `tampering`: the rules of the grade's tamper findings, comma-separated (empty: none).
_COLUMN_SQL = {
    "tampering": "(select group_concat(json_extract(j.value, '$.rule'), ',') from grades g, json_each(g.tampering_json) j "
    "where g.attempt_id = a.id) as tampering",
    "row_kind": "case when a.id is null then 'no_attempt' else 'attempt' end as row_kind",
}
SQL = (
    "select "
    + ", ".join(_COLUMN_SQL.get(c) or _FROM_ARMS.get(c) or (("t." if c in _FROM_TASKS else "a.") + c) for c in SELECTED)
    + " from tasks t join arms r on r.run_id = t.run_id"
    " left join attempts a on a.run_id = t.run_id and a.task_id = t.task_id and a.arm = r.name"
    " where t.run_id = ? order by t.position, r.name, a.attempt_no"
)
AT = {c: i for i, c in enumerate(SELECTED)}  # a column's place in a row


@contextmanager
def export_stream(ledger: Ledger, run_id: str) -> Iterator[Iterator[tuple[Any, ...]]]:
    """The run's export rows (SELECTED), one at a time in the run's task order, then arm and
    attempt number: an (arm, task)'s rows come together."""
    with ledger.stream(SQL, [run_id]) as rows:
        yield rows
