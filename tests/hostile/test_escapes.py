"""A real paired run (the `quotabench` CLI, the scripted solver writing hostile "solutions",
grading in the sandbox) and `quotabench validate` on the hostile suite: every escape fails.

Each test asserts what the attack went for is intact: the suite's hidden tests byte for byte,
the ledger's rows, a secret file and the API key absent from everything recorded or shown to
the model, no connection on a host UNIX socket, no process left alive, no forged pass.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from tests.hostile.suite import HIDDEN, HIDDEN_CANARY, Targets, build_suite
from verifiers.isolation import bwrap_status

pytestmark = pytest.mark.slow
KEY_ENV = "QB_HOSTILE_KEY"
QUOTABENCH = [sys.executable, "-m", "tuiapp.cli"]


class UnixListener:
    """A host UNIX socket that records every connection made to it."""

    def __init__(self, path: Path):
        self.path, self.connections = path, []
        self.server = socket.socket(socket.AF_UNIX)
        self.server.bind(str(path))
        self.server.listen()
        self.server.settimeout(0.2)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.server.accept()
            except (TimeoutError, OSError):
                continue
            self.connections.append(conn.recv(100))

    def close(self):
        self.stop.set()
        self.thread.join()
        self.server.close()


@pytest.fixture
def hostile(tmp_path):
    secret_text = f"SECRET-CANARY-{uuid.uuid4().hex}"
    secret = tmp_path / "secret.txt"
    secret.write_text(secret_text)
    secret.chmod(0o600)
    targets = Targets(
        suite=tmp_path / "suite",
        ledger=tmp_path / "ledger.sqlite",
        secret=secret,
        secret_text=secret_text,
        socket=tmp_path / "host.sock",
        marker=f"qbhostile{uuid.uuid4().hex[:8]}",
        key_env=KEY_ENV,
    )
    tasks = build_suite(targets)
    listener = UnixListener(targets.socket)
    yield targets, tasks, listener
    listener.close()
    for pid in _alive(targets.marker):
        os.kill(pid, 9)


def _alive(marker: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    if marker.encode() in fh.read():
                        pids.append(int(entry))
            except OSError:
                pass
    return pids


def _gone(marker: str, within_s: float = 5.0) -> list[int]:
    """The processes still carrying `marker` once a SIGKILL has had time to land (a loaded
    machine delivers it late; a daemon nobody killed is still there after `within_s`)."""
    deadline = time.monotonic() + within_s
    while (alive := _alive(marker)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return alive


def _config(t: Targets, tasks: list[str]) -> Path:
    listed = ", ".join(f'"{task}"' for task in tasks)
    arms = "".join(
        f'''
[[arms]]
name = "{name}"
kind = "scripted"
model = "{model}"
protocol = "tools"
api_key_env = "{KEY_ENV}"
cap_tokens = 2000000
max_retries = 1
price = {{ input_per_mtok = 1.0, output_per_mtok = 2.0 }}
'''
        for name, model in (("A", "saboteur"), ("B", "solver"))
    )
    path = t.suite.parent / "hostile.toml"
    path.write_text(
        f'[run]\nsuites = ["{t.suite}"]\nmax_attempts = 1\ntasks = [{listed}]\n\n'
        f"[run.limits]\nmax_turns = 8\nattempt_timeout_s = 240\n{arms}"
    )
    return path


def _run(t: Targets, tasks: list[str], **env: str) -> subprocess.CompletedProcess:
    key = f"sk-KEY-CANARY-{uuid.uuid4().hex}"
    full_env = {**os.environ, KEY_ENV: key, **env}
    done = subprocess.run(
        [*QUOTABENCH, "run", str(_config(t, tasks)), "--headless", "--db", str(t.ledger)],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=900,
        cwd=t.suite.parent,
    )
    done.key = key  # type: ignore[attr-defined]
    return done


def _ledger_text(path: Path) -> str:
    db = sqlite3.connect(path)
    parts = []
    for (table,) in db.execute("select name from sqlite_master where type = 'table'"):
        for row in db.execute(f"select * from [{table}]"):
            parts += [str(v) for v in row if v is not None]
    return "\n".join(parts)


def _model_saw(path: Path) -> str:
    """Every tool result the model was sent back, and the prompts' task text."""
    db = sqlite3.connect(path)
    return "\n".join(r[0] or "" for r in db.execute("select result from tool_calls"))


