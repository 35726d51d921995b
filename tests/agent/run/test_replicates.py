"""Replicates end to end: one manifest run N times against scripted servers quotabench starts (and
restarts between replicates), a real ledger, and the report's error bars, rotation and
determinism flag (issue 17, seed 003 results 4-6)."""

from __future__ import annotations

import subprocess
import sys

import anyio
import pytest

from agent.config import load_config
from agent.endpoints.scripted_models import TaskFiles, coin_accepts, play
from agent.ledger import Ledger
from agent.metrics.report import build_report, render_report
from agent.run.schedule import run_replicates
from tests.conftest import FIXTURES, ROOT
from tests.support.engine_helpers import arm_toml, write_config
from verifiers.tasks import load_suite

TASKS = ["js-clamp-range", "py-word-count"]
SEEDS = [1, 3]


def _config(tmp_path, n_seeds=SEEDS):
    coin = arm_toml("A", "coin", extra=f"[arms.scripted]\nsession_seeds = {list(n_seeds)}\n")
    solver = arm_toml("B", "solver", protocol="text")
    return write_config(tmp_path, [coin, solver], tasks=TASKS, max_attempts=2)


def test_replicates_restart_servers_and_the_report_flags_within_session_determinism(tmp_path):
    # preconditions: the two sessions toss differently and word their first replies differently
    files = {t.id: TaskFiles.from_task(t) for t in load_suite(FIXTURES / "smoke").tasks}
    tosses = {t: [coin_accepts(s, t) for s in SEEDS] for t in TASKS}
    assert any(len(set(v)) == 2 for v in tosses.values())
    assert all(play("coin", files[t], 0, SEEDS[0]).text != play("coin", files[t], 0, SEEDS[1]).text for t in TASKS)

    config = load_config(_config(tmp_path))
    db = tmp_path / "l.sqlite"
    ledger = Ledger(db)
    run_ids = anyio.run(lambda: run_replicates(config, ledger, 2))

    runs = [ledger.run(r) for r in run_ids]
    assert [r["status"] for r in runs] == ["finished", "finished"]
    assert [(r["replicate"], r["replicates"]) for r in runs] == [(1, 2), (2, 2)]
    assert runs[0]["replicate_set"] and runs[0]["replicate_set"] == runs[1]["replicate_set"]
    sessions = {(a["run_id"], a["name"]): a["server_session_id"] for r in run_ids for a in ledger.arms(r)}
    assert len(set(sessions.values())) == 4  # every arm's server restarted
    for (run_id, arm), session in sessions.items():
        seen = ledger.query(
            "select distinct server_session_id s from calls where run_id = ? and arm = ?", [run_id, arm]
        )
        assert [row["s"] for row in seen] == [session]

    report = build_report(ledger, run_ids, with_cost=False, resamples=2000)
    stats = report["replicate_statistics"]
    a, b = stats["arms"]["A"], stats["arms"]["B"]
    assert a["determinism"]["flag"] == "deterministic within a session, varies across restarts"
    assert a["determinism"]["within"] >= 1 and a["determinism"]["across_identical"] == 0
    assert b["determinism"]["flag"] == "identical across restarts; within a session unknown"
    expected_rotation = {t: v for t, v in tosses.items() if len(set(v)) == 2}
    assert {r["task_id"]: r["accepted"] for r in a["rotation"]["rotating"]} == expected_rotation
    assert a["error_bar"]["acceptance"] == pytest.approx(
        [sum(tosses[t][i] for t in TASKS) / len(TASKS) for i in range(len(SEEDS))]
    )
    assert b["error_bar"]["acceptance"] == [1.0, 1.0] and not b["rotation"]["rotating"]

    text = render_report(report, "text")
    assert "Error bars per model over 2 replicates" in text
    assert "A: deterministic within a session, varies across restarts" in text
    assert "A: replicates back to back in one session would understate" in text
    for task, marks in expected_rotation.items():
        row = next(line for line in text.splitlines() if line.startswith(task))
        assert row.split()[1:3] == ["✓" if m else "✗" for m in marks]
    assert "replicate_statistics" in render_report(report, "json")


@pytest.mark.slow
def test_cli_runs_replicates_headless_and_prints_the_error_bars(tmp_path):
    cfg = _config(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", "run", str(cfg), "--db", str(tmp_path / "l.sqlite"), "--replicates", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 replicates of one manifest" in done.stdout and "Error bars per model over 2 replicates" in done.stdout
    assert "deterministic within a session, varies across restarts" in done.stdout
    runs = Ledger(tmp_path / "l.sqlite").runs()
    assert sorted(r["replicate"] for r in runs) == [1, 2]
    bad = subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", "run", str(cfg), "--replicates", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "not at least 1" in bad.stderr
