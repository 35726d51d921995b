"""Which sandbox graded is recorded per run and per grade, and a run without the full sandbox
is flagged: in the line printer, the report, the live view; `--require-sandbox` refuses it."""

import json
import os
import sqlite3
import subprocess
import sys

import pytest

from agent.config import load_config
from agent.ledger import Ledger
from agent.metrics.report import build_report, render_report
from agent.printer import format_event
from tests.support.engine_helpers import arm_toml, run_sync, write_config
from verifiers.grading import SandboxGrader
from verifiers.isolation import bwrap_status
from verifiers.sandboxes import make_sandbox

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _config(tmp_path):
    return write_config(
        tmp_path, [arm_toml("A", "solver"), arm_toml("B", "wrong")], tasks=["py-word-count"], max_attempts=1
    )


def test_a_fallback_run_is_recorded_and_flagged(tmp_path):
    config = _config(tmp_path)
    grader = SandboxGrader(make_sandbox("fallback"))
    engine, run_id, events = run_sync(config, tmp_path / "l.sqlite", grader=grader)
    ledger = Ledger(tmp_path / "l.sqlite")
    run = ledger.run(run_id)
    assert run["isolation_sandbox"] == "fallback"
    assert json.loads(run["isolation_json"])["missing"] == "chosen explicitly"
    assert {g["sandbox"] for g in ledger.query("select sandbox from grades")} == {"fallback"}
    started = next(e for e in events if type(e).__name__ == "RunStarted")
    assert "WARNING: grading without the full sandbox: chosen explicitly" in format_event(started)
    text = render_report(build_report(ledger, [run_id]), "text")
    assert (
        "WARNING: graded without the full sandbox (run declared fallback: chosen explicitly; "
        "grades outside bubblewrap: 2 fallback)" in text
    )


@pytest.mark.skipif(not bwrap_status().usable, reason="needs bubblewrap")
def test_a_bwrap_run_records_it_and_reads_clean(tmp_path):
    engine, run_id, _ = run_sync(_config(tmp_path), tmp_path / "l.sqlite")
    ledger = Ledger(tmp_path / "l.sqlite")
    assert ledger.run(run_id)["isolation_sandbox"] == "bwrap"
    grades = ledger.query("select sandbox, expected_tests from grades")
    assert {g["sandbox"] for g in grades} == {"bwrap"} and {g["expected_tests"] for g in grades} == {7}
    assert ledger.query("select task_id, passed from reference_counts") == [{"task_id": "py-word-count", "passed": 7}]
    report = build_report(ledger, [run_id])
    assert report["runs"][0]["sandbox"]["full"] is True
    assert "WARNING" not in render_report(report, "text")


def test_require_sandbox_refuses_to_start_without_it(tmp_path):
    config = _config(tmp_path)
    db = tmp_path / "never.sqlite"
    env = {**os.environ, "QUOTABENCH_NO_BWRAP": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", "run", str(config), "--headless", "--db", str(db), "--require-sandbox"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "quotabench: the bubblewrap sandbox is required but unavailable: disabled by QUOTABENCH_NO_BWRAP"
    ]
    assert not db.exists()
    config.write_text(config.read_text().replace("[run]\n", "[run]\nrequire_sandbox = true\n"))
    assert load_config(config).require_sandbox is True
    done = subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", "run", str(config), "--headless", "--db", str(db)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 2 and "bubblewrap sandbox is required" in done.stderr and not db.exists()


def test_validate_says_which_sandbox_gates(tmp_path):
    suite = os.path.join(ROOT, "fixtures", "smoke", "py-word-count")
    env = {**os.environ, "QUOTABENCH_NO_BWRAP": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", "validate", suite],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert "WARNING: gating without the full sandbox (fallback): disabled by QUOTABENCH_NO_BWRAP" in done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", "validate", suite, "--require-sandbox"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 2 and "required but unavailable" in done.stderr


def test_the_reference_run_survives_in_the_ledger(tmp_path):
    from agent.ledger.counts import LedgerCounts
    from verifiers.verdict import Expected, TestResult

    db = sqlite3.connect(tmp_path / "x.sqlite")
    db.close()
    ledger = Ledger(tmp_path / "x.sqlite")
    counts = LedgerCounts(ledger)
    assert counts.get("k") == (False, None)
    expected = Expected(
        {
            "t.py::a": TestResult("passed", "t.py:1"),
            "t.py::b": TestResult("skipped", "t.py:4"),
            "t.py::c": TestResult("passed"),
        }
    )
    counts.put("k", "py-add", expected)
    counts.put("n", "sh-x", None)
    again = LedgerCounts(Ledger(tmp_path / "x.sqlite"))
    assert again.get("k") == (True, expected) and again.get("k")[1].passed == 2
    assert counts.get("n") == (True, None)
    row = sqlite3.connect(tmp_path / "x.sqlite").execute("select passed from reference_counts where task_key = 'k'")
    assert row.fetchone() == (2,)  # readable in the sqlite3 shell
