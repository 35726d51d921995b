"""The gate, through the real `quotabench validate` command."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.support.verifier_tasks import python_task
from verifiers.gate import gate_task
from verifiers.tasks import load_task

HIDDEN = "import mod\n\ndef test_add():\n    assert mod.add(2, 3) == 5\n"


def validate(*args):
    return subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", "validate", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=Path(__file__).resolve().parents[2],
    )


def test_good_task_passes_every_check(tmp_path):
    gate = gate_task(
        load_task(
            python_task(
                tmp_path,
                HIDDEN,
                alternate={"mod.py": "def add(a, b):\n    return sum((a, b))\n"},
                negative={"mod.py": "def add(a, b):\n    return a * b\n"},
            )
        )
    )
    assert gate.ok, [(c.name, c.detail) for c in gate.checks]
    assert [c.ok for c in gate.checks] == [True] * 6


def test_broken_reference_fails_validate_and_names_the_task(tmp_path):
    suite = tmp_path / "suite"
    python_task(suite, HIDDEN, id="fine")
    broken = python_task(suite, HIDDEN, id="broken-ref")
    (broken / "reference" / "mod.py").write_text("def add(a, b):\n    return a * b\n")
    done = validate(suite, "--jobs", "2")
    assert done.returncode != 0
    assert "FAILED broken-ref" in done.stderr and "reference_passes" in done.stderr
    assert "FAILED fine" not in done.stderr
    assert "1 of 2 tasks gate cleanly" in done.stdout


def test_already_solved_task_fails_the_untouched_check(tmp_path):
    root = python_task(tmp_path, HIDDEN)
    (root / "workspace" / "mod.py").write_text("def add(a, b):\n    return a + b\n")
    gate = gate_task(load_task(root))
    assert [c.name for c in gate.failed()] == ["untouched_fails"]


def test_unparseable_reference_is_flagged(tmp_path):
    root = python_task(tmp_path, "def test_nothing():\n    pass\n")
    (root / "reference" / "extra.py").write_text("def broken(:\n")
    gate = gate_task(load_task(root))
    assert "reference_parses" in [c.name for c in gate.failed()]


def test_alternate_that_fails_is_reported(tmp_path):
    root = python_task(tmp_path, HIDDEN, alternate={"mod.py": "def add(a, b):\n    return a - b\n"})
    gate = gate_task(load_task(root))
    assert [c.name for c in gate.failed()] == ["alternate_passes"]


def test_negative_patch_that_passes_is_reported(tmp_path):
    root = python_task(tmp_path, HIDDEN, negative={"mod.py": "def add(a, b):\n    return b + a\n"})
    gate = gate_task(load_task(root))
    assert [c.name for c in gate.failed()] == ["negative_fails"]


def test_broken_task_folder_is_listed_not_crashed(tmp_path):
    suite = tmp_path / "suite"
    python_task(suite, HIDDEN, id="ok-task")
    (suite / "junk").mkdir()
    done = validate(suite)
    assert done.returncode != 0
    assert "BROKEN task" in done.stderr and "junk" in done.stderr and "no task.toml" in done.stderr


@pytest.mark.slow
def test_shipped_smoke_and_controls_gate_cleanly():
    done = validate(FIXTURES / "smoke", FIXTURES / "controls", "--jobs", "2")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_docs_single_script_verifier_example_works(tmp_path):
    # docs/tasks.md: hidden/verify.sh lands at the workspace root, so the command is `bash verify.sh`
    from tests.support.verifier_tasks import make_task

    docs = (Path(__file__).resolve().parents[2] / "docs" / "tasks.md").read_text()
    assert 'hidden_cmd = "bash verify.sh"' in docs and 'hidden_cmd = "bash hidden/verify.sh"' not in docs
    verify = "python -c 'import mod, sys; sys.exit(0 if mod.add(2, 3) == 5 else 1)'\n"
    root = make_task(
        tmp_path,
        workspace={"mod.py": "def add(a, b):\n    return a - b\n"},
        hidden={"verify.sh": verify},
        reference={"mod.py": "def add(a, b):\n    return a + b\n"},
        visible_cmd="python -c 'import mod'",
        hidden_cmd="bash verify.sh",
    )
    gate = gate_task(load_task(root))
    assert gate.ok, [(c.name, c.detail) for c in gate.checks]
