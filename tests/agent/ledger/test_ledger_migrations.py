"""The ledger schema: m012 (preflight) and m013 (replicates) on an empty ledger and up from one written
before them; and from every older schema, step by step, up to head with every row kept."""

from __future__ import annotations

import sqlite3

import pytest
from sqlite_utils import Database

from agent.ledger import Ledger
from agent.ledger.schema import migrations


def _columns(db: Database, table: str) -> set[str]:
    return {c.name for c in db[table].columns}


def test_an_empty_ledger_gets_the_preflight_and_replicate_columns(tmp_path):
    db = Ledger(tmp_path / "l.sqlite").db
    assert {
        "id",
        "run_id",
        "arm",
        "endpoint_url",
        "model",
        "verdict",
        "forced",
        "checks_json",
        "prompt_tokens",
        "completion_tokens",
        "calls",
        "duration_ms",
    } <= _columns(db, "preflights")
    assert {"kind", "preflight_id", "probe", "server_session_id", "request_sha256", "response_sha256"} <= _columns(
        db, "calls"
    )
    assert {"replicate", "replicates", "replicate_set"} <= _columns(db, "runs")
    assert "server_session_id" in _columns(db, "arms")


def test_a_ledger_from_before_issue_17_migrates_and_its_calls_are_attempts(tmp_path):
    path = tmp_path / "old.sqlite"
    old = Database(sqlite3.connect(path))
    migrations.apply(old, stop_before="m012_preflight")
    assert "kind" not in _columns(old, "calls") and not old["preflights"].exists()
    old["runs"].insert({"id": "R1", "status": "finished"})
    old["calls"].insert({"id": "C1", "run_id": "R1", "arm": "A", "prompt_tokens": 10, "completion_tokens": 2})
    old.conn.commit()
    old.conn.close()
    ledger = Ledger(path)
    assert ledger.query("select kind, preflight_id, request_sha256 from calls") == [
        {"kind": "attempt", "preflight_id": None, "request_sha256": None}
    ]
    assert ledger.query("select replicate, replicate_set from runs") == [{"replicate": None, "replicate_set": None}]
    ledger.insert("calls", {"id": "C2", "run_id": "R1", "arm": "A"})  # a new row without a kind is an attempt's
    assert ledger.query("select kind from calls where id = 'C2'") == [{"kind": "attempt"}]


# parent tables first, so foreign keys hold; ids a row's children point at
_PARENTS = {"runs": "R1", "arms": "ARM1", "attempts": "AT1", "preflights": "P1"}
_REFS = {"run_id": "R1", "arm_id": "ARM1", "attempt_id": "AT1", "preflight_id": "P1"}


def _sample(table: str, column) -> object:
    if column.name == "id" and table in _PARENTS:
        return _PARENTS[table]
    if column.name in _REFS:
        return _REFS[column.name]
    if column.type == "INTEGER":
        return 7
    if column.type in ("FLOAT", "REAL"):
        return 1.5
    return f"{table}.{column.name}"


def _names() -> list[str]:
    return [m.name for m in migrations.pending(Database(memory=True))]


@pytest.mark.parametrize("head_before", _names()[1:] + [None], ids=lambda n: f"before-{n}" if n else "at-head")
def test_a_ledger_from_every_older_schema_upgrades_to_head_and_keeps_its_rows(tmp_path, head_before):
    """Build a ledger as each historical step left it, fill every table it had with a row using
    every column it had, open it (which migrates to head): each value is still there, and every
    table has exactly the head's columns."""
    path = tmp_path / "old.sqlite"
    old = Database(sqlite3.connect(path))
    migrations.apply(old, stop_before=head_before)
    tables = [t for t in [*_PARENTS, *sorted(old.table_names())] if old[t].exists() and not t.startswith("_")]
    written = {}
    for table in dict.fromkeys(tables):
        row = {c.name: _sample(table, c) for c in old[table].columns}
        old.table(table).insert(row)
        written[table] = row
    old.conn.commit()
    old.conn.close()

    ledger = Ledger(path)
    fresh = Ledger(tmp_path / "fresh.sqlite")
    for table, row in written.items():
        kept = ledger.query(f"select {', '.join(row)} from {table}")
        assert kept == [row], f"{table}: rows written before {head_before} changed on upgrade"
    for table in fresh.db.table_names():
        assert _columns(ledger.db, table) == _columns(fresh.db, table), table


