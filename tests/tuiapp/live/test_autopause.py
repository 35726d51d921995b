"""The auto-pause window against a real RunEngine and the scripted server: arm A (the scripted
solver) has a small cap, so the engine stops at A's choice point before a call's reservation
would reach auto_pause_share of it — or, with the share at 1.0, before a reservation that does
not fit — and nothing is censored until the user chooses. Each of the window's four choices
(continue, raise the cap, stop the arm, abort) must reach the engine and the ledger."""

from __future__ import annotations

import json

import pytest
from textual.widgets import Button, Input, Static

from agent.metrics.render import render_report
from agent.metrics.report import build_report
from tuiapp.live.modals import AutoPauseModal

from .conftest import SIZE, real_app, wait_for

pytestmark = pytest.mark.anyio
CAP = 4_000  # the solver spends ~2,500 tokens on py-word-count, reserving ~1,600 per call
SHARE = 0.5


def _shown(app, engine) -> bool:
    """The modal is mounted with its body, and the engine and the header both say paused."""
    screen = app.screen
    return (
        isinstance(screen, AutoPauseModal)
        and screen.is_mounted
        and bool(screen.query(".body"))
        and engine.state == "paused"
        and app.header.has_class("-paused")
    )


async def auto_paused(pilot, app, engine) -> AutoPauseModal:
    await wait_for(pilot, lambda: _shown(app, engine), what="the auto-pause modal, mounted, with the run paused")
    modal = app.screen
    assert modal.arm == "A"
    text = str(modal.query_one(".body", Static).content)
    assert (
        f"/ cap {engine.arms['A'].quota.cap:,}" in text and "Its next call reserves" in text and "Projection:" in text
    )
    assert engine.arms["A"].state == "running", "nothing is censored before the user chooses"
    return modal


async def test_continue_resumes_the_run(tmp_path, slow_server):
    app, engine, ledger = real_app(tmp_path, base_url=slow_server.base_url, cap_a=CAP, share=SHARE, b="wrong")
    async with app.run_test(size=SIZE) as pilot:
        await auto_paused(pilot, app, engine)
        await pilot.press("c")
        await wait_for(pilot, lambda: engine.state != "paused", what="the engine to resume")
        assert engine.state == "running"
        await wait_for(pilot, lambda: app.state.status == "finished", what="the run to finish")
        assert not isinstance(app.screen, AutoPauseModal), "continuing does not pause for the same arm again"
        assert any("auto-pause of arm A: continue" in line for line in app.state.log)
    assert ledger.run(engine.run_id)["status"] == "finished"


async def test_raise_cap_typed_in_reaches_the_engine_and_the_ledger(tmp_path, slow_server):
    app, engine, ledger = real_app(tmp_path, base_url=slow_server.base_url, cap_a=CAP, share=SHARE, b="wrong")
    async with app.run_test(size=SIZE) as pilot:
        modal = await auto_paused(pilot, app, engine)
        await pilot.press("r")  # focuses the cap field
        await pilot.press(*"3000", "enter")
        assert "not above the current cap" in str(modal.query_one("#cap-error").render())
        assert app.screen is modal and engine.state == "paused"
        assert not modal.query_one(Input).has_focus, "after an error the keys are the window's again"
        assert modal.query_one("#raise", Button).has_focus
        await pilot.press("r")
        assert modal.query_one(Input).has_focus
        modal.query_one("#new-cap").value = ""
        await pilot.press(*"20k", "enter")
        await wait_for(
            pilot,
            lambda: not isinstance(app.screen, AutoPauseModal) and engine.state != "paused",
            what="the window to close and the engine to resume",
        )
        assert engine.arms["A"].quota.cap == 20_000 and engine.state == "running"
        await wait_for(pilot, lambda: app.state.status == "finished", what="the run to finish")
        assert app.state.arms["A"].cap == 20_000
        assert app.state.arms["A"].cells["py-word-count"].status == "accepted"
    arm_a = next(r for r in ledger.arms(engine.run_id) if r["name"] == "A")
    assert arm_a["cap_tokens"] == 20_000 and arm_a["censored"] == 0
    (raised,) = json.loads(arm_a["cap_raises_json"])
    assert (raised["from"], raised["to"]) == (CAP, 20_000) and 0 < raised["used"] < CAP and raised["utc"]
    # the report states the raise, and the comparison that the arms ran under different caps
    report = build_report(ledger, [engine.run_id], resamples=0)
    text = render_report(report, "text")
    (line,) = [x for x in text.splitlines() if x.startswith("  A: scripted")]
    assert f"; cap {CAP:,} tokens configured, raised to 20,000 at 20" in line and " UTC (" in line
    (comparison,) = report["runs"][0]["comparisons"]
    assert "different caps: A 4,000 tokens configured, raised to 20,000" in comparison["verdict"]["text"]


