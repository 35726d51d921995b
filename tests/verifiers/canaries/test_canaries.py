"""Canaries without a sandbox: the sites found per language, that every planted file of the
shipped corpus still parses, that a runner's record is read back to the real tests' ids and
places, what a canary's outcome says, and that nothing about a canary marks it as the copy."""

from __future__ import annotations

import ast
import random
import re
from pathlib import Path

import pytest

from tests.support.sites import changed
from verifiers.canaries import node, python, rust
from verifiers.canaries.mutate import Mutator
from verifiers.canaries.plant import CanaryPlan, Observation, plan_for, prove_plan
from verifiers.canaries.pool import pool_for
from verifiers.canaries.proof import Proof
from verifiers.canaries.sites import CONTRADICTION, NEW_INPUT, parse
from verifiers.harness import harness_command
from verifiers.judge import judge
from verifiers.mechanics import grammar_for, syntax_problems, walk
from verifiers.sandbox import RunResult
from verifiers.tasks import load_suite
from verifiers.verdict import RunnerReport, TestResult

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
PY = b"""import pytest

from mod import add


def test_adds():
    assert add(2, 3) == 5


def test_truth():
    assert add(1, 1)


class TestMore:
    def test_raises(self):
        with pytest.raises(ValueError):
            add("a", None)
"""


def test_python_sites_are_the_assertions_expected_sides_and_inputs():
    tests = python.tests_of("test_h.py", PY, frozenset({"mod"}), random.Random(1))
    assert [u.qualifier + u.name for u in tests.units] == ["test_adds", "test_truth", "TestMore::test_raises"]
    adds, truth, raises = tests.units
    kinds = {(s.kind, s.how) for s in adds.sites}
    assert (CONTRADICTION, "number moved") in kinds and (NEW_INPUT, "input changed") in kinds
    new_input = next(s for s in adds.sites if s.kind == NEW_INPUT)
    assert len(new_input.edits) == 2  # a new input and a new expected value for it
    assert [s.how for s in truth.sites] == ["truth flipped"]
    assert b"assert not add(1, 1)" in changed(PY, truth.sites[0])
    swapped = changed(PY, raises.sites[0])
    assert b"pytest.raises(ValueError)" not in swapped and b"pytest.raises(" in swapped


@pytest.mark.parametrize(
    "claim, flipped",
    [
        ("run(2).returncode != 0", "run(2).returncode == 0"),
        ("add(2, 3) < 10", "add(2, 3) >= 10"),
        ("'x' in add(2, 3)", "'x' not in add(2, 3)"),
        ("add(2, 3) == pytest.approx(5.0, abs=1)", "add(2, 3) != pytest.approx(5.0, abs=1)"),
    ],
)
def test_a_claim_that_a_moved_value_could_still_meet_is_only_negated(claim, flipped):
    # `returncode != 2` holds for an honest answer exiting 1 as well as for the reference's 0:
    # only the negation of the real claim is sure to fail for every answer that passes it
    source = f"import pytest\nfrom mod import add, run\n\n\ndef test_it():\n    assert {claim}\n".encode()
    for seed in range(20):
        (unit,) = python.tests_of("test_h.py", source, frozenset({"mod"}), random.Random(seed)).units
        assert [(s.kind, s.how) for s in unit.sites] == [(CONTRADICTION, "comparison flipped")]
        assert f"assert {flipped}".encode() in changed(source, unit.sites[0])


def test_node_and_rust_sites():
    js = b"""import { test } from 'node:test';
import assert from 'node:assert/strict';
import { add } from './mod.mjs';

test('adds', () => {
  assert.equal(add(2, 3), 5);
  assert.ok(add(1, 1));
});
"""
    tests = node.tests_of("h.test.mjs", js, "javascript", random.Random(2))
    assert [u.name for u in tests.units] == ["adds"]
    assert {s.how for s in tests.units[0].sites} >= {"number moved", "truth flipped", "input changed"}
    rs = b"""use m::add;

#[test]
fn adds() {
    assert_eq!(add(2, 3), 5);
    assert!(add(1, 1) > 0);
}

mod more {
    #[test]
    #[should_panic]
    fn panics() {
        m::boom();
    }
}
"""
    tests = rust.tests_of("tests/h.rs", rs, "m", random.Random(3))
    assert [u.qualifier + u.name for u in tests.units] == ["adds", "more::panics"]
    assert b"assert!(!(add(1, 1) > 0))" in changed(
        rs, next(s for s in tests.units[0].sites if s.how == "truth flipped")
    )
    assert [s.how for s in tests.units[1].sites] == ["expected panic removed"]


def _tasks():
    return [t for s in ("core", "controls", "smoke") for t in load_suite(FIXTURES / s).tasks]


