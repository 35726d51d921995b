"""Test-time strategies (issue 16) end to end: real scripted servers on loopback, a real ledger,
the real sandbox for visible and hidden tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent import events as ev
from agent.endpoints.scripted_server import ScriptedServer
from agent.ledger import Ledger
from agent.metrics.report import build_report, render_report
from tests.conftest import FIXTURES
from tests.support.engine_helpers import arm_toml, run_sync, write_config

TASK = ["py-word-count"]


@pytest.fixture
def server():
    s = ScriptedServer([FIXTURES / "smoke"]).start()
    yield s
    s.stop()


def _run(tmp_path: Path, arms: list[str], **kw):
    kw.setdefault("tasks", TASK)
    cfg = write_config(tmp_path, arms, max_attempts=1, **kw)
    db = tmp_path / "l.sqlite"
    _, run_id, events = run_sync(cfg, db)
    return Ledger(db), run_id, events


def _strategy(report: dict, arm: str) -> dict:
    return next(f for f in report["runs"][0]["strategies"] if f["arm"] == arm)


def test_visible_selection_submits_the_only_passing_second_candidate(tmp_path, server):
    ledger, run_id, events = _run(
        tmp_path, [arm_toml("P", "second-passes", base_url=server.base_url, extra='strategy = "parallel@2"\n')]
    )
    rows = ledger.query(
        "select attempt_no, stage, candidate, accepted, submitted from attempts where run_id = ? order by attempt_no",
        [run_id],
    )
    assert [(r["stage"], r["candidate"], r["accepted"], r["submitted"]) for r in rows] == [
        ("candidate", 1, 0, 0),
        ("candidate", 2, 1, 1),
    ]
    seeds = [body.get("seed") for body in server.requests]
    assert set(seeds) == {0, 1}  # candidate i sends seed + i
    sub = ledger.query("select * from submissions where run_id = ?", [run_id])[0]
    assert sub["route"] == "visible" and sub["fallback"] == 0 and "candidate 2" in sub["reason"]
    report = build_report(ledger, [run_id], with_cost=True, resamples=200)
    f = _strategy(report, "P")
    assert (f["coverage"], f["conversion"], f["submitted_correct"]) == (1.0, 1.0, 1)
    assert report["runs"][0]["arms"][0]["metrics"]["accepted"] == 1
    submitted = [e for e in events if isinstance(e, ev.Submitted)]
    assert [(e.attempt, e.accepted, e.candidates, e.covered) for e in submitted] == [(2, True, 2, 1)]
    # the stages' tokens are the arm's: attempts, calls and the arm row agree
    calls = ledger.query(
        "select stage, sum(prompt_tokens + completion_tokens) n from calls where run_id = ? "
        "and kind = 'attempt' group by stage",
        [run_id],
    )
    assert {r["stage"]: r["n"] for r in calls} == f["stage_tokens"]
    assert (
        sum(f["stage_tokens"].values())
        == ledger.arms(run_id)[0]["tokens_used"]
        == sum(p + c for p, c in server.usage_log)
    )
    text = render_report(report, "text")
    assert "coverage" in text and "lost: no selection" in text


def test_direct_vs_parallel_is_an_ordinary_paired_run(tmp_path, server):
    ledger, run_id, _ = _run(
        tmp_path,
        [
            arm_toml("D", "second-passes", base_url=server.base_url, extra='strategy = "direct"\n'),
            arm_toml("P", "second-passes", base_url=server.base_url, extra='strategy = "parallel@2"\n'),
        ],
    )
    report = build_report(ledger, [run_id], with_cost=True, resamples=200)
    d, p = _strategy(report, "D"), _strategy(report, "P")
    assert (d["strategy"], d["coverage"], d["submitted_correct"]) == ("direct", 0.0, 0)
    assert (p["coverage"], p["submitted_correct"]) == (1.0, 1)
    c = report["runs"][0]["comparisons"][0]
    assert c["n_paired"] == 1 and (c["first_accepted"], c["second_accepted"]) == (0, 1)
    assert "Direct's operating point: D" in render_report(report, "text")


def test_an_unparseable_judge_leaves_no_choice_and_fallback_recovers(tmp_path, server):
    ledger, run_id, _ = _run(
        tmp_path,
        [arm_toml("J", "garbled-judge", base_url=server.base_url, extra='strategy = "parallel@2"\nselect = "judge"\n')],
    )
    rows = ledger.query(
        "select stage, candidate, accepted, submitted, total_tokens from attempts where run_id = ? order by attempt_no",
        [run_id],
    )
    assert [(r["stage"], r["candidate"], r["submitted"]) for r in rows] == [
        ("candidate", 1, 1),
        ("candidate", 2, 0),
        ("judge", None, None),
    ]
    assert rows[2]["total_tokens"] > 0  # the judge is charged
    sub = ledger.query("select * from submissions where run_id = ?", [run_id])[0]
    assert (sub["route"], sub["parse_route"], sub["fallback"]) == ("fallback", "unparseable", 1)
    f = _strategy(build_report(ledger, [run_id], with_cost=False, resamples=200), "J")
    assert (f["fallback"], f["fallback_correct"], f["submitted_correct"], f["parse_routes"]) == (
        1,
        1,
        1,
        {"unparseable": 1},
    )
    assert f["stage_tokens"]["judge"] == rows[2]["total_tokens"]


def test_without_fallback_an_unparseable_judge_submits_nothing(tmp_path, server):
    ledger, run_id, _ = _run(
        tmp_path,
        [
            arm_toml(
                "J",
                "garbled-judge",
                base_url=server.base_url,
                extra='strategy = "parallel@2"\nselect = "judge"\nfallback = false\n',
            )
        ],
    )
    sub = ledger.query("select * from submissions where run_id = ?", [run_id])[0]
    assert (sub["route"], sub["submitted_attempt_id"], sub["fallback"]) == ("none", None, 0)
    report = build_report(ledger, [run_id], with_cost=False, resamples=200)
    f = _strategy(report, "J")
    assert (f["covered"], f["submitted_correct"], f["lost_no_selection"], f["no_submission"]) == (1, 0, 1, 1)
    assert report["runs"][0]["arms"][0]["metrics"]["taxonomy"]["no_submission"] == 1


def test_a_critique_that_breaks_a_correct_answer_is_a_correct_to_wrong_transition(tmp_path, server):
    ledger, run_id, _ = _run(
        tmp_path, [arm_toml("R", "critique-breaks", base_url=server.base_url, extra='strategy = "revise"\n')]
    )
    rows = ledger.query(
        "select stage, accepted, submitted from attempts where run_id = ? order by attempt_no", [run_id]
    )
    assert [(r["stage"], r["accepted"], r["submitted"]) for r in rows] == [
        ("initial", 1, 0),
        ("critique", 0, None),
        ("revision", 0, 1),
    ]
    f = _strategy(build_report(ledger, [run_id], with_cost=False, resamples=200), "R")
    assert f["transitions"] == {"correct->correct": 0, "correct->wrong": 1, "wrong->correct": 0, "wrong->wrong": 0}
    assert (f["coverage"], f["conversion"], f["lost_wrong_choice"]) == (1.0, 0.0, 1)


def test_a_passing_critique_submits_the_initial_attempt(tmp_path, server):
    ledger, run_id, _ = _run(
        tmp_path, [arm_toml("R", "solver", base_url=server.base_url, extra='strategy = "revise"\n')]
    )
    rows = ledger.query("select stage, submitted from attempts where run_id = ? order by attempt_no", [run_id])
    assert [(r["stage"], r["submitted"]) for r in rows] == [("initial", 1), ("critique", None)]
    f = _strategy(build_report(ledger, [run_id], with_cost=False, resamples=200), "R")
    assert f["transitions"]["correct->correct"] == 1


def test_a_parallel_at_4_task_never_spends_more_than_4x_directs_caps(tmp_path, server):
    """never-finish lists files until a cap stops it: each candidate runs to Direct's turn cap,
    and the four together stay inside 4x every per-task cap."""
    ledger, run_id, _ = _run(
        tmp_path,
        [
            arm_toml("D", "never-finish", base_url=server.base_url, extra='strategy = "direct"\n'),
            arm_toml("P", "never-finish", base_url=server.base_url, extra='strategy = "parallel@4"\n'),
        ],
        max_turns=3,
    )
    by_arm = {
        r["arm"]: r
        for r in ledger.query(
            "select arm, sum(turns) turns, max(turns) top, sum(total_tokens) tokens, sum(duration_ms) ms, count(*) n "
            "from attempts where run_id = ? group by arm",
            [run_id],
        )
    }
    assert by_arm["D"]["turns"] == 3 and by_arm["P"]["n"] == 4
    assert by_arm["P"]["top"] <= 3 and by_arm["P"]["turns"] <= 4 * by_arm["D"]["turns"]
    assert by_arm["P"]["tokens"] <= 4 * 60_000 and by_arm["P"]["ms"] <= 4 * 120_000


def test_the_task_budget_is_drawn_down_across_stages(tmp_path):
    from agent.config import Limits
    from agent.run.strategies import TaskBudget

    budget = TaskBudget(Limits(max_turns=5, max_tokens_per_attempt=1000, attempt_timeout_s=10), 2)
    assert budget.stage_limits().max_turns == 5
    budget.charge({"total_tokens": 1500, "turns": 4, "duration_ms": 2000})
    first = budget.stage_limits()
    assert (first.max_turns, first.max_tokens_per_attempt, first.attempt_timeout_s) == (5, 500, 10)
    budget.charge({"total_tokens": 600, "turns": 1, "duration_ms": 0})
    assert budget.stage_limits() is None  # tokens spent: no stage starts


def test_a_judge_that_answers_strictly_decides(tmp_path, server):
    ledger, run_id, events = _run(
        tmp_path,
        [arm_toml("J", "second-passes", base_url=server.base_url, extra='strategy = "parallel@2"\nselect = "judge"\n')],
    )
    sub = ledger.query("select * from submissions where run_id = ?", [run_id])[0]
    assert (sub["route"], sub["parse_route"], sub["fallback"]) == ("judge", "strict", 0)
    judge_calls = ledger.query("select stage, response_text from calls where run_id = ? and stage = 'judge'", [run_id])
    assert len(judge_calls) == 1 and judge_calls[0]["response_text"].endswith("ANSWER: 2")
    from agent.printer import format_event

    lines = [format_event(e) for e in events if isinstance(e, ev.Submitted)]
    assert lines == ["[J] py-word-count submitted attempt 2 by judge (1 of 2 candidates pass) -> ACCEPTED"]


@pytest.mark.parametrize(
    "text, n, value, route",
    [
        ("I pick the second.\nANSWER: 2", 3, 2, "strict"),
        ("**ANSWER: 1**", 2, 1, "strict"),
        ("Both are good; the best is \\boxed{2} I think.", 2, 2, "boxed"),
        ("ANSWER: 4", 3, None, "out_of_range"),
        ("ANSWER: 1 or 2", 2, None, "unparseable"),
        ("", 2, None, "empty"),
        (None, 2, None, "empty"),
    ],
)
def test_the_judges_choice_is_parsed_strictly(text, n, value, route):
    from agent.run.strategy_prompts import parse_choice

    parsed = parse_choice(text, n)
    assert (parsed.value, parsed.route) == (value, route)


@pytest.mark.parametrize(
    "text, value, route",
    [
        ("Fine.\nVERDICT: PASS", "PASS", "strict"),
        ("verdict: revise", "REVISE", "strict"),
        ("VERDICT: PASS\nbut wait, one more thing", None, "unparseable"),
        ("  ", None, "empty"),
    ],
)
def test_the_critiques_verdict_is_parsed_strictly(text, value, route):
    from agent.run.strategy_prompts import parse_verdict

    parsed = parse_verdict(text)
    assert (parsed.value, parsed.route) == (value, route)


def test_when_tokens_bind_each_candidate_gets_at_most_directs_share(tmp_path, server):
    """A token cap low enough to bind: never-finish is stopped by it on every stage, no candidate
    spends more than Direct's attempt, and the four together at most 4x Direct."""
    cfg = write_config(
        tmp_path,
        [
            arm_toml("D", "never-finish", base_url=server.base_url, extra='strategy = "direct"\n'),
            arm_toml("P", "never-finish", base_url=server.base_url, extra='strategy = "parallel@4"\n'),
        ],
        tasks=TASK,
        max_attempts=1,
        max_turns=50,
    )
    cfg.write_text(cfg.read_text().replace("max_tokens_per_attempt = 60000", "max_tokens_per_attempt = 2500"))
    _, run_id, _ = run_sync(cfg, tmp_path / "l.sqlite")
    ledger = Ledger(tmp_path / "l.sqlite")
    rows = ledger.query(
        "select arm, end_reason, total_tokens from attempts where run_id = ? order by arm, attempt_no", [run_id]
    )
    direct = [r for r in rows if r["arm"] == "D"]
    pool = [r for r in rows if r["arm"] == "P"]
    assert [r["end_reason"] for r in direct] == ["token_limit"] and len(pool) == 4
    assert {r["end_reason"] for r in pool} == {"token_limit"}
    assert max(r["total_tokens"] for r in pool) <= direct[0]["total_tokens"]
    assert sum(r["total_tokens"] for r in pool) <= 4 * direct[0]["total_tokens"]


