"""The live view's model and figures without Textual: events folded into per-arm state, the
projection, burn rate, live statistics (checked against agent.metrics' own functions) and
the small formatting helpers."""
from __future__ import annotations

import pytest

from agent import events as ev
from agent.metrics.stats import paired_bootstrap, wilson
from tuiapp.live.figures import (MIN_PAIRED, bar_parts, burn_rate, compute_figures, project, sparkline,
                                 spark_values)
from tuiapp.live.modals import parse_cap
from tuiapp.live.replay import SNAPSHOT_START, synthetic_events
from tuiapp.live.state import CELL_LOOK, RunState

T0 = SNAPSHOT_START


def fold(events, max_attempts: int = 2) -> RunState:
    state = RunState(["A", "B"], {"A": 100_000, "B": 60_000}, max_attempts=max_attempts)
    notices = [state.apply(e) for e in events]
    state.notices = [n for n in notices if n]
    return state


def test_cells_follow_attempts_and_verdicts():
    state = fold(synthetic_events({"A": ["P", "RP", "RR", "M"], "B": ["H", "T", "E", "P"]}, running=1))
    a, b = state.arms["A"], state.arms["B"]
    assert [a.cells[t].status for t in state.task_ids] == ["accepted", "accepted", "reasoning", "mechanics", "running"]
    assert [b.cells[t].status for t in state.task_ids] == ["harness_error", "timeout", "environment", "accepted",
                                                           "running"]
    assert a.cells["task-02"].accepted_on == 2 and a.cells["task-02"].decided
    assert a.cells["task-04"].decided is False  # one attempt of two: not decided yet
    assert a.activity.task_id == "task-05" and a.activity.attempt == 1 and a.activity.turn == 3
    assert a.activity.text.endswith(" ")  # the model is still streaming
    assert state.engine_state == "running" and state.live


def test_quota_and_wasted_tokens():
    events = synthetic_events({"A": ["RP"], "B": ["P"]})
    state = fold(events)
    used = [e for e in events if isinstance(e, ev.QuotaChanged) and e.arm == "A"][-1].used
    graded = [e for e in events if isinstance(e, ev.TaskGraded) and e.arm == "A"]
    assert state.arms["A"].used == used == sum(g.tokens for g in graded)
    assert state.arms["A"].wasted == graded[0].tokens
    assert sum(state.arms["A"].buckets.values()) == used


def test_censored_arm_marks_its_unfinished_tasks():
    state = fold(synthetic_events({"A": ["P", "P", "P"], "B": ["P", "C"]}))
    b = state.arms["B"]
    assert b.state == "censored"
    assert [b.cells[t].status for t in state.task_ids] == ["accepted", "censored", "censored"]
    figures = compute_figures(state.snapshot(state.last_at))
    assert figures.arms["B"].projection.censored
    assert figures.arms["B"].censoring == "cap hit"
    assert "2 of 3 tasks unfinished" in figures.arms["B"].projection.text


def test_auto_pause_event_becomes_a_notice():
    state = RunState(["A", "B"], {"A": 10, "B": 10})
    notice = state.apply(ev.AutoPaused("r", arm="B", used=9, reserved=0, cap=10, share=0.91, at=T0))
    assert notice.kind == "auto_pause" and notice.arm == "B" and "91%" in notice.text
    assert state.apply(ev.LogMessage("r", level="info", text="auto-pause: arm B at 91% of its cap", at=T0)) is None
    assert state.apply(ev.LogMessage("r", level="info", text="paused by the user", at=T0)) is None
    finished = state.apply(ev.RunFinished("r", status="aborted", at=T0))
    assert finished.kind == "finished" and finished.text == "aborted" and not state.live


def test_dirty_parts_are_reported_once():
    state = fold(synthetic_events({"A": ["P"], "B": ["P"]}))
    dirty, cells = state.take_dirty()
    assert {"grid", "header", "log", "arm:A", "arm:B", "activity:A"} <= dirty
    assert ("A", "task-01") in cells
    assert state.take_dirty() == (set(), set())


