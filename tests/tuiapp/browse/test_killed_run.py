"""A run killed with SIGKILL mid-call leaves attempts 'running', calls 'in_flight' and no
grades; the browser opens that ledger and shows those attempts as such."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from textual.widgets import DataTable

from agent.endpoints.scripted_server import ScriptedServer
from agent.ledger import Ledger
from tuiapp.browse.app import make_app

from .helpers import open_attempt, open_task, settle, shown
from .scripted_ledger import write_suite

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CONFIG = """
[run]
suites = ["suite"]
max_attempts = 1
tasks = ["py-add"]
preflight = "off"   # the server takes 30 s a call: the kill must find the attempts' calls in flight

[[arms]]
name = "A"
kind = "openai"
base_url = "{url}"
model = "solver"

[[arms]]
name = "B"
kind = "openai"
base_url = "{url}"
model = "wrong"
protocol = "text"
"""


def _in_flight(db) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return conn.execute("select count(*) from calls where status = 'in_flight'").fetchone()[0]
    except sqlite3.Error:
        return 0


@pytest.fixture
def killed_ledger(tmp_path):
    write_suite(tmp_path / "suite")
    db = tmp_path / "killed.sqlite"
    with ScriptedServer([tmp_path / "suite"], delay_s=30) as server:
        (tmp_path / "run.toml").write_text(CONFIG.format(url=server.base_url))
        proc = subprocess.Popen(
            [sys.executable, "-m", "tuiapp.cli", "run", str(tmp_path / "run.toml"), "--db", str(db), "--headless"],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while _in_flight(db) < 2 and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.1)
            assert _in_flight(db) == 2, "both arms should be waiting on their first call"
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    ledger = Ledger(db)
    yield ledger
    ledger.close()


async def test_browser_opens_a_ledger_from_a_killed_run(killed_ledger):
    assert killed_ledger.query("select count(*) as n from grades")[0]["n"] == 0
    app = make_app(killed_ledger)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        runs = app.screen.query_one("#runs", DataTable)
        assert str(runs.get_row_at(0)[1]) == "interrupted"  # its process is gone (agent/ledger/liveness.py)
        await pilot.press("enter")
        await settle(pilot)
        grid = app.screen.query_one("#grid", DataTable)
        assert [str(c).split() for c in grid.get_row("py-add")[1:3]] == [["running", "1", "att", "0", "tok"]] * 2
        await open_task(pilot, "py-add")
        screen = await open_attempt(pilot, "A", 1)
        evidence = shown(screen, "#evidence-body")
        assert "never ended" in evidence and "1 call(s) without a response (in_flight)" in evidence
