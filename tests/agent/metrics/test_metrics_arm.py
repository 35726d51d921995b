"""arm.py on small real ledgers: seed 002's metrics, censoring, taxonomy, visible flattery."""

from __future__ import annotations

import pytest

from agent.metrics.arm import arm_metrics, spread, task_outcomes


def metrics_of(ledger, run_id, name):
    arm_row = next(a for a in ledger.arms(run_id) if a["name"] == name)
    attempts = [r for r in ledger.attempts(run_id) if r["arm"] == name]
    return arm_metrics(arm_row, ledger.tasks(run_id), attempts)


def test_seed_002_metrics(build, ledger):
    run = build.run(["t1", "t2", "t3", "t4"])
    build.arm(run, "A", ["P", "RP", "RRR", "MMP"], tokens=1000)
    m, outcomes = metrics_of(ledger, run, "A")
    assert (m.accepted, m.n_tasks, m.acceptance) == (3, 4, 0.75)
    assert m.total_tokens == 9000 and m.n_attempts == 9
    assert m.qap == 3000
    assert m.wasted_tokens == 6000 and m.retry_tax == pytest.approx(6 / 9)
    assert (m.first_try, m.first_try_share) == (1, pytest.approx(1 / 3))
    assert not m.censored and m.unfinished == []
    assert [o.accepted_on for o in outcomes] == [1, 2, None, 3]
    assert m.taxonomy["accepted"] == 3 and m.taxonomy["reasoning"] == 1
    assert m.malformed_tool_calls == 2 and m.calls == 18


def test_taxonomy_uses_last_attempt(build, ledger):
    run = build.run(["t1", "t2", "t3", "t4", "t5"])
    build.arm(run, "A", ["RM", "MT", "E", "H", "RE"])
    m, _ = metrics_of(ledger, run, "A")
    assert {k: v for k, v in m.taxonomy.items() if v} == {
        "mechanics": 1,
        "timeout": 1,
        "environment": 2,
        "harness_error": 1,
    }
    assert m.acceptance == 0 and m.qap is None and m.first_try_share is None
    assert m.retry_tax == 1.0


def test_censored_arm_lists_unfinished_tasks(build, ledger):
    run = build.run(["t1", "t2", "t3", "t4"])
    build.arm(run, "A", ["P", "RC", "", "R"], censored=True, unfinished=["t4"])
    m, outcomes = metrics_of(ledger, run, "A")
    assert m.censored and m.cap_hit
    assert m.unfinished == ["t2", "t3", "t4"]
    assert m.taxonomy["censored"] == 3
    # one function for report, live view and browser: acceptance over the decided tasks only
    assert (m.decided, m.acceptance) == (1, 1.0)
    assert m.not_comparable == "cap hit: 3 of 4 tasks unfinished"
    assert (m.qap, m.retry_tax, m.first_try_share) == (None, None, None)
    assert [o.failure_class for o in outcomes] == ["accepted", "censored", "censored", "censored"]


def test_missing_attempts_censor_even_without_the_flag(build, ledger):
    run = build.run(["t1", "t2"])
    build.arm(run, "A", ["P", ""])
    m, _ = metrics_of(ledger, run, "A")
    assert m.censored and not m.cap_hit and m.unfinished == ["t2"]


def test_accepted_task_is_never_censored():
    tasks = [{"task_id": "t1"}]
    attempts = [{"task_id": "t1", "attempt_no": 1, "accepted": 1, "total_tokens": 5, "failure_class": "accepted"}]
    (outcome,) = task_outcomes(tasks, attempts, unfinished={"t1"})
    assert outcome.accepted and not outcome.censored


def test_visible_pass_hidden_fail_rate(build, ledger):
    run = build.run(["t1", "t2", "t3"])
    visible = {("t1", 1): 1, ("t2", 1): 1, ("t2", 2): 1, ("t3", 1): 0}
    build.arm(run, "A", ["P", "RP", "R"], visible=visible)
    m, _ = metrics_of(ledger, run, "A")
    assert (m.visible_pass_hidden_fail, m.visible_pass_n) == (1, 3)
    assert m.visible_flatter_rate == pytest.approx(1 / 3)


def test_tokens_per_attempt_spread():
    s = spread([100, 200, 300, 400, 1000])
    assert (s.mean, s.median, s.n) == (400, 300, 5)
    assert s.p90 == pytest.approx(760)
    assert spread([]).mean is None
