"""A run is `running` only while its process lives: killed with SIGKILL it is `interrupted` in
`report --list` and the report, with the `quotabench resume` line; `resume` refuses a run whose
process is alive and finishes one whose process is gone; an aborted run's Next: line names
`quotabench resume`. Real subprocess runs on the scripted server, a real ledger."""

from __future__ import annotations

import os
import platform
import signal
import sqlite3
import subprocess
import sys
import time

from agent.ledger.liveness import process_alive, process_identity, run_state
from agent.ledger.store import to_json
from tests.conftest import ROOT
from tests.support.engine_helpers import arm_toml, write_config


def cli(*args: object, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        **kw,
    )


def start_run(tmp_path):
    arm = arm_toml("A", "solver", extra="[arms.scripted]\ndelay_s = 0.4\n")
    cfg = write_config(tmp_path, [arm], max_attempts=1)
    db = tmp_path / "l.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tuiapp.cli", "run", str(cfg), "--db", str(db), "--headless"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return proc, db


def wait_for_an_attempt(db, proc, timeout: float = 90) -> str:
    """The run's id once its first attempt row is written (polling the ledger, not the clock)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            rows = conn.execute("select run_id from attempts limit 1").fetchall()
            conn.close()
        except sqlite3.OperationalError:  # not created or not migrated yet
            rows = []
        if rows:
            return rows[0][0]
        time.sleep(0.05)
    raise AssertionError("no attempt started")


def test_a_killed_run_is_interrupted_not_running_and_resumes(tmp_path):
    proc, db = start_run(tmp_path)
    try:
        run_id = wait_for_an_attempt(db, proc)
        alive = cli("report", "--list", "--db", db)
        assert alive.returncode == 0 and f"{run_id}" in alive.stdout
        assert " running " in alive.stdout and "resume" not in alive.stdout, alive.stdout
        refused = cli("resume", run_id, "--db", db)
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1
        assert f"is running in process {proc.pid} on this machine" in refused.stderr
    finally:
        proc.kill()
        proc.communicate()
    listing = cli("report", "--list", "--db", db)
    assert (
        "interrupted manifest" in listing.stdout
        and f"`quotabench resume {run_id[:10]} --db {db}` finishes it" in listing.stdout  # another folder's ledger
    )
    report = cli("report", "--db", db)
    assert report.returncode == 0 and f"Run {run_id} (interrupted," in report.stdout
    assert (
        report.stdout.rstrip()
        .splitlines()[-1]
        .startswith(f"Next: quotabench resume {run_id[:10]} --db {db}   the run is interrupted")
    )
    done = cli("resume", run_id, "--db", db, "--no-preflight")
    assert done.returncode == 0, done.stderr
    assert "finished" in cli("report", "--list", "--db", db).stdout


def test_an_aborted_runs_next_line_names_resume(tmp_path):
    proc, db = start_run(tmp_path)
    run_id = wait_for_an_attempt(db, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 130, err
    nexts = [line for line in out.splitlines() if line.startswith("Next:")]
    assert nexts == [
        f"Next: quotabench resume {run_id[:10]} --db {db}   the run is aborted: this finishes it (finished attempts are kept)"
    ]
    listing = cli("report", "--list", "--db", db).stdout
    assert "aborted" in listing and f"`quotabench resume {run_id[:10]} --db {db}` finishes it" in listing


def test_liveness_of_recorded_processes():
    me = process_identity()
    assert me["pid"] == os.getpid() and me["host"] == platform.node()
    assert process_alive(to_json(me)) is True
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    gone = {**me, "pid": child.pid}
    gone["start"] = me["start"]  # even with a matching start token, a reaped pid is gone
    assert process_alive(to_json(gone)) is False
    reused = {**me, "start": "another-boot:1"}  # this pid, but not the process that started the run
    assert process_alive(to_json(reused)) is False
    assert process_alive(to_json({**me, "host": "elsewhere"})) is None
    assert process_alive(None) is None
    row = {"id": "01X", "status": "running", "process_json": to_json(reused)}
    assert run_state(row) == "interrupted" and run_state({**row, "process_json": to_json(me)}) == "running"
    assert (
        run_state({**row, "process_json": None}) == "running?"
        and run_state({**row, "status": "finished"}) == "finished"
    )
