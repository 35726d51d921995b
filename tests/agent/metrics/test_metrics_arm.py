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
    assert (m.figures.accepted, m.figures.n_tasks, m.figures.acceptance) == (3, 4, 0.75)
    assert m.figures.total_tokens == 9000 and m.n_attempts == 9
    assert m.figures.qap == 3000
    assert m.figures.wasted_tokens == 6000 and m.figures.retry_tax == pytest.approx(6 / 9)
    assert (m.figures.first_try, m.figures.first_try_share) == (1, pytest.approx(1 / 3))
    assert not m.censored and m.figures.unfinished == []
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
    assert m.figures.acceptance == 0 and m.figures.qap is None and m.figures.first_try_share is None
    assert m.figures.retry_tax == 1.0


def test_censored_arm_lists_unfinished_tasks(build, ledger):
    run = build.run(["t1", "t2", "t3", "t4"])
    build.arm(run, "A", ["P", "RC", "", "R"], censored=True, unfinished=["t4"])
    m, outcomes = metrics_of(ledger, run, "A")
    assert m.censored and m.figures.cap_hit
    assert m.figures.unfinished == ["t2", "t3", "t4"]
    assert m.taxonomy["censored"] == 3
    # one function for report, live view and browser: acceptance over the decided tasks only
    assert (m.figures.decided, m.figures.acceptance) == (1, 1.0)
    assert m.figures.not_comparable == "cap hit: 3 of 4 tasks unfinished"
    assert (m.figures.qap, m.figures.retry_tax, m.figures.first_try_share) == (None, None, None)
    assert [o.failure_class for o in outcomes] == ["accepted", "censored", "censored", "censored"]


def test_missing_attempts_censor_even_without_the_flag(build, ledger):
    run = build.run(["t1", "t2"])
    build.arm(run, "A", ["P", ""])
    m, _ = metrics_of(ledger, run, "A")
    assert m.censored and not m.figures.cap_hit and m.figures.unfinished == ["t2"]


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


@pytest.mark.parametrize("keep_number", [True, False], ids=["retry-keeps-the-number", "older-ledger-numbering"])
def test_lost_attempts_are_not_the_models(build, ledger, keep_number):
    """A kill, an abort or a stop cut attempts off (A): their retry is the model's attempt, so
    the figures are the uninterrupted run's; their tokens are lost spend, counted apart."""
    run = build.run(["t1", "t2", "t3"])
    build.arm(run, "clean", ["P", "RP", "R"], tokens=1000)
    build.arm(run, "killed", ["AP", "RAP", "AAR"], tokens=1000, lost_keep_number=keep_number)
    clean, clean_outcomes = metrics_of(ledger, run, "clean")
    killed, killed_outcomes = metrics_of(ledger, run, "killed")
    for field in ("acceptance", "qap", "retry_tax", "first_try", "first_try_share", "total_tokens", "wasted_tokens"):
        assert getattr(killed.figures, field) == getattr(clean.figures, field), field
    assert killed.tokens_per_attempt == clean.tokens_per_attempt and killed.n_attempts == clean.n_attempts == 4
    assert [o.accepted_on for o in killed_outcomes] == [o.accepted_on for o in clean_outcomes] == [1, 2, None]
    assert (killed.figures.lost_attempts, killed.figures.lost_tokens) == (4, 4000) and clean.figures.lost_attempts == 0
    if keep_number:
        assert max(r["attempt_no"] for r in ledger.attempts(run) if r["arm"] == "killed") == 2


def test_the_report_states_lost_spend_and_leaves_it_out_of_the_cost(build, ledger):
    from agent.metrics.report import build_report, render_report

    run = build.run(["t1", "t2"])
    build.arm(run, "A", ["P", "RP"], tokens=1000)
    build.arm(run, "B", ["AP", "RAP"], tokens=1000, lost_keep_number=True)
    report = build_report(ledger, [run], resamples=0)
    a, b = (arm for arm in report["runs"][0]["arms"])
    assert a["cost"]["cpsp"] == b["cost"]["cpsp"] and a["cost"]["n_attempts"] == b["cost"]["n_attempts"] == 3
    assert (b["metrics"]["lost_attempts"], b["metrics"]["lost_tokens"]) == (2, 2000)
    text = render_report(report, "text")
    assert b["cost"]["lost"] > 0 and a["cost"]["lost"] == 0
    assert f"lost spend: 2,000 tokens (${b['cost']['lost']:.4f}" in text and "in 2 attempts the run cut off" in text
    assert "charged against the cap" in text
    assert text.count("lost spend:") == 1  # arm A lost nothing