async def test_stop_arm_stops_that_arm_and_the_other_finishes(tmp_path, slow_server):
    app, engine, ledger = real_app(tmp_path, base_url=slow_server.base_url, cap_a=CAP, share=SHARE, b="wrong")
    async with app.run_test(size=SIZE) as pilot:
        await auto_paused(pilot, app, engine)
        await pilot.press("s")
        await wait_for(pilot, lambda: engine.arms["A"].state == "stopped", what="the engine to stop arm A")
        assert engine.state == "running"
        await wait_for(pilot, lambda: app.state.status == "finished", what="the run to finish")
        assert app.state.arms["A"].state == "stopped"
        assert app.state.arms["B"].state == "finished"
        assert app.state.arms["A"].cells["py-word-count"].status == "aborted"
    arms = {r["name"]: r for r in ledger.arms(engine.run_id)}
    assert arms["A"]["state"] == "stopped" and arms["B"]["state"] == "finished"


async def test_abort_from_the_modal_aborts_the_run(tmp_path, slow_server):
    app, engine, ledger = real_app(tmp_path, base_url=slow_server.base_url, cap_a=CAP, share=SHARE, b="never-finish")
    async with app.run_test(size=SIZE) as pilot:
        await auto_paused(pilot, app, engine)
        await pilot.press("a")
        await wait_for(pilot, lambda: engine.state != "paused", what="the engine to take the abort")
        assert engine.state in ("aborting", "aborted")
        await wait_for(pilot, lambda: app.state.status == "aborted", what="the run to abort")
    assert ledger.run(engine.run_id)["status"] == "aborted"
    assert {a["arm"] for a in ledger.attempts(engine.run_id)} == {"A", "B"}


async def test_a_reservation_that_jumps_past_the_cap_opens_the_window_before_censoring(tmp_path, slow_server):
    """The share alone never pauses here (auto_pause_share = 1.0): A goes from about half its cap
    straight to a call whose reservation does not fit. The window opens first; continue then
    censors as before."""
    app, engine, ledger = real_app(tmp_path, base_url=slow_server.base_url, cap_a=3_000, share=1.0, b="wrong")
    async with app.run_test(size=(80, 24)) as pilot:
        modal = await auto_paused(pilot, app, engine)
        arm = engine.arms["A"]
        assert arm.quota.used + modal.next_call > arm.quota.cap > arm.quota.used
        assert "past the cap" in str(modal.query_one(".body", Static).content)
        assert ledger.query("select censored from arms where name = 'A'")[0]["censored"] == 0
        assert f"({modal.share_text})" in app.panels["A"].meter.numbers  # the window's share is the meter's
        await pilot.press("c")
        await wait_for(pilot, lambda: app.state.status == "finished", what="the run to finish")
        assert app.state.arms["A"].state == "censored"
        log = list(app.state.log)
        paused_at = next(i for i, line in enumerate(log) if "auto-pause: arm A" in line)
        censored_at = next(i for i, line in enumerate(log) if "arm A censored" in line)
        assert paused_at < censored_at
    arm_a = next(r for r in ledger.arms(engine.run_id) if r["name"] == "A")
    assert arm_a["censored"] == 1 and "exceeds it" in arm_a["state_reason"]
