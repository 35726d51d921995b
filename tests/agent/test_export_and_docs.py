"""The export and docs/ledger.md's example queries against real ledgers made by real scripted runs
(a strategy run, and a run with retries and a censored arm): every query runs, and the figures
they give — and the exported CSV's — agree with the report's."""

from __future__ import annotations

import csv
import io
import re
import sqlite3
from collections import Counter

import pytest

from agent.export import COLUMNS, export_attempts
from agent.ledger import Ledger
from agent.metrics.report import build_report
from tests.conftest import ROOT
from tests.support.engine_helpers import arm_toml, run_sync, write_config

DOC = ROOT / "docs" / "ledger.md"


@pytest.fixture(scope="module")
def ledgers(tmp_path_factory):
    """(db, strategy run id, retry run id): Direct vs Parallel@2 as the example config runs it,
    then A solving against B writing unparseable files on a cap that censors it."""
    folder = tmp_path_factory.mktemp("docs")
    db = folder / "l.sqlite"
    _, strategy_run, _ = run_sync(ROOT / "examples" / "strategies-scripted.toml", db)
    retries = write_config(folder, [arm_toml("A", "solver"), arm_toml("B", "unparseable", protocol="text", cap=2_500)])
    _, retry_run, _ = run_sync(retries, db)
    return db, strategy_run, retry_run


def _report_arms(db, run_id) -> dict:
    report = build_report(Ledger(db), [run_id], resamples=50)
    return {a["metrics"]["name"]: a["metrics"] for a in report["runs"][0]["arms"]}


def doc_queries() -> list[str]:
    """Every statement of docs/ledger.md's "Example queries" section, in order."""
    section = DOC.read_text().split("## Example queries", 1)[1]
    blocks = re.findall(r"```sql\n(.*?)```", section, re.S)
    return [q.strip() for block in blocks for q in block.split(";\n") if q.strip()]


def _run(db, sql: str, run_id: str) -> list[sqlite3.Row]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql, {"run": run_id, "set": run_id}).fetchall()
    finally:
        conn.close()


def _query(starting: str) -> str:
    (sql,) = [q for q in doc_queries() if q.startswith(starting)]
    return sql


def test_every_example_query_runs_on_a_real_ledger(ledgers):
    db, strategy_run, retry_run = ledgers
    queries = doc_queries()
    assert len(queries) >= 12
    for run_id in (strategy_run, retry_run):
        for sql in queries:
            _run(db, sql, run_id)  # raises on any query that does not run


def test_accepted_tasks_per_arm_agrees_with_the_report_on_a_strategy_run(ledgers):
    db, strategy_run, retry_run = ledgers
    sql = _query("select a.name as arm, a.model")
    for run_id in (strategy_run, retry_run):
        by_query = {r["arm"]: r["accepted"] for r in _run(db, sql, run_id)}
        assert by_query == {name: m["accepted"] for name, m in _report_arms(db, run_id).items()}
    par2 = {r["arm"]: r for r in _run(db, sql, strategy_run)}["par2"]
    assert (par2["tasks"], par2["accepted"]) == (3, 2)  # 3 tasks covered, 2 submitted correct


def test_retry_tax_agrees_with_the_report_where_the_report_gives_one(ledgers):
    db, strategy_run, retry_run = ledgers
    sql = _query("select arm, sum(total_tokens) as tokens")
    compared = 0
    for run_id in (strategy_run, retry_run):
        report = _report_arms(db, run_id)
        for row in _run(db, sql, run_id):
            m = report[row["arm"]]
            assert row["tokens"] == m["total_tokens"]
            if m["retry_tax"] is not None:  # a censored arm is not comparable: the report gives —
                assert row["retry_tax"] == round(m["retry_tax"], 2)
                compared += 1
    assert compared == 3  # direct, par2, and A of the retry run


def test_failure_taxonomy_by_attempt_counts_every_attempt(ledgers):
    db, _, retry_run = ledgers
    rows = _run(db, _query("select arm, failure_class, count(*) as attempts"), retry_run)
    total = _run(db, "select count(*) n from attempts where run_id = :run", retry_run)[0]["n"]
    assert sum(r["attempts"] for r in rows) == total > 0


def _export(db, run_id) -> list[dict]:
    out = io.StringIO()
    done = export_attempts(Ledger(db), run_id, "csv", out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert tuple(rows[0]) == COLUMNS and done.rows == len(rows)
    return rows


def test_a_strategy_runs_export_agrees_with_the_report(ledgers):
    db, strategy_run, _ = ledgers
    rows = _export(db, strategy_run)
    report = _report_arms(db, strategy_run)
    for arm, m in report.items():
        mine = [r for r in rows if r["arm"] == arm]
        assert len({r["task_id"] for r in mine if r["task_accepted"] == "1"}) == m["accepted"]
        assert len({r["task_id"] for r in mine}) == m["n_tasks"]
        assert {r["model"] for r in mine} == {"second-passes"} and {r["arm_state"] for r in mine} == {"finished"}
    par2 = [r for r in rows if r["arm"] == "par2"]
    assert {r["stage"] for r in par2} == {"candidate"} and {r["candidate"] for r in par2} == {"1", "2"}
    assert sorted(r["submitted"] for r in par2) == ["0", "0", "0", "1", "1", "1"]
    lost = [r for r in par2 if r["accepted"] == "1" and r["submitted"] == "0"]  # passed, not submitted
    assert lost and all(r["task_accepted"] == "0" for r in lost)
    direct = [r for r in rows if r["arm"] == "direct"]
    assert {r["stage"] for r in direct} == {"attempt"} and {r["candidate"] for r in direct} == {""}


def test_a_censored_arms_tasks_are_in_the_export_with_their_outcome(ledgers):
    db, _, retry_run = ledgers
    rows = _export(db, retry_run)
    report = _report_arms(db, retry_run)
    b = report["B"]
    assert b["censored"] and b["taxonomy"]["censored"] > 0
    mine = [r for r in rows if r["arm"] == "B"]
    outcomes = {r["task_id"]: r["task_outcome"] for r in mine}
    assert len(outcomes) == b["n_tasks"] and Counter(outcomes.values()) == +Counter(b["taxonomy"])
    never = [r for r in mine if r["row_kind"] == "no_attempt"]
    assert never and all(r["attempt_no"] == "" and r["task_outcome"] == "censored" for r in never)
    assert {r["arm_state"] for r in mine} == {"censored"}
    assert len({r["task_id"] for r in rows if r["arm"] == "A" and r["task_accepted"] == "1"}) == report["A"]["accepted"]
