"""Exit codes and failure lines of `quotabench run`: finished 0, aborted 130 (test_resume.py),
crashed 1 with one line and a log file holding the traceback, an unexpected error inside an
attempt is that attempt's harness_error (traceback in the ledger), a full disk and a damaged
ledger are one line each — never a traceback on the terminal."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agent.ledger import Ledger
from tests.conftest import ROOT
from tests.support.engine_helpers import arm_toml, run_sync, write_config


def _run(args, env_extra=None, preexec_fn=None, stdout=subprocess.PIPE):
    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", *map(str, args)],
        cwd=ROOT,
        env=env,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
        preexec_fn=preexec_fn,
    )


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.startswith("quotabench:")]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr, stderr
    return lines[0]


@pytest.mark.slow
def test_a_crash_is_one_line_with_the_log_path_and_exit_1(tmp_path):
    cfg = write_config(tmp_path, [arm_toml("A", "solver")], tasks=["py-word-count"], max_attempts=1)
    done = _run(
        ["run", cfg, "--db", tmp_path / "l.sqlite", "--headless"],
        {"QUOTABENCH_FAIL_AT": "arms_open", "XDG_STATE_HOME": str(tmp_path / "state")},
    )
    assert done.returncode == 1, done.stderr
    line = _one_line(done.stderr)
    assert "crashed: RuntimeError: test hook" in line
    log = Path(line.split("the traceback is in ")[1].split(";")[0])
    assert log.is_file() and log.parent == tmp_path / "state" / "quotabench"
    assert "Traceback" in log.read_text() and "arms_open" in log.read_text()
    ledger = Ledger(tmp_path / "l.sqlite")
    assert ledger.runs()[0]["status"] == "crashed"
    run_id = ledger.runs()[0]["id"]
    assert line.endswith(f"; `quotabench resume {run_id[:10]} --db {tmp_path / 'l.sqlite'}` finishes the run"), line
    assert {a["state"] for a in ledger.arms(ledger.runs()[0]["id"])} == {"aborted"}


@pytest.mark.slow
def test_an_unexpected_error_in_an_attempt_is_its_harness_error_and_the_run_finishes(tmp_path):
    cfg = write_config(
        tmp_path, [arm_toml("A", "solver"), arm_toml("B", "solver")], tasks=["py-word-count"], max_attempts=1
    )
    done = _run(["run", cfg, "--db", tmp_path / "l.sqlite", "--headless"], {"QUOTABENCH_FAIL_AT": "call_row"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    ledger = Ledger(tmp_path / "l.sqlite")
    run = ledger.runs()[0]
    assert run["status"] == "finished"
    for attempt in ledger.attempts(run["id"]):
        assert (attempt["end_reason"], attempt["failure_class"]) == ("harness_error", "harness_error")
        assert "RuntimeError: test hook" in attempt["end_detail"]
        assert "Traceback" in attempt["error_traceback"] and "kill_point" in attempt["error_traceback"]
    lost = ledger.query(
        "select status, prompt_tokens, reserved_tokens from calls where run_id = ? and kind = 'attempt'", [run["id"]]
    )
    assert lost and all(c["status"] == "lost" and c["prompt_tokens"] == c["reserved_tokens"] for c in lost)


def _finished_ledger(tmp_path) -> Path:
    cfg = write_config(tmp_path, [arm_toml("A", "solver")], tasks=["py-word-count"], max_attempts=1)
    db = tmp_path / "l.sqlite"
    run_sync(cfg, db)
    ledger = Ledger(db)
    ledger.db.conn.execute("pragma wal_checkpoint(TRUNCATE)")
    ledger.close()
    return db


def test_a_damaged_ledger_is_one_line(tmp_path):
    db = _finished_ledger(tmp_path)
    data = bytearray(db.read_bytes())
    page = 4096
    for offset in range(page, len(data), page):  # every page but the header page
        data[offset : offset + 64] = b"\xde\xad\xbe\xef" * 16
    db.write_bytes(bytes(data))
    for args in (["report", "--db", db], ["export", "--db", db]):
        done = _run(args)
        assert done.returncode == 1, done.stderr
        line = _one_line(done.stderr)
        assert str(db) in line or "ledger" in line
        assert "damaged" in line or "malformed" in line, line


def test_a_file_that_is_not_a_ledger_is_one_line(tmp_path):
    db = tmp_path / "notes.sqlite"
    db.write_text("these are my notes, not a database\n" * 200)
    done = _run(["report", "--db", db])
    assert done.returncode == 1
    assert "not a database" in _one_line(done.stderr)


def _small_files():
    resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk


@pytest.mark.slow
def test_a_full_disk_is_one_line(tmp_path):
    cfg = write_config(tmp_path, [arm_toml("A", "never-finish"), arm_toml("B", "never-finish")], max_turns=200)
    done = _run(["run", cfg, "--db", tmp_path / "l.sqlite", "--headless"], preexec_fn=_small_files)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr
    line = _one_line(done.stderr)
    assert "ledger" in line and ("disk" in line or "full" in line), line
    run_id = Ledger(tmp_path / "l.sqlite", read_only=True).runs()[0]["id"]
    assert f"then `quotabench resume {run_id[:10]} --db {tmp_path / 'l.sqlite'}` finishes the run" in line, line


_CRASHING_IMPORT = """
import sys
import verifiers.humaneval
from tuiapp.cli.program import main

