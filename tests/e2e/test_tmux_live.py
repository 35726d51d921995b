"""The real `quotabench run CONFIG --db FILE` in a tmux terminal (200x50): the live view opens,
`p` pauses the run, `a` + `y` aborts it, `q` quits and the report is printed; the ledger holds
the attempts made until the abort. The scripted server answers 0.3 s late with the
never-finish model, so the run is still live when the keys arrive."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from agent.ledger import Ledger
from agent.scripted_server import ScriptedServer

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "fixtures" / "smoke"
QUOTABENCH = Path(sys.executable).with_name("quotabench")

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
              pytest.mark.skipif(not QUOTABENCH.exists(), reason="needs the quotabench script next to python")]


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def screen(session: str) -> str:
    return tmux("capture-pane", "-p", "-t", session)


def wait_for_text(session: str, *needles: str, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        text = screen(session)
        if all(n in text for n in needles):
            return text
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {needles!r}; the screen shows:\n{text}")
        time.sleep(0.2)


def test_pause_then_abort_in_a_real_terminal(tmp_path):
    db = tmp_path / "ledger.sqlite"
    session = f"qb-live-{uuid.uuid4().hex[:8]}"
    with ScriptedServer([SMOKE], delay_s=0.3) as server:
        config = tmp_path / "run.toml"
        config.write_text(f"""
[run]
suites = ["{SMOKE}"]
tasks = ["py-word-count", "js-clamp-range"]
max_attempts = 2

[run.limits]
max_turns = 40
attempt_timeout_s = 120

[[arms]]
name = "A"
kind = "scripted"
base_url = "{server.base_url}"
model = "never-finish"
cap_tokens = 400000
price = {{ input_per_mtok = 0.15, output_per_mtok = 0.60 }}

[[arms]]
name = "B"
kind = "scripted"
base_url = "{server.base_url}"
model = "never-finish"
protocol = "text"
cap_tokens = 400000
price = {{ input_per_mtok = 0.10, output_per_mtok = 0.40 }}
""")
        command = f"{QUOTABENCH} run {config} --db {db}; echo QB-EXIT=$?; sleep 120"
        env = {**os.environ, "TERM": "xterm-256color"}
        subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "200", "-y", "50", "-c", str(tmp_path),
                        command], check=True, env=env)
        try:
            live = wait_for_text(session, "quotabench live", "▶ running", "attempt 1 · turn")
            assert "p pause/resume" in live and "a abort" in live and "q quit" in live

            tmux("send-keys", "-t", session, "p")
            paused = wait_for_text(session, "PAUSED")
            assert "you: pause" in paused

            tmux("send-keys", "-t", session, "a")
            wait_for_text(session, "Abort the run?")
            tmux("send-keys", "-t", session, "y")
            wait_for_text(session, "■ aborted", "q quits and prints the report")

            tmux("send-keys", "-t", session, "q")
            after = wait_for_text(session, "QB-EXIT=130")   # an aborted run exits 130 (issue 12)
            assert "(aborted, created" in after and "Next: quotabench browse" in after
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)

    ledger = Ledger(db)
    runs = ledger.runs()
    assert [r["status"] for r in runs] == ["aborted"]
    attempts = ledger.attempts(runs[0]["id"])
    assert {a["arm"] for a in attempts} == {"A", "B"}
    assert all(a["status"] == "done" and a["calls"] >= 1 and a["total_tokens"] > 0 for a in attempts)
    calls = ledger.query("select count(*) as n from calls where run_id = ?", [runs[0]["id"]])[0]["n"]
    assert calls >= 2
