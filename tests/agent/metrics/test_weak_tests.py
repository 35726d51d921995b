"""The weak-test view: the suite's mutation score (Wilson, against scipy), each arm graded by the
visible tests alone vs the hidden tests (McNemar, against scipy's exact binomial test), the gap
under each grader, and a real scripted run whose suite was scored reading it back in the report."""

from __future__ import annotations

import json

import pytest
from scipy.stats import binomtest

from agent.ledger import Ledger
from agent.metrics.grader_view import gap_under_graders, grader_pair, visible_accepted
from agent.metrics.mutation import TaskMutation, mutation_section, suite_mutation
from agent.metrics.outcome import TaskOutcome
from agent.metrics.report import build_report, render_report
from tests.conftest import FIXTURES
from tests.support.engine_helpers import arm_toml, run_sync, write_config
from verifiers.mutants.cache import ScoreCache, cache_key
from verifiers.mutants.outcome import MutantResult, TaskScore
from verifiers.tasks import load_suite


def _tasks(counts: list[tuple[int, int]]) -> list[TaskMutation]:
    return [TaskMutation(f"t{i:02d}", "python", k + s, k, s) for i, (k, s) in enumerate(counts)]


def test_suite_score_pools_mutants_with_scipys_wilson_interval() -> None:
    # 45 tasks, 20 mutants each: 900 counted, 819 killed (0.91)
    counts = [(18, 2)] * 36 + [(19, 1)] * 9
    suite = suite_mutation(_tasks(counts))
    assert (suite.tasks, suite.killed, suite.counted) == (45, 36 * 18 + 9 * 19, 900)
    ci = binomtest(suite.killed, suite.counted).proportion_ci(method="wilson")
    assert suite.interval == pytest.approx((ci.low, ci.high), abs=1e-6)  # z = 1.96 vs 1.95996...
    assert suite.statement().startswith(
        f"hidden tests: mutation score {suite.score:.2f} [{ci.low:.2f}, {ci.high:.2f}] over 45 tasks"
    )
    assert not suite.weak


def test_weakest_tasks_come_first_and_only_those_below_the_share_are_weak() -> None:
    suite = suite_mutation(_tasks([(9, 1), (3, 7), (7, 3), (0, 0)]), below=0.8)
    assert [t.task_id for t in suite.weakest] == ["t01", "t02", "t00"]  # t03 counted nothing
    assert [t.task_id for t in suite.weak] == ["t01", "t02"]
    assert suite.tasks == 3


def _outcomes(accepted: str) -> list[TaskOutcome]:
    return [
        TaskOutcome(f"t{i}", c == "1", 1 if c == "1" else None, "accepted" if c == "1" else "reasoning", True, 1, 10)
        for i, c in enumerate(accepted)
    ]


def _attempts(visible: str) -> list[dict]:
    return [{"task_id": f"t{i}", "visible_passed": int(c == "1"), "stage": "attempt"} for i, c in enumerate(visible)]


def _visible(attempts: list[dict]) -> dict[str, bool | None]:
    return visible_accepted(list(dict.fromkeys(r["task_id"] for r in attempts)), attempts)


def test_each_arm_is_graded_twice_and_compared_with_exact_mcnemar() -> None:
    # 12 tasks: the visible tests accept 10, the hidden 6; 5 visible-only, 1 hidden-only
    hidden = "111111000000"
    visible = "111110111110"
    pair = grader_pair("A", _outcomes(hidden), _visible(_attempts(visible)))
    assert (pair.n, pair.visible_accepted, pair.hidden_accepted) == (12, 10, 6)
    assert (pair.mcnemar.only_a, pair.mcnemar.only_b) == (5, 1)
    assert pair.mcnemar.p_value == pytest.approx(binomtest(1, 6, 0.5).pvalue)
    assert pair.drop == pytest.approx(4 / 12) and pair.relative_drop == pytest.approx(0.4)


def test_the_gap_under_the_visible_tests_alone() -> None:
    a = grader_pair("A", _outcomes("1111110000"), _visible(_attempts("1111111111")))  # flattered: 10 vs 6
    b = grader_pair("B", _outcomes("1111111100"), _visible(_attempts("1111111100")))  # honest: 8 vs 8
    gap = gap_under_graders(
        "A",
        _outcomes("1111110000"),
        _visible(_attempts("1111111111")),
        "B",
        _outcomes("1111111100"),
        _visible(_attempts("1111111100")),
    )
    assert gap is not None and a.drop == pytest.approx(0.4) and b.drop == 0
    assert gap.hidden_gap == pytest.approx(0.2) and gap.visible_gap == pytest.approx(-0.2)
    assert gap.hidden.p_value == pytest.approx(binomtest(0, 2, 0.5).pvalue)


def test_tasks_whose_visible_tests_never_ran_are_left_out_and_counted() -> None:
    attempts = [
        {"task_id": "t0", "visible_passed": 1, "stage": "attempt"},
        {"task_id": "t1", "visible_passed": 0, "stage": "attempt"},
        {"task_id": "t2", "visible_passed": None, "stage": "attempt"},  # never ran them: unknown
        {"task_id": "t3", "visible_passed": None, "stage": "attempt"},
        {"task_id": "t3", "visible_passed": 1, "stage": "attempt"},  # a later attempt passed
    ]
    pair = grader_pair("A", _outcomes("1011"), _visible(attempts))
    assert (pair.n, pair.unknown, pair.visible_accepted, pair.hidden_accepted) == (3, 1, 2, 2)
    gap = gap_under_graders(
        "A", _outcomes("1011"), _visible(attempts), "B", _outcomes("1111"), _visible(_attempts("1111"))
    )
    assert gap is not None and gap.n == 3


def _score(task_id: str, language: str, key: str, killed: int, survived: int) -> TaskScore:
    mutants = [
        MutantResult(f"m{i}", "constant", "f", i, "f:1 constant", "killed" if i < killed else "survived", "fail")
        for i in range(killed + survived)
    ]
    return TaskScore(task_id, language, key, mutants)


@pytest.mark.slow
def test_a_scored_suite_is_recorded_by_the_run_and_stated_by_the_report(tmp_path) -> None:
    cache = ScoreCache(tmp_path / "mutants")
    smoke = load_suite(FIXTURES / "smoke").tasks
    for task in smoke:
        cache.put(_score(task.id, task.language, cache_key(task, 40), 9, 1))
    cfg = write_config(tmp_path, [arm_toml("A", "solver"), arm_toml("B", "solver")])
    cfg.write_text(cfg.read_text() + '\n[validate]\ncache_dir = "mutants"\n')
    _, run_id, _ = run_sync(cfg, tmp_path / "l.sqlite")
    ledger = Ledger(tmp_path / "l.sqlite")
    rows = ledger.mutation_scores(run_id)
    assert [r["task_id"] for r in rows] == sorted(t.id for t in smoke)
    section = mutation_section(rows)
    assert section is not None and (section["killed"], section["counted"]) == (27, 30)
    report = build_report(ledger, [run_id], resamples=0)
    text = render_report(report, "text")
    assert "hidden tests: mutation score 0.90 [0.74, 0.97] over 3 tasks" in text
    assert "visible tests alone accept" in text
    data = json.loads(render_report(report, "json"))
    (run,) = data["runs"]
    assert run["hidden_tests"]["score"] == pytest.approx(0.9)
    assert [a["arm"] for a in run["grader_view"]["arms"]] == ["A", "B"]
    assert run["grader_view"]["gaps"][0]["n"] == len(smoke)
