"""`quotabench validate --mutants` from the command line: rows, survivors and summary at 80
columns, the exit status, the [validate] config table and bad arguments as one line."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest

from tests.support.verifier_tasks import ONE_CASE, planted_clamp_task
from tuiapp.cli import main
from tuiapp.cli.mutants import ProgressLine
from verifiers.mutants.runner import Progress


def test_a_weak_task_exits_1_with_its_survivors_and_the_cache_answers_the_second_run(tmp_path, capsys):
    suite = tmp_path / "suite"
    planted_clamp_task(suite, ONE_CASE, "weak-one")
    argv = ["validate", "--mutants", str(suite), "--jobs", "2", "--cache-dir", str(tmp_path / "cache")]
    assert main(argv) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    row = next(line for line in lines if line.startswith("weak-one"))
    assert row.endswith("weak")
    assert "survived: mod.py:" in out and "weakest first: weak-one" in out
    assert "hidden tests: mutation score" in out
    assert main(argv) == 1
    again = capsys.readouterr().out
    assert next(line for line in again.splitlines() if line.startswith("weak-one")) == row
    assert list((tmp_path / "cache").glob("*.json"))


def test_the_validate_table_of_a_run_config_sets_the_threshold_and_the_suites(tmp_path, capsys):
    suite = tmp_path / "suite"
    planted_clamp_task(suite, ONE_CASE, "weak-two")
    config = tmp_path / "run.toml"
    config.write_text(
        '[run]\nsuites = ["suite"]\n\n[[arms]]\nname = "A"\nkind = "scripted"\nmodel = "solver"\n\n'
        '[validate]\nmutants = true\nweak_below = 0.05\nmax_mutants = 4\ncache_dir = "cache"\n'
    )
    assert main(["validate", "--config", str(config)]) == 0  # 0.05: nothing is weak
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("weak-two"))
    assert row.split()[2] == "4" and not row.endswith("weak")
    assert list((tmp_path / "cache").glob("*.json"))


@pytest.mark.parametrize(
    ("extra", "message"),
    [(["--weak-below", "1.5"], "--weak-below 1.5"), (["--max-mutants", "0"], "--max-mutants 0")],
)
def test_bad_settings_are_one_line(tmp_path: Path, capsys, extra: list[str], message: str) -> None:
    assert main(["validate", "--mutants", str(tmp_path), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_line_is_drawn_on_a_terminal_only() -> None:
    progress = Progress(tasks=3, tasks_done=1, mutants=20, mutants_done=5, started=time.monotonic() - 10)
    terminal = _Terminal()
    line = ProgressLine(terminal)
    line.draw(progress)
    drawn = terminal.getvalue()
    assert drawn.startswith("\r[") and "tasks 1/3 mutants 5/20 ETA 0m30s" in drawn and "\n" not in drawn
    line.print("a row")
    assert terminal.getvalue().endswith("\r\x1b[Ka row\n")  # the bar is cleared before a row
    piped = io.StringIO()
    ProgressLine(piped).draw(progress)
    assert piped.getvalue() == ""
