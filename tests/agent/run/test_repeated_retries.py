"""A retry that cannot differ is counted: at temperature 0 a task's second attempt sends the
first's request byte for byte, and a deterministic endpoint answers it the same; retry_seed
makes the retry a different request (a real scripted run, the CLI, the report)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
SMOKE = Path(__file__).resolve().parents[3] / "fixtures" / "smoke"
QUOTABENCH = [sys.executable, "-m", "tuiapp.cli"]


def _run(tmp_path: Path, extra: str) -> dict:
    tmp_path.mkdir()
    config = tmp_path / "r.toml"
    config.write_text(
        f'[run]\nsuites = ["{SMOKE}"]\nmax_attempts = 2\n\n[run.limits]\nmax_turns = 6\n\n'
        '[[arms]]\nname = "A"\nkind = "scripted"\nmodel = "solver"\ncap_tokens = 500000\n\n'
        f'[[arms]]\nname = "B"\nkind = "scripted"\nmodel = "wrong"\ncap_tokens = 500000\n{extra}'
    )
    db = tmp_path / "r.sqlite"
    done = subprocess.run(
        [*QUOTABENCH, "run", str(config), "--headless", "--db", str(db)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = subprocess.run(
        [*QUOTABENCH, "report", "--db", str(db), "--no-cost", "--json"], capture_output=True, text=True
    )
    text = subprocess.run([*QUOTABENCH, "report", "--db", str(db), "--no-cost"], capture_output=True, text=True).stdout
    return {"json": json.loads(report.stdout), "text": text, "db": db}


def test_identical_retries_are_counted_and_retry_seed_ends_them(tmp_path):
    plain = _run(tmp_path / "plain", "")
    repeats = plain["json"]["runs"][0]["repeated_retries"]
    assert repeats["B"]["repeated"] == 3 and repeats["B"]["same_reply"] == 3 and "A" not in repeats
    assert (
        "B: 3 retries repeated the previous attempt's request at temperature 0; 3 got the same first reply"
        in plain["text"]
    )

    seeded = _run(tmp_path / "seeded", "retry_seed = true\n")
    assert seeded["json"]["runs"][0]["repeated_retries"] == {}
    db = sqlite3.connect(seeded["db"])
    sampling = json.loads(db.execute("select sampling_json from arms where name = 'B'").fetchone()[0])
    assert sampling["retry_seed"] is True
