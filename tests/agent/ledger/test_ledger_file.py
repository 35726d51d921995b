"""The ledger is one file once quotabench exits: a finished run's rows are folded out of the WAL,
so copying or archiving the file named by --db carries every row."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys

import pytest

from tests.support.engine_helpers import arm_toml, write_config

pytestmark = pytest.mark.slow


def test_a_finished_runs_ledger_is_whole_in_its_one_file(tmp_path):
    config = write_config(tmp_path, [arm_toml("A", "solver"), arm_toml("B", "wrong")], max_attempts=1)
    db = tmp_path / "run.sqlite"
    done = subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", "run", str(config), "--headless", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (tmp_path / "run.sqlite-wal").exists()
    archived = tmp_path / "archive"
    archived.mkdir()
    shutil.copy(db, archived / "run.sqlite")  # the file alone, as a user would copy it
    copy = sqlite3.connect(archived / "run.sqlite")
    attempts = copy.execute("select count(*) from attempts").fetchone()[0]
    assert attempts == sqlite3.connect(db).execute("select count(*) from attempts").fetchone()[0] > 0
    assert copy.execute("select status from runs").fetchone()[0] == "finished"
