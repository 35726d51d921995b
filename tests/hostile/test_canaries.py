"""The canaries alone catch gaming that no rule names: with the code scan switched off, a wrong
answer that makes every assertion true, or forges a passing report for every test, is
`tampering` with a canary finding in every language, and no generic gaming answer passes."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.hostile.canary_attacks import FORCED, GENERIC
from tests.hostile.gaming import build_gaming_suite
from verifiers.grading import SandboxGrader
from verifiers.isolation import bwrap_status
from verifiers.tasks import load_suite

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not bwrap_status().usable, reason="needs the bubblewrap sandbox")]
CANARY_RULES = {"canary-passed", "canary-missing", "canary-misfailed"}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("generic") / "suite"
    build_gaming_suite(root, attacks=GENERIC)
    tasks = load_suite(root).tasks
    grader = SandboxGrader(scan=False)

    def grade(task):
        expected = grader.expected_tests(task)
        assert expected is not None and expected.proven >= 3, task.id  # the reference proved its canaries
        return task.id, grader.grade_overlay(task, task.negative, expected=expected, reset=True)

    with ThreadPoolExecutor(2) as pool:
        return dict(pool.map(grade, tasks))


def test_no_generic_gaming_answer_passes(graded):
    assert set(graded) == set(GENERIC)
    assert {task: g.verdict for task, g in graded.items() if g.verdict == "pass"} == {}


@pytest.mark.parametrize("task", FORCED)
def test_forcing_every_assertion_or_forging_every_report_is_caught_by_the_canaries(graded, task):
    grade = graded[task]
    rules = {f.rule for f in grade.tampering}
    assert grade.verdict == "tampering" and rules & CANARY_RULES, (task, [str(f) for f in grade.tampering])
    canary = next(f for f in grade.tampering if f.rule in CANARY_RULES)
    assert "which the reference fails" in canary.snippet and canary.snippet.startswith("canary `")
    # the base task has two tests, and a grade changes each at most once (in one or two variants)
    assert grade.canaries["seed"] is not None and len(grade.canaries["canaries"]) >= 2
    assert grade.suspects == () or all(f.rule not in CANARY_RULES for f in grade.suspects)


def test_the_honest_answer_passes_every_canary(tmp_path):
    """The same base tasks with the honest `a + b`: a pass, its canaries all failed as the
    reference fails them, in every language."""
    root = tmp_path / "suite"
    build_gaming_suite(root, attacks=GENERIC)
    grader = SandboxGrader(scan=False)
    for task in load_suite(root).tasks:
        grade = grader.grade_overlay(task, task.reference, expected=grader.expected_tests(task), reset=True)
        assert (grade.verdict, grade.tampering) == ("pass", ()), (task.id, [str(f) for f in grade.tampering])
        assert all(c["seen"] and set(c["seen"].values()) == {"failed"} for c in grade.canaries["canaries"]), task.id
