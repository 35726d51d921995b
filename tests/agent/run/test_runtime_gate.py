"""Before a run: a task whose runtime this machine lacks is marked `environment` without one
model call, and what is missing is said once (issue 13). A real engine, scripted servers on
loopback, a real SQLite ledger; the machine "without tsx" is a PATH that lacks it."""

from __future__ import annotations

import os
import shutil
import sys

from agent import events as ev
from agent.ledger import Ledger
from agent.metrics import build_report, render_report
from tests.support.engine_helpers import arm_toml, run_sync, write_config


def test_a_task_without_its_runtime_is_environment_and_costs_nothing(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "node", "unshare"):  # unshare: the sandbox's network isolation
        if shutil.which(tool):
            (bin_dir / tool).symlink_to(shutil.which(tool))
    (bin_dir / "python").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", str(bin_dir) + os.pathsep + os.path.dirname(sys.executable))
    cfg = write_config(
        tmp_path,
        [arm_toml("A", "solver"), arm_toml("B", "solver", protocol="text")],
        suites=("smoke", "core"),
        tasks=["py-word-count", "ts-add-months"],
    )
    _, run_id, events = run_sync(cfg, tmp_path / "l.sqlite")
    ledger = Ledger(tmp_path / "l.sqlite")
    rows = {(r["arm"], r["task_id"]): r for r in ledger.attempts(run_id)}
    for arm in ("A", "B"):
        skipped = rows[(arm, "ts-add-months")]
        assert (skipped["failure_class"], skipped["end_reason"], skipped["total_tokens"]) == (
            "environment",
            "runtime_missing",
            0,
        )
        assert ledger.calls(skipped["id"]) == []
        assert ledger.grade(skipped["id"])["environment"] == "`tsx` is not on PATH — npm install -g tsx"
        assert rows[(arm, "py-word-count")]["failure_class"] == "accepted"
    said = [e.text for e in events if isinstance(e, ev.LogMessage) and "tsx" in e.text]
    assert said == [
        "1 typescript task needs `tsx` on PATH: npm install -g tsx — marked environment, no model is called for them"
    ]
    started = {e.task_id for e in events if isinstance(e, ev.AttemptStarted)}
    assert started == {"py-word-count"}
    report = build_report(ledger, [run_id], resamples=100)
    a = report["runs"][0]["arms"][0]["metrics"]
    assert a["taxonomy"]["environment"] == 1 and a["decided"] == 2 and not a["censored"]
    assert "environment 1" in render_report(report, "text")
    ledger.close()
