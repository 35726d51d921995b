"""The real `quotabench run CONFIG --db FILE` in a tmux terminal of 80x24, the size most
terminals open at: the live view shows each meter's cap and share, both arms' cells and the
header's state / elapsed / ETA / done; `p` pauses, `l` shows the log, `a` asks with its keys on
screen and `y` aborts; `q` quits and the report printed after it fits the 80 columns. A second
run stops at arm A's auto-pause window before its cap: every button is on screen, a mistyped
cap gives the keys back, and `c` lets the run finish. The scripted server answers late, so the
run is still live when the keys arrive."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from agent.endpoints.scripted_server import ScriptedServer
from agent.ledger import Ledger

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "fixtures" / "smoke"
QUOTABENCH = Path(sys.executable).with_name("quotabench")
COLS, ROWS = 80, 24

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
    pytest.mark.skipif(not QUOTABENCH.exists(), reason="needs the quotabench script next to python"),
]


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def screen(session: str) -> str:
    return tmux("capture-pane", "-p", "-t", session)


def history(session: str) -> list[str]:
    """Every line written so far, wrapped lines joined again (-J): a line longer than the
    terminal shows up longer than COLS here."""
    return tmux("capture-pane", "-p", "-J", "-S", "-500", "-t", session).splitlines()


def wait_for_text(session: str, *needles: str, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        text = screen(session)
        if all(n in text for n in needles):
            return text
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {needles!r}; the screen shows:\n{text}")
        time.sleep(0.2)


def write_config(
    tmp_path: Path, base_url: str, *, model_a: str, tasks: list[str], cap_a: int = 400_000, share: float = 0.9
) -> Path:
    config = tmp_path / "run.toml"
    task_list = ", ".join(f'"{t}"' for t in tasks)
    config.write_text(f"""
[run]
suites = ["{SMOKE}"]
tasks = [{task_list}]
max_attempts = 2
auto_pause_share = {share}

[run.limits]
max_turns = 40
attempt_timeout_s = 120

[[arms]]
name = "A"
kind = "scripted"
base_url = "{base_url}"
model = "{model_a}"
cap_tokens = {cap_a}
price = {{ input_per_mtok = 0.15, output_per_mtok = 0.60 }}

[[arms]]
name = "B"
kind = "scripted"
base_url = "{base_url}"
model = "never-finish"
protocol = "text"
cap_tokens = 400000
price = {{ input_per_mtok = 0.10, output_per_mtok = 0.40 }}
""")
    return config


def start(tmp_path: Path, config: Path, db: Path) -> str:
    session = f"qb-live-{uuid.uuid4().hex[:8]}"
    command = f"{QUOTABENCH} run {config} --db {db}; echo QB-EXIT=$?; sleep 120"
    env = {**os.environ, "TERM": "xterm-256color", "XDG_STATE_HOME": str(tmp_path / "state")}
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", str(COLS), "-y", str(ROWS), "-c", str(tmp_path), command],
        check=True,
        env=env,
    )
    return session


def test_pause_then_abort_at_80x24(tmp_path):
    db = tmp_path / "ledger.sqlite"
    with ScriptedServer([SMOKE], delay_s=0.3) as server:
        config = write_config(
            tmp_path, server.base_url, model_a="never-finish", tasks=["py-word-count", "js-clamp-range"]
        )
        session = start(tmp_path, config, db)
        try:
            live = wait_for_text(session, "▶ running", "▶ attempt 1", "ETA", "/4")
            header = live.splitlines()[0]
            assert re.search(r"▶ running · (elapsed )?\d\d:\d\d · ETA (—|~\d\d:\d\d) · \d+/4", header), header
            assert len(re.findall(r"/ cap 400(,000|k) \(\d+%\)", live)) == 2, live  # both meters: cap and share
            row = next(line for line in live.splitlines() if re.match(r"│ (js-clamp-range|py-word-count) ", line))
            assert row.count("▶ attempt 1") == 2, row  # both arms' cells
            assert "p pause" in live and "a abort" in live and "q quit" in live and "l log" in live

            tmux("send-keys", "-t", session, "p")
            wait_for_text(session, "PAUSED")
            tmux("send-keys", "-t", session, "l")
            wait_for_text(session, "you: pause", "events")
            tmux("send-keys", "-t", session, "l")

            tmux("send-keys", "-t", session, "a")
            wait_for_text(session, "Abort the run?", "Abort (y)", "No (n)")
            tmux("send-keys", "-t", session, "y")
            wait_for_text(session, "■ aborted", "q quit + report")

            tmux("send-keys", "-t", session, "q")
            wait_for_text(session, "QB-EXIT=130")  # an aborted run exits 130 (issue 12)
            lines = history(session)
            start_at = next(
                i for i, line in enumerate(lines) if line.startswith("Run ") and "(aborted, created" in line
            )
            report = lines[start_at:]
            assert any(line.startswith("Next: quotabench resume ") for line in report)  # aborted: finish it first
            assert any("quotabench browse" in line for line in report)
            too_wide = [line for line in report if len(line) > COLS]
            assert not too_wide, too_wide
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)

    ledger = Ledger(db)
    runs = ledger.runs()
    assert [r["status"] for r in runs] == ["aborted"]
    attempts = ledger.attempts(runs[0]["id"])
    assert {a["arm"] for a in attempts} == {"A", "B"}
    assert all(a["status"] == "done" and a["calls"] >= 1 and a["total_tokens"] > 0 for a in attempts)


def test_the_auto_pause_window_at_80x24(tmp_path):
    db = tmp_path / "ledger.sqlite"
    with ScriptedServer([SMOKE], delay_s=0.2) as server:
        # the solver's third call on py-word-count reserves more than is left under a 3,000 cap
        config = write_config(
            tmp_path, server.base_url, model_a="solver", tasks=["py-word-count"], cap_a=3_000, share=1.0
        )
        session = start(tmp_path, config, db)
        try:
            window = wait_for_text(session, "Auto-pause: arm A", "Its next call reserves", "past the")
            for button in ("Raise cap (r)", "Continue (c)", "Stop arm A (s)", "Abort run (a)"):
                assert button in window, window
            tmux("send-keys", "-t", session, "r")
            wait_for_text(session, "typing the new cap")  # the field has the keys now
            tmux("send-keys", "-t", session, "-l", "abc")
            tmux("send-keys", "-t", session, "Enter")
            wait_for_text(session, "'abc' is not a number of tokens")
            tmux("send-keys", "-t", session, "a")  # the keys are the window's again, not the field's
            wait_for_text(session, "■ aborted", timeout=60)
            tmux("send-keys", "-t", session, "q")
            wait_for_text(session, "QB-EXIT=130")
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    ledger = Ledger(db)
    arms = {a["name"]: a for a in ledger.arms(ledger.runs()[0]["id"])}
    assert arms["A"]["censored"] == 0 and arms["A"]["cap_tokens"] == 3_000
