"""The auto-pause modal against a real RunEngine: arm A (the scripted solver) has a small cap,
so the engine pauses itself when A reaches auto_pause_share of it; each of the modal's four
choices (continue, raise the cap, stop the arm, abort) must reach the engine and the ledger."""
from __future__ import annotations

import pytest

from tuiapp.live.modals import AutoPauseModal

from .conftest import SIZE, real_app, wait_for

pytestmark = pytest.mark.anyio
CAP = 4_000  # the solver spends ~2,500 tokens on py-word-count, reserving ~1,600 per call
SHARE = 0.5


async def auto_paused(pilot, app, engine) -> AutoPauseModal:
    await wait_for(pilot, lambda: isinstance(app.screen, AutoPauseModal), what="the auto-pause modal")
    assert engine.state == "paused"
    assert app.header.has_class("-paused")
    modal = app.screen
    assert modal.arm == "A"
    text = str(modal.query_one(".body").render())
    assert "of its cap of 4,000" in text and "Projection:" in text
    return modal


async def test_continue_resumes_the_run(tmp_path, slow_server):
    app, engine, ledger = real_app(tmp_path, base_url=slow_server.base_url, cap_a=CAP, share=SHARE, b="wrong")
    async with app.run_test(size=SIZE) as pilot:
        await auto_paused(pilot, app, engine)
        await pilot.press("c")
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
        modal.query_one("#new-cap").value = ""
        await pilot.press(*"20k", "enter")
        assert not isinstance(app.screen, AutoPauseModal)
        assert engine.arms["A"].quota.cap == 20_000 and engine.state == "running"
        await wait_for(pilot, lambda: app.state.status == "finished", what="the run to finish")
        assert app.state.arms["A"].cap == 20_000
        assert app.state.arms["A"].cells["py-word-count"].status == "accepted"
    arm_a = next(r for r in ledger.arms(engine.run_id) if r["name"] == "A")
    assert arm_a["cap_tokens"] == 20_000 and arm_a["censored"] == 0


async def test_stop_arm_stops_that_arm_and_the_other_finishes(tmp_path, slow_server):
    app, engine, ledger = real_app(tmp_path, base_url=slow_server.base_url, cap_a=CAP, share=SHARE, b="wrong")
    async with app.run_test(size=SIZE) as pilot:
        await auto_paused(pilot, app, engine)
        await pilot.press("s")
        assert engine.arms["A"].state == "stopped" and engine.state == "running"
        await wait_for(pilot, lambda: app.state.status == "finished", what="the run to finish")
        assert app.state.arms["A"].state == "stopped"
        assert app.state.arms["B"].state == "finished"
        assert app.state.arms["A"].cells["py-word-count"].status == "aborted"
    arms = {r["name"]: r for r in ledger.arms(engine.run_id)}
    assert arms["A"]["state"] == "stopped" and arms["B"]["state"] == "finished"


async def test_abort_from_the_modal_aborts_the_run(tmp_path, slow_server):
    app, engine, ledger = real_app(tmp_path, base_url=slow_server.base_url, cap_a=CAP, share=SHARE,
                                   b="never-finish")
    async with app.run_test(size=SIZE) as pilot:
        await auto_paused(pilot, app, engine)
        await pilot.press("a")
        assert engine.state == "aborting"
        await wait_for(pilot, lambda: app.state.status == "aborted", what="the run to abort")
    assert ledger.run(engine.run_id)["status"] == "aborted"
    assert {a["arm"] for a in ledger.attempts(engine.run_id)} == {"A", "B"}