@pytest.mark.parametrize("seed", [0, 1])
def test_every_planted_file_of_the_corpus_still_parses(seed):
    planted = 0
    for task in _tasks():
        harnessed = harness_command(task.hidden_cmd)
        pool = pool_for(task, harnessed.runner, harnessed.files, seed)
        assert pool.candidates, task.id
        for rel, data in prove_plan(pool, harnessed.runner).files.items():
            planted += 1
            if rel.endswith(".py"):
                ast.parse(data)
            else:
                grammar = grammar_for(rel)
                assert grammar is not None and syntax_problems(data, grammar) == [], (task.id, rel)
    assert planted >= 50


def test_a_canary_sits_right_before_or_right_after_the_test_it_copies():
    # anywhere else it could precede what the test needs when it is defined (a table its
    # parametrize decorator reads: sh-export-users' BAD_LINES), and collection would fail
    sides = set()
    for task in [t for t in _tasks() if harness_command(t.hidden_cmd).runner == "pytest"]:
        harnessed = harness_command(task.hidden_cmd)
        pool = pool_for(task, "pytest", harnessed.files, 3)
        proofs = {c.key: Proof({"": ("failed", "assertion")}) for c in pool.candidates}
        for seed in range(6):
            plan = plan_for(pool, "pytest", proofs, seed)
            copies = {p.qualified for p in plan.planted}
            for planted in plan.planted:
                tree = ast.parse(plan.files[planted.file])
                body = tree.body
                for part in planted.qualifier.split("::")[:-1]:
                    body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == part).body
                names = [getattr(n, "name", None) for n in body]
                at, original = names.index(planted.name), names.index(planted.source.split("::")[-1])
                between = names[min(at, original) + 1 : max(at, original)]
                assert all(planted.qualifier + str(n) in copies for n in between), (task.id, planted.name, between)
                sides.add(at < original)
    assert sides == {True, False}


def _pytest_task():
    return next(t for t in _tasks() if t.id == "py-free-slots")


def test_a_planted_run_is_read_back_to_the_real_tests():
    task = _pytest_task()
    pool = pool_for(task, "pytest", ("test_hidden.py",), 7)
    proofs = {c.key: Proof({"": ("failed", "assertion")}) for c in pool.candidates}
    plan = plan_for(pool, "pytest", proofs, seed=11)
    assert 1 <= len(plan.planted) <= 6
    planted = plan.files["test_hidden.py"].decode()
    original = (task.hidden / "test_hidden.py").read_text()
    tests = {}
    for unit in pool.files["test_hidden.py"].units:
        line = next(i for i, text in enumerate(planted.splitlines()) if text.startswith(f"def {unit.name}("))
        tests[f"test_hidden.py::{unit.name}"] = TestResult(
            "passed", f"test_hidden.py:{line}", f"{unit.name}:{line + 1}:d"
        )
    for canary in plan.planted:
        tests[f"test_hidden.py::{canary.name}"] = TestResult("failed", "test_hidden.py:1", failure="assertion")
    report = RunnerReport("pytest", started=True, finished=True, exit_code=1, tests=tests, passed=len(tests), failed=0)
    real, seen = plan.restore(report)
    for test_id, result in real.tests.items():
        name = test_id.split("::")[1]
        line = next(i for i, text in enumerate(original.splitlines()) if text.startswith(f"def {name}("))
        assert result.location == f"test_hidden.py:{line}" and result.code == f"{name}:{line + 1}:d"
    assert len(real.tests) == len(pool.files["test_hidden.py"].units) and real.passed == len(real.tests)
    assert {o.planted.key for o in seen} == {p.key for p in plan.planted}
    assert plan.findings(seen, proofs) == []


def _observation(plan: CanaryPlan, outcome: str | None, failure: str | None = "assertion") -> list[Observation]:
    seen = () if outcome is None else (("", TestResult(outcome, failure=failure)),)
    return [Observation(p, seen) for p in plan.planted]


def test_what_a_canary_says():
    task = _pytest_task()
    pool = pool_for(task, "pytest", ("test_hidden.py",), 7)
    proofs = {c.key: Proof({"": ("failed", "assertion")}) for c in pool.candidates}
    plan = plan_for(pool, "pytest", proofs, seed=3)
    rules = {
        outcome: {f.rule for f in plan.findings(_observation(plan, outcome), proofs)}
        for outcome in ("failed", "passed", "skipped", None)
    }
    assert rules == {
        "failed": set(),
        "passed": {"canary-passed"},
        "skipped": {"canary-missing"},
        None: {"canary-missing"},
    }
    passed = plan.findings(_observation(plan, "passed"), proofs)[0]
    assert re.match(r"canary `test_\w+` expects .+, which the reference fails; it passed$", passed.snippet)
    other = plan.findings(_observation(plan, "failed", "builtins.TypeError"), proofs)
    kinds = {p.kind for p in plan.planted}
    assert {f.rule for f in other} == ({"canary-misfailed"} if CONTRADICTION in kinds else set())


