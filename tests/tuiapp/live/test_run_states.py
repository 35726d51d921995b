"""What the live view says the run is doing, at 80x24 by Pilot over a replayed run: paused on both
arm panels with `p resume` in the footer and an ETA that stands still, `preflight…` while the
endpoints are checked, the projection's verdict first, the paired gap's reason, the header's
"done, censored" count, and an abort that says what it waits for."""

from __future__ import annotations

import pytest
from textual import events
from textual.widgets import Button, Input

from agent import events as ev
from tuiapp.live.figures import compute_figures
from tuiapp.live.modals import AutoPauseModal
from tuiapp.live.replay import ReplayEngine, synthetic_events
from tuiapp.live.state import RunState

from .conftest import wait_for
from .test_layout import CAPS, TASKS, config, mid_run_events, replay, settled

pytestmark = pytest.mark.anyio
SMALL = (80, 24)


def footer_keys(app) -> dict[str, str]:
    """The footer as it is drawn: key -> description of every binding it shows."""
    return {k.key_display or k.key: k.description for k in app.query("FooterKey")}


async def test_paused_shows_on_both_panels_the_footer_offers_resume_and_the_eta_stands_still(tmp_path):
    events_ = mid_run_events()
    now = [events_[-1].at]
    app = replay(tmp_path, events_)
    app.clock = lambda: now[0]
    async with app.run_test(size=SMALL) as pilot:
        await settled(pilot, app, len(events_))
        assert footer_keys(app).get("p") == "pause"
        eta = app.figures.eta_s
        assert eta is not None and eta > 0
        await pilot.press("p")
        await settled(pilot, app, len(events_) + 2)  # EngineStateChanged and the pause's log line
        assert app.state.engine_state == "paused"
        for panel in app.panels.values():
            assert panel.border_subtitle == "⏸ paused" and panel.has_class("-paused"), panel.border_subtitle
        await pilot.pause(0.05)
        assert footer_keys(app).get("p") == "resume", footer_keys(app)
        assert "PAUSED" in app.header.text
        for later in (60.0, 600.0):  # the wall clock moves on, the ETA does not
            now[0] = events_[-1].at + later
            app.refresh_figures()
            await pilot.pause(0.1)
            await settled(pilot, app, app.state.events_seen)
            assert app.figures.eta_s == pytest.approx(eta), later
            assert app.figures.elapsed_s == pytest.approx(now[0] - app.state.started_at)
        await pilot.press("p")
        await pilot.pause(0.1)
        assert footer_keys(app).get("p") == "pause"
        assert all(p.border_subtitle == "running" for p in app.panels.values())


def test_the_eta_leaves_out_the_time_paused():
    events_ = synthetic_events({"A": ["P", "P"], "B": ["P", "P"]}, task_ids=[f"t{i}" for i in range(6)])
    state = RunState(["A", "B"], {"A": 10**6, "B": 10**6})
    for e in events_:
        state.apply(e)
    t = state.last_at
    before = compute_figures(state.snapshot(t)).eta_s
    state.apply(ev.EngineStateChanged(state.run_id, state="paused", at=t))
    assert compute_figures(state.snapshot(t + 300)).eta_s == pytest.approx(before)
    state.apply(ev.EngineStateChanged(state.run_id, state="running", at=t + 300))
    after = compute_figures(state.snapshot(t + 300))
    assert after.eta_s == pytest.approx(before) and state.paused_s(t + 300) == pytest.approx(300)
    assert after.elapsed_s == pytest.approx(t + 300 - state.started_at)


async def test_preflight_shows_in_the_header_and_on_both_panels(tmp_path):
    start = synthetic_events({"A": [], "B": []}, task_ids=TASKS, caps=CAPS)[0]
    events_ = [start, ev.EngineStateChanged(start.run_id, state="preflight", at=start.at + 1)]
    app = replay(tmp_path, events_)
    async with app.run_test(size=SMALL) as pilot:
        await settled(pilot, app, len(events_))
        assert app.header.text.startswith("… preflight…"), app.header.text
        for panel in app.panels.values():
            assert panel.border_subtitle == "… preflight…"
            assert "preflight: checking the endpoint…" in str(panel.activity.render())
        assert footer_keys(app).get("a") == "abort"  # an abort during preflight stops it


async def test_the_projection_says_its_verdict_first_at_80_columns(tmp_path):
    events_ = synthetic_events(
        {"A": ["P", "RP", "P"], "B": ["P", "P", "P"]}, task_ids=TASKS * 2, caps={"A": 200_000, "B": 20_000}, running=1
    )
    app = make_replay(tmp_path, events_, caps={"A": 200_000, "B": 20_000})
    async with app.run_test(size=SMALL) as pilot:
        await settled(pilot, app, len(events_))
        a, b = (app.panels[n].projection.text for n in ("A", "B"))
        assert a.startswith("fits: ~") and "…" not in a, a
        assert b.startswith("censored: cap ~task") and "…" not in b, b


