"""Numbers the live view shows, without Textual: the ETA over the tasks each arm still has to do
(a censored or stopped arm has none), projections marked rough until enough tasks, the paired
gap in a suite smaller than MIN_PAIRED, the user's own time on "you:" lines, and wordings that
fit narrow widths without cutting a number."""

from __future__ import annotations

import pytest
from rich.cells import cell_len

from tuiapp.browse.labels import tokens_short
from tuiapp.live.figures import MIN_PAIRED, MIN_PROJECTION, compute_figures, eta_seconds, percent, project
from tuiapp.live.replay import SNAPSHOT_START, synthetic_events
from tuiapp.live.state import RunState
from tuiapp.live.widgets import fit, header_wordings, metrics_wordings, quota_wordings

T0 = SNAPSHOT_START


def fold(events, tasks: int | None = None, max_attempts: int = 1) -> RunState:
    state = RunState(["A", "B"], {"A": 100_000, "B": 60_000}, max_attempts=max_attempts)
    for event in events:
        state.apply(event)
    return state


def six_tasks(a: list[str], b: list[str]) -> RunState:
    return fold(synthetic_events({"A": a, "B": b}, task_ids=[f"t{i}" for i in range(6)]))


def test_eta_counts_only_what_the_running_arm_still_has_to_do():
    # B is censored on its second task; A has decided 1 task of 6 so far.
    state = six_tasks(["P"], ["P", "C"])
    assert state.arms["B"].state == "censored"
    snap = state.snapshot(state.last_at)
    figures = compute_figures(snap)
    elapsed = state.last_at - state.started_at
    assert figures.eta_s == pytest.approx(elapsed * 5 / 1)  # A: 5 left at its pace of 1 per `elapsed`
    assert figures.eta_s > elapsed  # not "~00:05 with 5 of 6 tasks left"
    assert (figures.done_units, figures.total_units) == (2, 12)  # decided cells of all 12


def test_eta_is_zero_when_only_closed_arms_remain_and_unknown_before_a_first_task():
    state = six_tasks(["C"], ["C"])
    figures = compute_figures(state.snapshot(state.last_at))
    assert figures.eta_s == 0.0  # both arms censored: nothing left to run
    fresh = fold(synthetic_events({"A": [""], "B": [""]}, task_ids=["t0", "t1"], running=1))
    snap = fresh.snapshot(fresh.last_at)
    assert eta_seconds(snap.arms, {a.name: a.outcomes() for a in snap.arms}, 10.0) is None


def test_eta_of_a_stopped_arm_is_left_out():
    state = six_tasks(["P", "P", "P"], ["P"])
    state.mark_stopping("A")  # the user stopped A: its remaining tasks will not run
    figures = compute_figures(state.snapshot(state.last_at))
    elapsed = state.last_at - state.started_at
    assert figures.eta_s == pytest.approx(elapsed * 5 / 1)  # only B's pace and its 5 tasks


def test_a_projection_from_few_tasks_is_marked_rough():
    tasks = [f"t{i}" for i in range(40)]
    state = fold(
        synthetic_events({"A": ["P"], "B": ["P"] * MIN_PROJECTION}, task_ids=tasks, caps={"A": 20_000, "B": 20_000})
    )
    snap = state.snapshot(state.last_at)
    a, b = snap.arms
    early, firm = project(a, 40), project(b, 40)
    assert early.tentative and early.censored and early.text.startswith("may be censored: cap at ~task")
    assert early.text.endswith("(rough, from 1 task)") and early.short.startswith("censored? cap ~task")
    assert not firm.tentative and firm.text.startswith("will be censored: cap at ~task")
    assert firm.short.startswith("censored: cap ~task")
    figures = compute_figures(snap)
    assert figures.arms["A"].censoring == "maybe (early)" and figures.arms["B"].censoring == "projected"


def test_the_gap_of_a_small_suite_shows_once_every_task_is_decided():
    assert MIN_PAIRED > 3
    state = fold(synthetic_events({"A": ["P", "P", "P"], "B": ["R", "P", "R"]}, task_ids=["t0", "t1", "t2"]))
    figures = compute_figures(state.snapshot(state.last_at))
    assert figures.gap is not None and figures.gap.n_paired == 3
    assert figures.gap_text.startswith("paired gap B − A -0.67")
    partial = fold(synthetic_events({"A": ["P"], "B": ["R"]}, task_ids=["t0", "t1", "t2"], running=1))
    text = compute_figures(partial.snapshot(partial.last_at)).gap_text
    assert "shown once 3 tasks are decided on both arms (1 so far)" in text


def test_user_lines_carry_their_own_time():
    state = six_tasks(["P"], ["P"])
    state.note("pause", at=state.started_at + 125)
    assert state.log[-1] == "02:05 you: pause"
    assert state.last_at - state.started_at < 125  # not the last engine event's time


@pytest.mark.parametrize(
    "n, shown",
    [
        (0, "0"),
        (999, "999"),
        (1_000, "1k"),
        (12_345, "12.3k"),
        (60_000, "60k"),
        (120_000, "120k"),
        (1_250_000, "1.25M"),
        (3_000_000, "3M"),
    ],
)
def test_compact_token_counts(n, shown):
    assert tokens_short(n) == shown


def test_percent_never_rounds_up_to_the_pause_share():
    assert percent(0.899) == "89%" and percent(0.9) == "90%" and percent(1.07) == "107%"


@pytest.mark.parametrize("width", [28, 36, 56])
def test_meter_numbers_keep_used_cap_and_share_at_every_width(width):
    text = fit(quota_wordings(48_894, 2_300, 120_000), width).plain
    assert cell_len(text) <= width and "…" not in text
    assert ("120,000" in text or "120k" in text) and "42%" in text
    assert "48,894" in text or "48.9k" in text


def test_header_at_80_columns_keeps_state_time_eta_done_and_the_sandbox_warning():
    state = six_tasks(["P"], ["P", "C"])
    state.sandbox_warning = "no full sandbox (fallback)"
    figures = compute_figures(state.snapshot(state.last_at))
    text = fit(header_wordings(state, figures), 78).plain
    assert cell_len(text) <= 78 and "…" not in text
    for part in ("▶ running", "ETA ~", f"{figures.done_units}/{figures.total_units}", "⚠ no full sandbox (fallback)"):
        assert part in text, text
    wide = fit(header_wordings(state, figures), 200).plain
    assert wide.startswith("quotabench live · run 01KSNAPSHOT0 · manifest") and "elapsed" in wide


def test_metrics_fit_a_narrow_panel():
    state = six_tasks(["P", "RP", "P"], ["P", "C"])
    figures = compute_figures(state.snapshot(state.last_at))
    for name in ("A", "B"):
        lines = fit(metrics_wordings(figures.arms[name]), 36).plain.splitlines()
        assert len(lines) == 2 and all(cell_len(line) <= 36 and "…" not in line for line in lines), lines
    assert fit(metrics_wordings(figures.arms["B"]), 36).plain.startswith("not comparable")