def boom():
    raise RuntimeError("import broke")

verifiers.humaneval.load_problems = boom
sys.exit(main(sys.argv[1:]))
"""


def test_a_failure_before_any_run_was_recorded_offers_no_resume(tmp_path):
    """`quotabench resume` needs a run in the ledger: a command that recorded none must not offer it."""
    cfg = write_config(tmp_path, [arm_toml("A", "solver")], tasks=["py-word-count"], max_attempts=1)
    (tmp_path / "done").mkdir()
    db = _finished_ledger(tmp_path / "done")
    state = {"XDG_STATE_HOME": str(tmp_path / "state")}
    with open("/dev/full", "w") as full:
        failures = {
            "a ledger that cannot be written": _run(["run", cfg, "--db", "/dev/null", "--headless"], state),
            "export to a full disk": _run(["export", "--db", db, "-o", "/dev/full"], state),
            "report to a full disk": _run(["report", "--db", db], state, stdout=full),
            "an import that crashed": subprocess.run(
                [sys.executable, "-c", _CRASHING_IMPORT, "import", "humaneval", tmp_path / "he"],
                cwd=ROOT,
                env=dict(os.environ, **state),
                capture_output=True,
                text=True,
                timeout=300,
            ),
        }
    for case, done in failures.items():
        assert done.returncode != 0, case
        line = _one_line(done.stderr)
        assert "resume" not in line, (case, line)
    assert "then run the command again" in _one_line(failures["export to a full disk"].stderr)
    assert "crashed: RuntimeError: import broke" in _one_line(failures["an import that crashed"].stderr)


def test_an_immutable_ledger_offers_no_resume(tmp_path):
    (tmp_path / "done").mkdir()
    db = _finished_ledger(tmp_path / "done")
    cfg = write_config(tmp_path, [arm_toml("A", "solver")], tasks=["py-word-count"], max_attempts=1)
    if subprocess.run(["chattr", "+i", db], capture_output=True).returncode != 0:
        pytest.skip("chattr +i needs root and a filesystem that has the immutable flag")
    try:
        done = _run(["run", cfg, "--db", db, "--headless"])
    finally:
        subprocess.run(["chattr", "-i", db], check=True)
    assert done.returncode == 1
    line = _one_line(done.stderr)
    assert "cannot write" in line and "pass another --db" in line and "resume" not in line, line
