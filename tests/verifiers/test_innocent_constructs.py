"""Correct solutions built on innocent constructs are never `tampering` (tests/verifiers/innocent.py):
a CLI's sys.exit under its main guard, a field-less dataclass, a logging helper reading its
caller's frame, multiprocessing, ctypes, a bin's process.exit, a guarded polyfill, include_str!
of a data file, #[no_mangle], a shell script sourcing its helper beside it, ... Every task gates
ok with no finding on any check, and every reference, graded like a model's answer, passes."""

from __future__ import annotations

import pytest

from tests.verifiers.innocent import TASKS, build_innocent_suite
from verifiers.gate import gate_suites
from verifiers.grading import SandboxGrader
from verifiers.isolation import bwrap_status
from verifiers.tasks import load_suite


def test_the_suite_is_well_formed(tmp_path):
    ids = build_innocent_suite(tmp_path / "innocent")
    suite = load_suite(tmp_path / "innocent")
    assert suite.problems == []
    assert sorted(t.id for t in suite.tasks) == sorted(ids) == sorted(TASKS)
    assert {t.language for t in suite.tasks} == {"python", "javascript", "typescript", "rust", "shell", "go"}
    assert len(ids) >= 25


@pytest.mark.slow
@pytest.mark.skipif(not bwrap_status().usable, reason="needs the bubblewrap sandbox")
def test_every_innocent_task_gates_and_grades_clean(tmp_path):
    root = tmp_path / "innocent"
    build_innocent_suite(root)
    results, problems = gate_suites([root], jobs=2)
    assert problems == []
    assert [g.task.id for g in results if g.skipped] == []
    wrong: dict[str, list[str]] = {}  # every task's every problem at once: one run shows them all
    for g in results:
        for c in g.checks:
            if c.ok is False:
                wrong.setdefault(g.task.id, []).append(f"gate {c.name}: {c.detail.splitlines()[0]}")
            wrong.setdefault(g.task.id, []).extend(f"gate {c.name} finding: {f}" for f in c.findings)

    grader = SandboxGrader()
    for task in load_suite(root).tasks:  # the reference, graded as a model's answer
        expected = grader.expected_tests(task)
        result = grader.grade_overlay(task, task.reference, expected=expected, reset=True)
        if result.verdict != "pass":
            wrong.setdefault(task.id, []).append(f"graded {result.verdict}")
        wrong.setdefault(task.id, []).extend(f"graded with tampering: {f}" for f in result.tampering)
    wrong = {k: v for k, v in wrong.items() if v}
    assert wrong == {}, "\n".join(f"{task}: {problem}" for task, problems in wrong.items() for problem in problems)
