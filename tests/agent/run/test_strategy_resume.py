"""A strategy run killed between its stages resumes (issue 16): completed candidates are reused,
never re-run or charged twice; a stage lost in flight runs again; the task submits once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from agent.endpoints.scripted_server import ScriptedServer
from agent.ledger import Ledger
from tests.conftest import FIXTURES, ROOT
from tests.support.engine_helpers import arm_toml, write_config

pytestmark = pytest.mark.slow


def _cli(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", *map(str, args)],
        cwd=ROOT,
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("kill_at, p_rows", [("graded:2", 2), ("call_row:6", 3)])
def test_a_parallel_task_killed_between_stages_resumes_and_submits_once(tmp_path, kill_at, p_rows):
    with ScriptedServer([FIXTURES / "smoke"]) as server:
        cfg = write_config(
            tmp_path,
            [arm_toml("P", "second-passes", base_url=server.base_url, extra='strategy = "parallel@2"\n')],
            tasks=["py-word-count"],
            max_attempts=1,
        )
        db = tmp_path / "l.sqlite"
        killed = _cli("run", cfg, "--db", db, "--headless", env={**os.environ, "QUOTABENCH_KILL_AT": kill_at})
        assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
        assert not Ledger(db).query("select * from submissions")
        done = _cli("resume", "--db", db)
        assert done.returncode == 0, done.stdout + done.stderr
    ledger = Ledger(db)
    run_id = ledger.resolve_run_id(None)
    rows = ledger.query(
        "select candidate, failure_class, accepted, submitted, total_tokens from attempts "
        "where run_id = ? order by attempt_no",
        [run_id],
    )
    assert len(rows) == p_rows
    counted = [r for r in rows if r["failure_class"] != "aborted"]
    assert [(r["candidate"], r["accepted"], r["submitted"]) for r in counted] == [(1, 0, 0), (2, 1, 1)]
    assert len(ledger.query("select * from submissions where run_id = ?", [run_id])) == 1
    calls = ledger.query(
        "select sum(prompt_tokens + completion_tokens) n from calls where run_id = ? and kind = 'attempt'", [run_id]
    )[0]["n"]
    assert sum(r["total_tokens"] for r in rows) == calls == ledger.arms(run_id)[0]["tokens_used"]