def test_a_lost_attempts_retry_keeps_its_number_and_counted_numbers_stay_unique(tmp_path):
    """m022: the unique (run, arm, task, attempt_no) index leaves cut-off attempts out, so a lost
    attempt's retry takes its number; two counted attempts still cannot share one. Its list of
    lost classes is agent.classify's."""
    from agent.classify import NOT_COUNTED

    path = tmp_path / "old.sqlite"
    old = Database(sqlite3.connect(path))
    migrations.apply(old, stop_before="m022_lost_attempts_keep_their_number")
    old["runs"].insert({"id": "R1", "status": "running"})
    row = {"run_id": "R1", "arm": "A", "task_id": "t1"}
    old["attempts"].insert({"id": "AT1", **row, "attempt_no": 1, "failure_class": "aborted"})
    old["attempts"].insert({"id": "AT2", **row, "attempt_no": 2, "failure_class": "reasoning"})  # numbered after it
    old.conn.commit()
    old.conn.close()
    ledger = Ledger(path)
    ledger.insert("attempts", {"id": "AT3", **row, "attempt_no": 1, "failure_class": None})  # a retry of AT1
    ledger.insert("attempts", {"id": "AT4", **row, "attempt_no": 3, "failure_class": "censored"})
    ledger.insert("attempts", {"id": "AT5", **row, "attempt_no": 3, "failure_class": "aborted"})
    with pytest.raises(sqlite3.IntegrityError):
        ledger.db.execute(
            "insert into attempts (id, run_id, arm, task_id, attempt_no) values ('X', 'R1', 'A', 't1', 2)"
        )
    sql = ledger.query("select sql from sqlite_master where name = 'idx_attempts_number'")[0]["sql"]
    assert all(f"'{c}'" in sql for c in NOT_COUNTED) and sql.count("'") == 2 * len(NOT_COUNTED)
    assert not ledger.query("select name from sqlite_master where name = 'idx_attempts_run_id_arm_task_id_attempt_no'")


def test_mutation_scores_table_on_an_empty_ledger_and_up_from_before_it(tmp_path):
    fresh = Ledger(tmp_path / "new.sqlite").db
    assert {
        "run_id",
        "task_id",
        "cache_key",
        "generated",
        "killed",
        "survived",
        "equivalent",
        "unviable",
        "flagged",
        "errors",
        "score",
        "weak_below",
    } <= _columns(fresh, "mutation_scores")
    path = tmp_path / "old.sqlite"
    old = Database(sqlite3.connect(path))
    migrations.apply(old, stop_before="m023_mutation_scores")
    assert not old["mutation_scores"].exists()
    old["runs"].insert({"id": "R1", "status": "finished"})
    old.conn.commit()
    old.conn.close()
    ledger = Ledger(path)
    assert ledger.mutation_scores("R1") == []
    assert _columns(ledger.db, "mutation_scores") == _columns(fresh, "mutation_scores")


def test_grades_keep_grammar_gaps_apart_on_an_empty_ledger_and_up_from_before_m025(tmp_path):
    """m025: a grade's grammar gaps (parse errors its toolchain accepted) have their own column,
    so mechanics_json, which makes the class, never holds them; an older ledger gains it."""
    assert "grammar_gaps_json" in _columns(Ledger(tmp_path / "new.sqlite").db, "grades")
    path = tmp_path / "old.sqlite"
    old = Database(sqlite3.connect(path))
    migrations.apply(old, stop_before="m025_grades_grammar_gaps")
    assert "grammar_gaps_json" not in _columns(old, "grades")
    old.conn.close()
    ledger = Ledger(path)
    assert "grammar_gaps_json" in _columns(ledger.db, "grades")