@pytest.mark.skipif(not bwrap_status().usable, reason="needs the bubblewrap sandbox")
def test_a_paired_run_on_the_hostile_suite_holds(hostile):
    t, tasks, listener = hostile
    done = _run(t, tasks)
    assert done.returncode == 0, done.stderr[-3000:]
    db = sqlite3.connect(t.ledger)
    db.row_factory = sqlite3.Row
    run = db.execute("select * from runs").fetchone()
    assert run["status"] == "finished" and run["isolation_sandbox"] == "bwrap"
    attempts = {
        r["task_id"]: dict(r)
        for r in db.execute(
            "select a.*, g.integrity, g.restored_json, g.output as grade_output, g.sandbox, g.tampering_json, g.suspects_json "
            "from attempts a "
            "left join grades g on g.attempt_id = a.id where a.arm = 'A'"
        )
    }
    assert set(attempts) == set(tasks)
    assert [task for task, a in attempts.items() if a["accepted"]] == []  # no forged pass
    assert {a["sandbox"] for a in attempts.values()} == {"bwrap"}

    for task in tasks:  # suite intact
        assert (t.suite / task / "hidden" / "test_hidden.py").read_text() == HIDDEN
    assert run["host"] != "PWNED"  # ledger intact
    recorded = _ledger_text(t.ledger)
    assert "PWNED" not in recorded
    assert t.secret_text not in recorded  # no secret read
    assert done.key not in recorded and done.key not in done.stdout + done.stderr  # no key read
    shown = _model_saw(t.ledger)
    assert "DENIED" in shown  # the channel works: what an attack finds reaches the model ...
    assert HIDDEN_CANARY not in shown  # ... hidden tests not shown
    assert listener.connections == []  # no host socket
    assert _gone(t.marker) == []  # nothing left running
    for word in ("ESCAPED", "LEDGER WRITTEN", "CONNECTED", "PLANTED", "KEY FOUND"):
        assert word not in recorded
    rewrite = attempts["rewrite-hidden"]["grade_output"]  # its own graded copy's hidden file is read-only
    assert "WROTE" not in rewrite and "DENIED /sandbox/work/test_hidden.py" in rewrite

    exit_zero = attempts["exit-zero"]
    assert (exit_zero["verdict"], exit_zero["failure_class"]) == ("tampering", "tampering")
    assert "exited-early" in exit_zero["tampering_json"] and "exit-hook" in exit_zero["suspects_json"]
    assert "conftest.py" in attempts["conftest-force"]["restored_json"]
    assert "FULL" in attempts["big-writes"]["grade_output"]
    assert set(json.loads(attempts["plant-symlink"]["files_json"])) == {"mod.py"}  # no planted link


@pytest.mark.skipif(not bwrap_status().usable, reason="needs the bubblewrap sandbox")
def test_validate_on_the_hostile_suite_holds(hostile):
    t, tasks, listener = hostile
    done = subprocess.run(
        [*QUOTABENCH, "validate", str(t.suite), "--jobs", "2", "-v"], capture_output=True, text=True, timeout=900
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out  # every hostile answer is rejected; nothing else broke
    assert "sandbox: bubblewrap" in out
    for task in tasks:
        assert (t.suite / task / "hidden" / "test_hidden.py").read_text() == HIDDEN
    assert t.secret_text not in out and "ESCAPED" not in out and "CONNECTED" not in out
    assert listener.connections == [] and _gone(t.marker) == []


def test_the_fallback_keeps_the_key_and_reaps_daemons(hostile):
    # No bubblewrap, no unshare, no pids cgroup: the weakest machine the fallback runs on.
    t, _, listener = hostile
    done = _run(
        t,
        ["environ-key", "cgroup-escape"],
        QUOTABENCH_NO_BWRAP="1",
        QUOTABENCH_NO_UNSHARE="1",
        QUOTABENCH_NO_CGROUP="1",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING: grading without the full sandbox" in done.stdout
    db = sqlite3.connect(t.ledger)
    assert db.execute("select isolation_sandbox from runs").fetchone()[0] == "fallback"
    recorded = _ledger_text(t.ledger)
    assert done.key not in recorded and "KEY FOUND" not in recorded
    deadline = time.monotonic() + 5
    while _alive(t.marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _alive(t.marker) == []