def test_a_pass_needs_the_record_and_the_canaries():
    task = _pytest_task()
    pool = pool_for(task, "pytest", ("test_hidden.py",), 7)
    proofs = {c.key: Proof({"": ("failed", "assertion")}) for c in pool.candidates}
    plan = plan_for(pool, "pytest", proofs, seed=5)
    real = {f"test_hidden.py::{u.name}": TestResult("passed") for u in pool.files["test_hidden.py"].units}

    def grade(canaries: str, exit_status: int) -> str:
        tests = dict(real) | {
            f"test_hidden.py::{p.name}": TestResult(canaries, failure="assertion") for p in plan.planted
        }
        report = RunnerReport("pytest", started=True, finished=True, exit_code=1, tests=tests, passed=0, failed=0)
        result = RunResult(exit_status, 10, "")
        return judge(result, harness_command(task.hidden_cmd), report, None, [], plan).verdict

    assert grade("failed", 1) == "pass"  # every canary failed as proven: the run exits 1, and passes
    assert grade("failed", 0) == "tampering"  # exit 0 with the canaries failed: not the runner's status
    plan.proving = False
    from verifiers.verdict import Expected

    expected = Expected(real, proofs)
    tests = dict(real) | {f"test_hidden.py::{p.name}": TestResult("passed") for p in plan.planted}
    report = RunnerReport("pytest", started=True, finished=True, exit_code=0, tests=tests, passed=0, failed=0)
    judged = judge(RunResult(0, 10, ""), harness_command(task.hidden_cmd), report, expected, [], plan)
    assert judged.verdict == "tampering" and {f.rule for f in judged.tampering} == {"canary-passed"}


def test_nothing_about_a_change_marks_the_copy():
    """Numbers move either way (and never below zero), strings become strings of the same kind,
    collections lose or gain an element, `vec![]` is never emptied."""
    source = b'x = [1, 2, 3]\ny = "5"\nz = "bash"\n'
    root = parse(source, "python")
    up = down = 0
    for seed in range(200):
        mutator = Mutator(random.Random(seed), source, root)
        moved = int(mutator.number(b"5"))
        assert moved >= 0 and moved != 5
        up, down = up + (moved > 5), down + (moved < 5)
        string = next(n for n in walk(root) if n.type == "string" and source[n.start_byte : n.end_byte] == b'"5"')
        assert mutator.string(source, string) != b'"bash"'
        listed = next(n for n in walk(root) if n.type == "list")
        assert mutator.collection(source, listed).count(b",") in (1, 3)
    assert up > 40 and down > 40
    tree = next(n for n in walk(parse(b"fn f() { vec![1]; }", "rust")) if n.type == "token_tree" and n.text == b"[1]")
    assert all(Mutator(random.Random(s), b"", tree).vec(b"fn f() { vec![1]; }", tree) == b"[1, 1]" for s in range(20))


def test_the_pool_is_the_same_for_a_seed_and_another_for_another():
    task = _pytest_task()
    keys = [c.key for c in pool_for(task, "pytest", ("test_hidden.py",), 5).candidates]
    assert keys == [c.key for c in pool_for(task, "pytest", ("test_hidden.py",), 5).candidates]
    assert keys != [c.key for c in pool_for(task, "pytest", ("test_hidden.py",), 6).candidates]


PEEKED = b"""import mod


def test_adds():
    assert mod.add(2, 3) == 5


def test_adds_negatives():
    assert mod.add(-1, 1) == 0
"""


@pytest.mark.parametrize("seed", range(60))
def test_a_changed_value_is_new_to_its_test(seed):
    """A copy's expectation never equals another value of its test: a test holding 2 and 3 that
    came to expect 2 would keep one constant 2, and code that returns the caller's last constant
    (the gaming suite's py-frame-peek) would miss only the copy, as if honest."""
    root = parse(PEEKED, "python")
    tests = python.tests_of("test_h.py", PEEKED, frozenset({"mod"}), random.Random(seed))
    for unit in tests.units:
        for site in unit.sites:
            for start, _end, new in site.edits:
                held = {
                    abs(float(n.text))
                    for n in walk(root)
                    if n.type == "integer" and unit.start <= n.start_byte < unit.end and n.start_byte != start
                }
                assert abs(float(new)) not in held, (site.how, changed(PEEKED, site)[unit.start : unit.end + 4])
