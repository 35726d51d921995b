"""m012 (preflight) and m013 (replicates): on an empty ledger, and up from one written before them."""
from __future__ import annotations

import sqlite3

from sqlite_utils import Database

from agent.ledger import Ledger
from agent.ledger.schema import migrations


def _columns(db: Database, table: str) -> set[str]:
    return {c.name for c in db[table].columns}


def test_an_empty_ledger_gets_the_preflight_and_replicate_columns(tmp_path):
    db = Ledger(tmp_path / "l.sqlite").db
    assert {"id", "run_id", "arm", "endpoint_url", "model", "verdict", "forced", "checks_json", "prompt_tokens",
            "completion_tokens", "calls", "duration_ms"} <= _columns(db, "preflights")
    assert {"kind", "preflight_id", "probe", "server_session_id", "request_sha256", "response_sha256"} <= _columns(db, "calls")
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
        {"kind": "attempt", "preflight_id": None, "request_sha256": None}]
    assert ledger.query("select replicate, replicate_set from runs") == [{"replicate": None, "replicate_set": None}]
    ledger.insert("calls", {"id": "C2", "run_id": "R1", "arm": "A"})      # a new row without a kind is an attempt's
    assert ledger.query("select kind from calls where id = 'C2'") == [{"kind": "attempt"}]