def make_replay(tmp_path, events_, caps):
    import dataclasses

    from agent.ledger import Ledger
    from tuiapp.live.app import make_app

    cfg = config()
    cfg = dataclasses.replace(cfg, arms=tuple(dataclasses.replace(a, cap_tokens=caps[a.name]) for a in cfg.arms))
    return make_app(cfg, Ledger(tmp_path / "l.sqlite"), ReplayEngine(events_), clock=lambda: events_[-1].at)


async def test_the_gap_line_gives_its_reason_and_the_header_counts_censored_cells(tmp_path):
    outcomes = {"A": ["P", "P", "RR", "P", "P", "RR", "P", "P"], "B": ["P", "RR", "P", "P", "P", "P", "C"]}
    events_ = synthetic_events(outcomes, task_ids=TASKS, caps=CAPS, finish=True)
    app = replay(tmp_path, events_)
    async with app.run_test(size=SMALL) as pilot:
        await settled(pilot, app, len(events_))
        gap = app.gap.text
        assert "…" not in gap and gap.endswith("no detectable difference: B not comparable"), gap
        f = app.figures
        assert f.censored_units == sum(o.censored for a in f.arms.values() for o in a.core.outcomes) > 0
        header = app.header.text
        assert f"{f.done_units} done, {f.censored_units} censored" in header, header
        assert f"/{f.total_units}" not in header  # over: the cells are done or censored, none pending


async def test_the_gap_line_says_why_there_is_no_winner_at_80_columns(tmp_path):
    outcomes = {"A": ["P", "P", "RR", "P", "P", "RR"], "B": ["P", "RR", "P", "P", "P", "P"]}
    events_ = synthetic_events(outcomes, task_ids=TASKS, caps=CAPS, running=1)
    app = replay(tmp_path, events_)
    async with app.run_test(size=SMALL) as pilot:
        await settled(pilot, app, len(events_))
        gap = app.gap.text
        assert "no detectable difference: " in gap and "…" not in gap, gap
        assert gap.endswith("< 6 decided pairs") or "decided pairs" in gap, gap
        assert "/16 done" in app.header.text and "censored" not in app.header.text


async def test_ctrl_c_aborts_and_the_view_says_what_the_abort_waits_for(tmp_path):
    events_ = mid_run_events()
    app = replay(tmp_path, events_, hold=True)
    async with app.run_test(size=SMALL) as pilot:
        await settled(pilot, app, len(events_))
        await pilot.press("ctrl+c")
        assert app.engine.commands[-1] == ("abort",) and app.quit_requested
        await wait_for(pilot, lambda: not app.is_running, what="the view to close once the run stopped")
    lines = [line for line in app.state.log if "engine aborting: " in line]
    assert len(lines) == 1 and "nothing in flight" in lines[0], lines  # a replay has no work in flight


async def test_the_cap_field_keeps_keys_typed_before_it_has_the_focus(tmp_path):
    """Keys posted in one go, as a fast typist's arrive: r, then the digits before the focus has
    moved; the digits 1 and 2 are also the app's stop-arm keys and must not stop an arm."""
    events_ = mid_run_events()
    app = replay(tmp_path, events_)
    async with app.run_test(size=SMALL) as pilot:
        await settled(pilot, app, len(events_))
        arm = app.state.arms["A"]
        app.post_message(_auto_paused("A", arm.used))
        await pilot.pause(0.1)
        modal = app.screen
        assert isinstance(modal, AutoPauseModal)
        field = modal.query_one("#new-cap", Input)
        await pilot.press("r", *"abc", "enter")  # refused: the keys are the window's again
        assert "is not a number" in str(modal.query_one("#cap-error").render())
        assert modal.query_one("#raise", Button).has_focus
        for key in ("r", "1", "2", "5", "0", "0", "0", "backspace", "0", "0"):
            app.post_message(events.Key(key, None if key == "backspace" else key))
        await pilot.pause(0.2)
        assert field.value == "1250000", field.value  # r selected the refused text: typing replaced it
        assert app.screen is modal and not app.engine.commands, app.engine.commands  # no arm stopped
        app.post_message(events.Key("enter", None))
        await pilot.pause(0.2)
        assert app.engine.commands[0] == ("raise_cap", "A", 1_250_000), app.engine.commands


def _auto_paused(arm: str, used: int):
    from tuiapp.live.messages import AutoPaused

    return AutoPaused(arm, f"auto-pause: arm {arm} near its cap", 0)
