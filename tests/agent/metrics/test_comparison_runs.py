"""The comparison's guards on real scripted runs through the CLI: a forced run carries its banner
in every format, a censored arm's verdict states what it rests on, runs of one manifest with other
setups are grouped apart, and unequal budgets are named in the verdict."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[3]
SMOKE = ROOT / "fixtures" / "smoke"
QUOTABENCH = [sys.executable, "-m", "tuiapp.cli"]


def _config(tmp_path: Path, name: str, arms: str, *, max_attempts: int = 2) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f'[run]\nsuites = ["{SMOKE}"]\nmax_attempts = {max_attempts}\n\n[run.limits]\nmax_turns = 8\n\n{arms}'
    )
    return path


def _arm(name: str, model: str, *, cap: int = 500_000, extra: str = "") -> str:
    return f'[[arms]]\nname = "{name}"\nkind = "scripted"\nmodel = "{model}"\ncap_tokens = {cap}\n{extra}\n'


def _quotabench(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*QUOTABENCH, *args], capture_output=True, text=True, timeout=600)
    if check:
        assert done.returncode == 0, done.stderr[-2000:]
    return done


def _reports(db: Path, *run_ids: str) -> tuple[str, str, dict]:
    base = ["report", "--db", str(db), "--no-cost", *run_ids]
    text = _quotabench(*base).stdout
    markdown = _quotabench(*base, "--markdown").stdout
    return text, markdown, json.loads(_quotabench(*base, "--json").stdout)


def test_a_run_forced_past_an_invalidating_preflight_says_so_in_every_format(tmp_path):
    db = tmp_path / "f.sqlite"
    config = ROOT / "examples" / "misreport-scripted.toml"
    refused = _quotabench("run", str(config), "--headless", "--db", str(db), check=False)
    assert refused.returncode == 2 and "--force" in refused.stderr
    _quotabench("run", str(config), "--headless", "--force", "--db", str(db))
    forced = sqlite3.connect(db).execute("select id from runs where status = 'finished'").fetchone()[0]
    text, markdown, data = _reports(db, forced)
    banner = "FORCED past an invalidating preflight on arm A (model!: reports solver-v2-preview"
    assert banner in text and banner in markdown
    assert data["runs"][0]["preflight"]["forced_past"] == ["A"]
    assert data["runs"][0]["arms"][0]["setup"]["model_reported"] == "solver-v2-preview"


def test_a_censored_arms_verdict_rests_on_the_tasks_both_finished(tmp_path):
    config = _config(tmp_path, "c", _arm("A", "solver") + _arm("B", "solver", cap=4000))
    db = tmp_path / "c.sqlite"
    live = _quotabench("run", str(config), "--headless", "--db", str(db)).stdout
    text, _, data = _reports(db)
    read = next(line for line in text.splitlines() if line.strip().startswith("read:"))
    assert "both finished" in read and "excluded: B censored (cap hit)" in read
    assert " wins " not in read
    assert "not comparable" in text
    comparison = data["runs"][0]["comparisons"][0]
    assert comparison["verdict"]["winner"] is None
    assert "both finished" in live  # the end-of-run report says the same


def test_runs_of_one_manifest_with_another_model_sampling_or_cap_are_grouped_apart(tmp_path):
    db = tmp_path / "m.sqlite"
    same = _config(tmp_path, "same", _arm("A", "solver") + _arm("B", "solver"))
    other = _config(tmp_path, "other", _arm("A", "solver") + _arm("B", "wrong", cap=50_000, extra="temperature = 0.7"))
    for config in (same, same, other):
        _quotabench("run", str(config), "--headless", "--db", str(db))
    runs = [r for (r,) in sqlite3.connect(db).execute("select id from runs order by created_utc")]
    manifests = {m for (m,) in sqlite3.connect(db).execute("select manifest_sha256 from runs")}
    assert len(manifests) == 1  # one manifest: only the setup tells them apart
    text, _, data = _reports(db, *runs)
    groups = data["setup_groups"]
    assert sorted(len(g["run_ids"]) for g in groups) == [1, 2]
    differences = next(g["differences"] for g in groups if len(g["run_ids"]) == 1)
    assert {
        "arm B model_configured: 'solver' vs 'wrong'",
        "arm B cap_tokens: 500000 vs 50000",
        "arm B temperature: 0.0 vs 0.7",
    } <= set(differences)
    assert "not replicates of the others" in text


def test_direct_against_parallel_at_two_names_the_unequal_budgets(tmp_path):
    arms = _arm("direct", "second-passes") + _arm("par2", "second-passes", extra='strategy = "parallel@2"')
    config = _config(tmp_path, "s", arms, max_attempts=1)
    db = tmp_path / "s.sqlite"
    _quotabench("run", str(config), "--headless", "--db", str(db))
    text, markdown, data = _reports(db)
    for shown in (text, markdown):
        assert "UNEQUAL per-task budgets" in shown
        assert "unequal budgets: direct 1× one attempt's caps, par2 2× one attempt's caps" in shown
    assert "par2 relative to Direct (direct): tokens/task" in text
