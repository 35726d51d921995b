"""The live view's model and figures without Textual: events folded into per-arm state, the
projection, burn rate, live statistics (checked against agent.metrics' own functions) and
the small formatting helpers."""

from __future__ import annotations

import json

import pytest

from agent import events as ev
from agent.ledger import Ledger, new_id
from agent.metrics import build_report
from agent.metrics.compare import compare_arms
from agent.metrics.stats import wilson
from tuiapp.live.figures import MIN_PAIRED, bar_parts, burn_rate, compute_figures, project, spark_values, sparkline
from tuiapp.live.modals import parse_cap
from tuiapp.live.replay import SNAPSHOT_START, synthetic_events
from tuiapp.live.state import RunState

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
    assert [b.cells[t].status for t in state.task_ids] == [
        "harness_error",
        "timeout",
        "environment",
        "accepted",
        "running",
    ]
    assert a.cells["task-02"].accepted_on == 2 and state.outcome("A", "task-02").decided
    assert state.outcome("A", "task-04").decided is False  # one attempt of two: not decided yet
    assert state.outcome("A", "task-04").failure_class == "pending"
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
    notice = state.apply(ev.AutoPaused("r", arm="B", used=9, reserved=0, cap=10, share=0.9, next_call=2, at=T0))
    assert notice.kind == "auto_pause" and notice.arm == "B" and notice.tokens == 2
    # a headless policy already chose: nothing for the view to ask
    assert (
        state.apply(ev.AutoPaused("r", arm="B", used=9, reserved=0, cap=10, share=0.9, policy="continue", at=T0))
        is None
    )
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
    snap = state.snapshot(state.last_at)
    (arm_a, arm_b) = snap.arms
    expected = compare_arms("A", arm_a.outcomes(), "B", arm_b.outcomes(), seed=0, resamples=0)
    assert figures.gap == expected and figures.gap.interval.n == 7
    assert figures.gap_text == (
        "paired gap B − A -0.14, 95% CI [-0.57, +0.36], n=7 · no detectable difference: the interval "
        "includes 0, McNemar p ≥ 0.05, fewer than 6 decided pairs (McNemar p = 1; ~173 tasks for 14 pts)"
    )
    assert figures.gap_short == "gap B−A -0.14 n=7 · no detectable difference: < 6 decided pairs"


def test_live_cost_figures_cover_decided_tasks_only():
    # A: task-01 accepted first try; task-02 failed once, two attempts left: not decided yet.
    state = fold(synthetic_events({"A": ["P", "R"], "B": ["R"]}), max_attempts=3)
    assert state.outcome("A", "task-02").failure_class == "pending"
    a, b = compute_figures(state.snapshot(state.last_at)).arms.values()
    first = [e for e in synthetic_events({"A": ["P", "R"], "B": ["R"]}) if isinstance(e, ev.TaskGraded)]
    accepted = next(g.tokens for g in first if g.arm == "A" and g.accepted)
    assert a.retry_tax == 0.0 and a.qap == pytest.approx(accepted)  # the pending attempt is no waste yet
    assert b.decided == 0 and (b.retry_tax, b.qap) == (None, None)  # not "retry tax 1.00" beside no decided task


def test_gap_waits_for_enough_paired_tasks():
    state = fold(synthetic_events({"A": ["P"] * (MIN_PAIRED - 1), "B": ["R", "R"]}), max_attempts=1)
    figures = compute_figures(state.snapshot(state.last_at))
    assert figures.gap is None and "(2 so far)" in figures.gap_text


def test_projection_says_where_the_cap_is_hit_or_what_is_left():
    state = fold(synthetic_events({"A": ["P"] * 4, "B": ["P"] * 4}, task_ids=[f"t{i}" for i in range(40)]))
    arm = next(a for a in state.snapshot(state.last_at).arms if a.name == "A")
    per_task = state.arms["A"].used / 4
    from tuiapp.live.snapshot import CellSnapshot

    tight = arm.__class__(**{**arm.__dict__, "cap": int(per_task * 30.5)})
    p = project(tight, 40)
    assert p.censored and p.text == "will be censored: cap at ~task 31 of 40"  # the verdict first
    roomy = arm.__class__(**{**arm.__dict__, "cap": int(per_task * 50)})
    p = project(roomy, 40)
    assert not p.censored and p.text.startswith("fits: ~") and "left at the end (20% of the cap)" in p.text
    fresh = arm.__class__(
        **{**arm.__dict__, "cells": tuple(CellSnapshot(t, "pending", 0, 0, ()) for t in state.task_ids)}
    )
    assert project(fresh, 40).text == "projection after the first finished task"