def test_the_live_figures_of_a_strategy_arm_are_the_report_s(tmp_path, server):
    # The live view folds the run's own events: an unsubmitted passing candidate is waste in its
    # retry tax, as in the report (it read 0.34 where the report said 0.54 before).
    from tuiapp.live.figures import compute_figures
    from tuiapp.live.state import RunState

    ledger, run_id, events = _run(
        tmp_path,
        [
            arm_toml("D", "second-passes", base_url=server.base_url, extra='strategy = "direct"\n'),
            arm_toml("P", "second-passes", base_url=server.base_url, extra='strategy = "parallel@2"\n'),
        ],
        tasks=["py-word-count", "rs-saturating-sum"],
    )
    state = RunState(["D", "P"], {"D": 10**9, "P": 10**9}, max_attempts=1)
    for e in events:
        state.apply(e)
    live = compute_figures(state.snapshot(state.last_at)).arms
    report = build_report(ledger, [run_id], with_cost=False, resamples=200)
    for arm in report["runs"][0]["arms"]:
        m, core = arm["metrics"], live[arm["metrics"]["name"]].core
        assert (core.accepted, core.qap, core.retry_tax) == (m["accepted"], m["qap"], m["retry_tax"])
    assert live["P"].core.retry_tax > 0  # candidate 1's tokens at least
