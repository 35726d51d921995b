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


SKIPPING = (
    "import pytest\n\nimport mod\n\ndef test_add():\n    assert mod.add(2, 3) == 5\n\n"
    "@pytest.mark.skip(reason='later')\ndef test_later():\n    assert mod.add(1, 1) == 2\n"
)


def test_a_reference_whose_hidden_run_skips_tests_is_refused_with_them_named(tmp_path):
    gate = gate_task(load_task(python_task(tmp_path, SKIPPING, id="py-skips")))
    failed = {c.name: c.detail for c in gate.failed()}
    assert list(failed) == ["reference_passes"]
    assert failed["reference_passes"].startswith(
        "py-skips: 1 of 2 hidden tests skipped (skip or xfail marks): test_hidden.py::test_later"
    )


def test_a_pass_with_tests_the_reference_skipped_too_is_not_accepted(tmp_path):
    from verifiers.grading import SandboxGrader

    task = load_task(python_task(tmp_path, SKIPPING))
    grade = SandboxGrader().grade(task, task.reference)  # the reference's own answer, graded as a model's
    assert grade.verdict == "fail" and grade.tampering == ()
    assert [f.rule for f in grade.suspects if f.rule == "skipped-tests"] == ["skipped-tests"]
    assert grade.tests["test_hidden.py::test_later"] == "skipped"


def test_no_hidden_test_run_on_the_untouched_workspace_is_a_refusal_that_says_why(tmp_path):
    # The stub lacks the function: the test file cannot even import, so no test ran.
    hidden = "from mod import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    root = python_task(tmp_path, hidden)
    (root / "workspace" / "mod.py").write_text("def plus(a, b):\n    return a - b\n")
    (root / "workspace" / "test_visible.py").write_text("def test_v():\n    pass\n")
    gate = gate_task(load_task(root))
    failed = {c.name: c.detail for c in gate.failed()}
    assert list(failed) == ["untouched_fails"]
    first, *rest = failed["untouched_fails"].splitlines()
    assert first.startswith("no hidden test ran on the untouched workspace (collection error)")
    # the line that says why survives, though pytest prints a long tail after it
    assert any("cannot import name 'add'" in line for line in rest), rest


@pytest.mark.slow
def test_a_rust_reference_with_ignored_tests_is_refused(tmp_path):
    from tests.support.verifier_tasks import make_task

    cargo = '[package]\nname = "adder"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
    tests = (
        "use adder::add;\n\n#[test]\nfn one() {\n    assert_eq!(add(1, 2), 3);\n}\n\n"
        "#[test]\n#[ignore]\nfn two() {\n    assert_eq!(add(2, 2), 4);\n}\n\n"
        "#[test]\n#[ignore]\nfn three() {\n    assert_eq!(add(3, 2), 5);\n}\n"
    )
    root = make_task(
        tmp_path,
        id="rs-ignores",
        language="rust",
        workspace={
            "Cargo.toml": cargo,
            "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
            "tests/visible.rs": "use adder::add;\n\n#[test]\nfn v() {\n    assert_eq!(add(0, 0), 0);\n}\n",
        },
        hidden={"tests/hidden.rs": tests},
        reference={"src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"},
        visible_cmd="cargo test --offline -q --test visible",
        hidden_cmd="cargo test --offline -q --test hidden",
        timeout_s=120,
    )
    gate = gate_task(load_task(root))
    failed = {c.name: c.detail for c in gate.failed()}
    assert list(failed) == ["reference_passes"]
    assert failed["reference_passes"].startswith("rs-ignores: 2 of 3 hidden tests skipped (#[ignore]): three, two")


def test_a_rust_reference_only_tree_sitter_rejects_gates_cleanly_with_a_grammar_gap_note(tmp_path):
    from tests.support.verifier_tasks import rust_dyn_lifetime_task

    root = rust_dyn_lifetime_task(tmp_path)
    done = validate(root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 of 1 tasks gate cleanly" in done.stdout
    (note,) = [line for line in done.stderr.splitlines() if line.startswith("NOTE ")]
    assert note.startswith("NOTE rs-dyn-lifetime reference_parses: grammar gap: src/lib.rs:2:16: syntax_error")
    assert "rustc accepted it" in note


def test_a_rust_reference_rustc_rejects_is_still_refused_as_unparseable(tmp_path):
    from tests.support.verifier_tasks import LAZY_DYN, rust_dyn_lifetime_task

    broken = LAZY_DYN.replace("(self.f)()\n", "(self.f)(\n")  # rustc rejects it too
    gate = gate_task(load_task(rust_dyn_lifetime_task(tmp_path, broken, id="rs-broken")))
    failed = {c.name: c for c in gate.failed()}
    assert {"reference_passes", "reference_parses"} <= set(failed)
    assert "grammar gap" not in failed["reference_parses"].detail and not failed["reference_parses"].notes


def test_hidden_tests_that_time_out_on_the_untouched_workspace_say_so_not_already_solved(tmp_path):
    root = python_task(tmp_path / "suite", HIDDEN, timeout_s=3)
    (root / "workspace" / "mod.py").write_text("def add(a, b):\n    while True:\n        pass\n")
    (root / "workspace" / "test_visible.py").write_text("def test_v():\n    pass\n")
    gate = gate_task(load_task(root))
    failed = {c.name: c.detail for c in gate.failed()}
    assert list(failed) == ["untouched_fails"]
    first = failed["untouched_fails"].splitlines()[0]
    assert first.startswith("hidden tests timed out on the untouched workspace: they did not finish within "), first
    assert "raise timeout_s in task.toml, or fix the tests" in first
    assert "already solved" not in failed["untouched_fails"]