def test_burn_rate_and_sparkline():
    start = 1000.0
    buckets = ((100, 600), (101, 0), (102, 1200))  # tokens in 10 s buckets starting at 1000 s
    assert burn_rate(buckets, now=1030.0, started=start) == pytest.approx(1800 * 60 / 30)
    assert spark_values(buckets, now=1029.0, started=start) == (3600.0, 0.0, 7200.0)
    assert sparkline((3600.0, 0.0, 7200.0), 10) == "▅ █"
    assert sparkline((), 10) == ""
    assert sparkline((0.0, 0.0), 10) == "▁▁"


@pytest.mark.parametrize(
    "used, reserved, cap, width, expected",
    [
        (0, 0, 100, 10, (0, 0, 10)),
        (50, 20, 100, 10, (5, 2, 3)),
        (100, 50, 100, 10, (10, 0, 0)),
        (95, 10, 100, 20, (19, 1, 0)),
        (5, 0, 0, 8, (0, 0, 8)),
    ],
)
def test_bar_parts(used, reserved, cap, width, expected):
    assert bar_parts(width, used, reserved, cap) == expected
    assert sum(bar_parts(width, used, reserved, cap)) == width


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("150000", 150_000),
        ("150,000", 150_000),
        ("150_000", 150_000),
        (" 300k ", 300_000),
        ("1.5M", 1_500_000),
        ("abc", None),
        ("", None),
        ("-5", None),
    ],
)
def test_parse_cap(text, tokens):
    assert parse_cap(text) == tokens


def ledger_from_events(path, events, max_attempts: int) -> tuple[Ledger, str]:
    """The ledger the engine would have written for these events: one attempts row per graded
    attempt (its tokens as the event said), arms with their final state and unfinished tasks."""
    ledger = Ledger(path)
    run = next(e for e in events if isinstance(e, ev.RunStarted))
    ledger.insert("runs", {"id": run.run_id, "status": "finished", "manifest_sha256": run.manifest_sha256})
    ledger.insert_many(
        "tasks", [{"run_id": run.run_id, "task_id": t, "position": i} for i, t in enumerate(run.task_ids)]
    )
    final = {e.arm: e for e in events if isinstance(e, ev.ArmStateChanged)}
    for arm in run.arms:
        end = final[arm]
        arm_id = new_id()
        ledger.insert(
            "arms",
            {
                "id": arm_id,
                "run_id": run.run_id,
                "name": arm,
                "state": end.state,
                "censored": int(end.state == "censored"),
                "max_attempts": max_attempts,
                "unfinished_json": json.dumps(list(end.unfinished)),
                "cap_tokens": run.caps[arm],
            },
        )
        ledger.insert_many(
            "attempts",
            [
                {
                    "id": new_id(),
                    "run_id": run.run_id,
                    "arm_id": arm_id,
                    "arm": arm,
                    "task_id": e.task_id,
                    "attempt_no": e.attempt,
                    "status": "done",
                    "verdict": e.verdict or None,
                    "failure_class": e.failure_class,
                    "accepted": int(e.accepted),
                    "prompt_tokens": e.tokens,
                    "completion_tokens": 0,
                    "total_tokens": e.tokens,
                    "calls": 1,
                    "transport_retries": 0,
                    "malformed_tool_calls": 0,
                    "duration_ms": 1000,
                }
                for e in events
                if isinstance(e, ev.TaskGraded) and e.arm == arm
            ],
        )
    return ledger, run.run_id