def test_live_statistics_match_agent_metrics():
    outcomes = {"A": ["P", "P", "RR", "P", "MM", "P", "RP"], "B": ["P", "RR", "RR", "P", "P", "MM", "P"]}
    state = fold(synthetic_events(outcomes))
    figures = compute_figures(state.snapshot(state.last_at))
    a = figures.arms["A"]
    assert (a.decided, a.accepted) == (7, 5)
    assert a.ci == wilson(5, 7)
    assert a.first_try_share == pytest.approx(4 / 5)
    assert a.qap == pytest.approx(state.arms["A"].used / 5)
    assert a.retry_tax == pytest.approx(state.arms["A"].wasted / state.arms["A"].used)
    first = [int("P" in o) for o in outcomes["A"]]
    second = [int("P" in o) for o in outcomes["B"]]
    from agent.metrics.report import DEFAULT_SEED
    expected = paired_bootstrap(first, second, seed=DEFAULT_SEED, resamples=2_000)
    assert figures.gap == expected
    assert "B − A: -0.14" in figures.gap_text


def test_gap_waits_for_enough_paired_tasks():
    state = fold(synthetic_events({"A": ["P"] * (MIN_PAIRED - 1), "B": ["R", "R"]}), max_attempts=1)
    figures = compute_figures(state.snapshot(state.last_at))
    assert figures.gap is None and "(2 so far)" in figures.gap_text


def test_projection_says_where_the_cap_is_hit_or_what_is_left():
    state = fold(synthetic_events({"A": ["P"] * 4, "B": ["P"] * 4}, task_ids=[f"t{i}" for i in range(40)]))
    arm = next(a for a in state.snapshot(state.last_at).arms if a.name == "A")
    per_task = state.arms["A"].used / 4
    tight = arm.__class__(**{**arm.__dict__, "cap": int(per_task * 30.5)})
    p = project(tight, 40)
    assert p.censored and p.text == "cap at ~task 31 of 40: this arm will be censored"
    roomy = arm.__class__(**{**arm.__dict__, "cap": int(per_task * 50)})
    p = project(roomy, 40)
    assert not p.censored and p.text.startswith("~") and "left at the end (20% of the cap)" in p.text
    fresh = arm.__class__(**{**arm.__dict__, "cells": tuple((t, "pending", False, None, 0) for t in state.task_ids)})
    assert project(fresh, 40).text == "projection after the first finished task"


def test_burn_rate_and_sparkline():
    start = 1000.0
    buckets = ((100, 600), (101, 0), (102, 1200))  # tokens in 10 s buckets starting at 1000 s
    assert burn_rate(buckets, now=1030.0, started=start) == pytest.approx(1800 * 60 / 30)
    assert spark_values(buckets, now=1029.0, started=start) == (3600.0, 0.0, 7200.0)
    assert sparkline((3600.0, 0.0, 7200.0), 10) == "▅ █"
    assert sparkline((), 10) == ""
    assert sparkline((0.0, 0.0), 10) == "▁▁"


@pytest.mark.parametrize("used, reserved, cap, width, expected", [
    (0, 0, 100, 10, (0, 0, 10)), (50, 20, 100, 10, (5, 2, 3)), (100, 50, 100, 10, (10, 0, 0)),
    (95, 10, 100, 20, (19, 1, 0)), (5, 0, 0, 8, (0, 0, 8)),
])
def test_bar_parts(used, reserved, cap, width, expected):
    assert bar_parts(width, used, reserved, cap) == expected
    assert sum(bar_parts(width, used, reserved, cap)) == width


@pytest.mark.parametrize("text, tokens", [("150000", 150_000), ("150,000", 150_000), ("150_000", 150_000),
                                          (" 300k ", 300_000), ("1.5M", 1_500_000), ("abc", None), ("", None),
                                          ("-5", None)])
def test_parse_cap(text, tokens):
    assert parse_cap(text) == tokens


def test_every_status_has_a_distinct_symbol():
    symbols = [look[0] for look in CELL_LOOK.values()]
    assert len(set(symbols)) == len(symbols)
