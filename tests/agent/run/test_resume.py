"""SIGKILL mid-run, then `quotabench resume`: same accepted set, nothing counted twice, no key leaked."""

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from agent.endpoints.scripted_server import ScriptedServer
from agent.ledger import Ledger
from tests.conftest import FIXTURES, ROOT
from tests.support.engine_helpers import arm_toml, write_config

SECRET = "sk-live-QB7f3e9d2c1b0a"


def cli(*args, env=None, **kw):
    return subprocess.Popen(
        [sys.executable, "-m", "tuiapp.cli", *map(str, args)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        **kw,
    )


def _env():
    env = dict(os.environ, QB_TEST_API_KEY=SECRET)
    return env


@pytest.fixture
def slow_server():
    server = ScriptedServer([FIXTURES / "smoke"], delay_s=0.25).start()
    yield server
    server.stop()


def _config(tmp_path, server):
    extra = 'api_key_env = "QB_TEST_API_KEY"\n'
    return write_config(
        tmp_path,
        [
            arm_toml("A", "solver", base_url=server.base_url, extra=extra),
            arm_toml("B", "wrong", base_url=server.base_url, extra=extra),
        ],
        max_attempts=2,
    )


def _summary(ledger: Ledger, run_id: str):
    rows = ledger.attempts(run_id)
    accepted = {(r["arm"], r["task_id"]) for r in rows if r["accepted"]}
    counted = {}
    for r in rows:
        if r["failure_class"] not in ("aborted", "censored"):
            counted[(r["arm"], r["task_id"])] = counted.get((r["arm"], r["task_id"]), 0) + 1
    return accepted, counted, rows


@pytest.mark.slow
def test_sigkill_then_resume_matches_an_uninterrupted_run(tmp_path, slow_server):
    cfg = _config(tmp_path, slow_server)
    clean_db, killed_db = tmp_path / "clean.sqlite", tmp_path / "killed.sqlite"
    clean = cli("run", cfg, "--db", clean_db, "--headless", env=_env())
    clean_out, _ = clean.communicate(timeout=300)
    assert clean.returncode == 0, clean_out

    proc = cli("run", cfg, "--db", killed_db, "--headless", env=_env())
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if killed_db.exists():
            try:
                done = Ledger(killed_db).query("select count(*) n from attempts where status = 'done'")[0]["n"]
            except Exception:
                continue
            if done >= 2:
                break
    proc.send_signal(signal.SIGKILL)
    killed_out, _ = proc.communicate(timeout=30)

    ledger = Ledger(killed_db)
    run_id = ledger.resolve_run_id(None)
    assert ledger.run(run_id)["status"] == "running"  # the kill left a readable, unfinished ledger
    before = {r["id"]: r for r in ledger.attempts(run_id) if r["status"] == "done"}

    resumed = cli("resume", run_id[:12], "--db", killed_db, env=_env())
    resumed_out, _ = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, resumed_out

    ledger = Ledger(killed_db)
    clean_ledger = Ledger(clean_db)
    accepted, counted, rows = _summary(ledger, run_id)
    clean_accepted, clean_counted, _ = _summary(clean_ledger, clean_ledger.resolve_run_id(None))
    assert accepted == clean_accepted
    assert counted == clean_counted  # no attempt counted twice
    assert ledger.run(run_id)["status"] == "finished"
    after = {r["id"]: r for r in rows}
    for attempt_id, row in before.items():  # finished attempts were not re-run or re-charged
        assert after[attempt_id]["total_tokens"] == row["total_tokens"]
        assert after[attempt_id]["verdict"] == row["verdict"]
    keys = [
        (r["arm"], r["task_id"], r["attempt_no"]) for r in rows if r["failure_class"] not in ("aborted", "censored")
    ]
    assert len(keys) == len(set(keys))
    assert max(r["attempt_no"] for r in rows) <= 2  # a lost attempt's retry keeps its number
    for call in ledger.query("select * from calls where status = 'lost'"):
        assert call["prompt_tokens"] == call["reserved_tokens"] and call["usage_source"] == "reserved"
    assert not ledger.query("select * from calls where status = 'in_flight'")
    tokens = ledger.query("select name, tokens_used from arms where run_id = ?", [run_id])
    for arm in tokens:
        assert arm["tokens_used"] == sum(r["total_tokens"] for r in rows if r["arm"] == arm["name"])

    # the API key never reaches the ledger, its WAL, or anything printed
    for path in tmp_path.glob("*.sqlite*"):
        assert SECRET.encode() not in path.read_bytes(), path
    for out in (clean_out, killed_out, resumed_out):
        assert SECRET not in out
    assert any(SECRET in " ".join(h.values()) for h in slow_server.request_headers)  # it was sent, though


def test_resume_refuses_a_finished_run(tmp_path):
    cfg = write_config(tmp_path, [arm_toml("A", "solver")], tasks=["py-word-count"], max_attempts=1)
    done = subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", "run", str(cfg), "--db", str(tmp_path / "l.sqlite"), "--headless"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    again = subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", "resume", "--db", str(tmp_path / "l.sqlite")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 2 and "already finished" in again.stderr and len(again.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_ctrl_c_aborts_gracefully_and_twice_stops_now(tmp_path, slow_server):
    """Every stop leaves final arms rows: state, the unfinished tasks (the one in flight too),
    tokens_used equal to the calls rows, busy_ms; and the run exits 130."""
    for presses in (1, 2, "term", "hup"):  # hup: the terminal closed
        folder = tmp_path / f"presses-{presses}"
        folder.mkdir()
        cfg = write_config(
            folder,
            [
                arm_toml("A", "never-finish", base_url=slow_server.base_url),
                arm_toml("B", "never-finish", base_url=slow_server.base_url),
            ],
            max_turns=200,
        )
        db = folder / "l.sqlite"
        proc = cli("run", cfg, "--db", db, "--headless")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.2)
            try:
                with contextlib.closing(sqlite3.connect(db)) as conn:  # closed: the run's close folds the WAL
                    if (
                        conn.execute("select count(*) from calls where status = 'ok' and kind = 'attempt'").fetchone()[
                            0
                        ]
                        >= 2
                    ):
                        break
            except Exception:
                continue
        if presses in ("term", "hup"):
            proc.send_signal(signal.SIGTERM if presses == "term" else signal.SIGHUP)
        for _ in range(presses if isinstance(presses, int) else 0):
            proc.send_signal(signal.SIGINT)
            time.sleep(0.05)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 130, out
        assert "Traceback" not in out
        # the ledger file is whole by itself (its WAL folded in): a copy of the .sqlite alone has the run
        alone = folder / "copy.sqlite"
        alone.write_bytes(db.read_bytes())
        with contextlib.closing(sqlite3.connect(alone)) as conn:
            assert conn.execute("select count(*) from calls where kind = 'attempt'").fetchone()[0] >= 2, presses
        if isinstance(presses, int):
            assert "quotabench: aborting: waiting for a call of " in out and "Ctrl-C again to stop now" in out
        if presses != 1:
            assert "stopping now" in out
        ledger = Ledger(db)
        run = ledger.runs()[0]
        assert run["status"] == "aborted", out
        attempts = ledger.attempts(run["id"])
        assert attempts and all(a["status"] == "done" and a["failure_class"] == "aborted" for a in attempts)
        assert not ledger.query("select * from calls where status = 'in_flight'")
        task_ids = [t["task_id"] for t in ledger.tasks(run["id"])]
        for arm in ledger.arms(run["id"]):
            assert arm["state"] == "aborted", arm
            assert json.loads(arm["unfinished_json"]) == task_ids  # the in-flight task included
            calls = ledger.query(
                "select coalesce(sum(prompt_tokens + completion_tokens), 0) n from calls "
                "where run_id = ? and arm = ? and kind = 'attempt'",
                [run["id"], arm["name"]],
            )[0]["n"]
            assert arm["tokens_used"] == calls > 0 and arm["busy_ms"] > 0


def test_unset_api_key_is_one_line_and_records_nothing(tmp_path):
    cfg = write_config(
        tmp_path,
        [arm_toml("A", "solver", base_url="http://127.0.0.1:9/v1", extra='api_key_env = "QB_SURELY_UNSET_KEY"\n')],
    )
    env = {k: v for k, v in os.environ.items() if k != "QB_SURELY_UNSET_KEY"}
    done = subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", "run", str(cfg), "--db", str(tmp_path / "l.sqlite"), "--headless"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "QB_SURELY_UNSET_KEY is not set" in done.stderr
    assert not (tmp_path / "l.sqlite").exists() or not Ledger(tmp_path / "l.sqlite").runs()


@pytest.mark.slow
def test_ctrl_c_says_it_waits_for_a_grade_and_twice_does_not_wait_and_resume_grades_it(tmp_path):
    """A grade that takes a while (hidden tests that sleep): the first Ctrl-C names it and its
    limit, the second ends the run at once, recorded as aborted with the attempt left ungraded;
    `quotabench resume` grades it from its recorded files."""
    import shutil

    suite = tmp_path / "suite"
    task = suite / "py-slow-grade"
    shutil.copytree(FIXTURES / "smoke" / "py-word-count", task)
    toml = (task / "task.toml").read_text().replace('id = "py-word-count"', 'id = "py-slow-grade"')
    (task / "task.toml").write_text(toml)
    hidden = task / "hidden" / "test_hidden.py"
    hidden.write_text("import time\n\ntime.sleep(8)  # a slow grade\n" + hidden.read_text())
    with ScriptedServer([suite]) as server:
        cfg = write_config(tmp_path, [arm_toml("A", "solver", base_url=server.base_url)], suites=(), max_attempts=1)
        cfg.write_text(cfg.read_text().replace("suites = []", f'suites = ["{suite}"]\npreflight = "off"'))
        db, log = tmp_path / "l.sqlite", tmp_path / "out.txt"
        with log.open("w") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "tuiapp.cli", "run", str(cfg), "--db", str(db), "--headless"],
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
            )
            deadline = time.monotonic() + 120
            while "attempt 1 ended: finished" not in log.read_text() and time.monotonic() < deadline:
                time.sleep(0.1)  # waits on the printed state: the attempt is over, its grade runs
            proc.send_signal(signal.SIGINT)
            while "quotabench: aborting" not in log.read_text() and time.monotonic() < deadline:
                time.sleep(0.05)
            asked = time.monotonic()
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
            took = time.monotonic() - asked
        text = log.read_text()
        assert proc.returncode == 130, text
        assert "aborting: waiting for the grade of A py-slow-grade #1 (up to 30 s); Ctrl-C again to stop now" in text
        assert "stopping now" in text and "Traceback" not in text
        assert took < 6, f"the second Ctrl-C waited {took:.1f} s"  # the grade alone takes 8 s or more
        ledger = Ledger(db)
        run_id = ledger.resolve_run_id(None)
        assert ledger.run(run_id)["status"] == "aborted"
        assert [(a["status"], a["verdict"]) for a in ledger.attempts(run_id)] == [("ended", None)]
        resumed = subprocess.run(
            [sys.executable, "-m", "tuiapp.cli", "resume", "--db", str(db)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=180,
        )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    ledger = Ledger(db)
    assert ledger.run(run_id)["status"] == "finished"
    assert [(a["attempt_no"], a["failure_class"]) for a in ledger.attempts(run_id)] == [(1, "accepted")]
