"""What the live view reads from the ledger while the engine writes it: one task's attempts on
every arm with their tool calls and grade (the attempts modal), and the preflight's checks the
run command prints at its end. Each opens nothing itself: the caller owns the connection."""

from __future__ import annotations

from typing import Any

from agent.ledger.store import Ledger


def task_attempts_in_full(ledger: Ledger, run_id: str, task_id: str) -> list[dict[str, Any]]:
    """The task's attempts on every arm, each with its tool calls ("tools", in order) and its
    grade ("grade", or None): three reads, whatever the number of attempts."""
    rows = ledger.query(
        "select * from attempts where run_id = ? and task_id = ? order by arm, attempt_no, started_utc",
        [run_id, task_id],
    )
    tools: dict[str, list[dict[str, Any]]] = {r["id"]: [] for r in rows}
    grades: dict[str, dict[str, Any]] = {}
    if rows:
        where = "attempt_id in (select id from attempts where run_id = ? and task_id = ?)"
        for tool in ledger.query(f"select * from tool_calls where {where} order by rowid", [run_id, task_id]):
            tools.setdefault(tool["attempt_id"], []).append(tool)
        for grade in ledger.query(f"select * from grades where {where} order by rowid", [run_id, task_id]):
            grades.setdefault(grade["attempt_id"], grade)
    for row in rows:
        row["tools"] = tools[row["id"]]
        row["grade"] = grades.get(row["id"])
    return rows


def preflight_checks(ledger: Ledger, run_id: str) -> list[dict[str, Any]]:
    """Each preflight's arm and checks, in the order they ran."""
    return ledger.query("select arm, checks_json from preflights where run_id = ? order by created_utc", [run_id])