@pytest.mark.parametrize(
    "outcomes",
    [
        # issue 13: B's cap runs out on task 7 of 12 with nothing accepted ("live n=6, report n=12")
        {"A": ["P"] * 12, "B": ["RR"] * 6 + ["C"]},
        {"A": ["P", "RP", "RR", "MM", "P", "TP", "P", "RR"], "B": ["P", "P", "RR", "P", "HH", "P", "RP", "P"]},
    ],
)
def test_live_view_and_report_give_one_answer(tmp_path, outcomes):
    events = synthetic_events(
        outcomes, task_ids=[f"t{i:02d}" for i in range(max(map(len, outcomes.values())) + 4)], finish=True
    )
    state = fold(events)
    figures = compute_figures(state.snapshot(state.last_at))
    ledger, run_id = ledger_from_events(tmp_path / "l.db", events, max_attempts=2)
    report = build_report(ledger, [run_id], with_cost=False, resamples=100)
    for arm in report["runs"][0]["arms"]:
        m, live = arm["metrics"], figures.arms[arm["metrics"]["name"]].core
        assert (live.decided, live.accepted, live.acceptance, live.acceptance_ci) == (
            m["decided"],
            m["accepted"],
            m["acceptance"],
            tuple(m["acceptance_ci"]),
        )
        assert (live.comparable, live.not_comparable, live.unfinished) == (
            not m["censored"],
            m["not_comparable"],
            m["unfinished"],
        )
        assert (live.qap, live.retry_tax, live.first_try_share) == (m["qap"], m["retry_tax"], m["first_try_share"])
    (c,) = report["runs"][0]["comparisons"]
    assert figures.gap.interval.lo == c["interval"]["lo"] and figures.gap.verdict.text == c["verdict"]["text"]
    ledger.close()


def test_censored_arm_shows_dashes_live():
    state = fold(synthetic_events({"A": ["P"] * 8, "B": ["RR"] * 6 + ["C"]}, finish=True))
    b = compute_figures(state.snapshot(state.last_at)).arms["B"]
    assert not b.comparable and (b.qap, b.retry_tax, b.first_try_share) == (None, None, None)
    assert (b.decided, b.acceptance) == (6, 0.0) and b.ci == wilson(0, 6)


def test_a_run_forced_past_preflight_keeps_a_banner_in_the_header():
    from tuiapp.live.widgets import header_wordings

    state = RunState(["A", "B"], {"A": 10, "B": 10})
    notice = state.apply(
        ev.LogMessage(
            "r1", level="warning", text="--force: running anyway; arm A: model differs!", kind="preflight_forced"
        )
    )
    assert notice is not None and "running anyway" in notice.text
    assert all("FORCED past preflight" in line for line in header_wordings(state, None))
    plain = RunState(["A", "B"], {"A": 10, "B": 10})
    plain.apply(ev.LogMessage("r1", level="warning", text="something else"))
    assert not any("FORCED" in line for line in header_wordings(plain, None))


def test_the_live_gap_says_what_a_censored_arm_leaves_out():
    state = fold(synthetic_events({"A": ["P"] * 8, "B": ["R"] * 6 + ["C"]}), max_attempts=1)
    figures = compute_figures(state.snapshot(state.last_at))
    assert "2 excluded: B censored (cap hit)" in figures.gap_text, figures.gap_text
    assert "wins" not in figures.gap_text and "on the 6 tasks both finished" in figures.gap_text


def test_an_impossible_control_that_passes_reads_as_a_gamed_grader():
    """A control's pass is the grader gamed (no solution that follows its prompt passes), never a
    green "accepted"; its reasoning failure is what an honest model leaves ("held"); and neither
    is in a figure."""
    from tuiapp.live.grid import cell_words

    events = synthetic_events({"A": ["P", "R"], "B": ["P", "P"]}, running=0)
    started = next(e for e in events if isinstance(e, ev.RunStarted))
    control = started.task_ids[1]
    events = [
        ev.RunStarted(
            started.run_id,
            manifest_sha256=started.manifest_sha256,
            arms=started.arms,
            task_ids=started.task_ids,
            caps=started.caps,
            isolation=started.isolation,
            controls=(control,),
            at=started.at,
        )
        if e is started
        else e
        for e in events
    ]
    state = fold(events)
    a, b = state.arms["A"].cells[control], state.arms["B"].cells[control]
    assert (a.status, b.status) == ("held", "gamed")
    assert cell_words(b)[:2] == ("gamed", "⚠ gamed") and cell_words(a)[:2] == ("held", "○ held")
    assert cell_words(state.arms["B"].cells[started.task_ids[0]])[0] == "accepted"  # an ordinary task
    figures = compute_figures(state.snapshot(state.last_at)).arms
    assert (figures["A"].decided, figures["A"].accepted) == (figures["B"].decided, figures["B"].accepted) == (1, 1)
