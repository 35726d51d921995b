"""Every control of the live view, by Pilot, against a real RunEngine and the scripted server:
p pause / resume, a abort (confirmed and declined), 1 / 2 stop an arm, enter opens a task's
attempts, q (and ctrl+q) asks while the run is live and quits at once when it is over."""

from __future__ import annotations

import os
import signal

import pytest

from agent.metrics.report import build_report
from tuiapp.live.modals import AttemptsModal, ConfirmModal, FatalModal

from .conftest import SIZE, real_app, wait_for

pytestmark = pytest.mark.anyio


def started(app) -> bool:
    return bool(app.state.run_id) and app.state.engine_state == "running"


async def finish_by_abort(pilot, app, engine) -> None:
    engine.abort()
    await wait_for(pilot, lambda: not app.state.live, what="the run to end")


async def test_p_pauses_the_engine_and_p_again_resumes(tmp_path, slow_server):
    app, engine, ledger = real_app(tmp_path, base_url=slow_server.base_url, a="never-finish")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: started(app) and len(slow_server.requests) >= 2, what="the first calls")
        await pilot.press("p")
        assert engine.state == "paused"
        await wait_for(pilot, lambda: app.header.has_class("-paused"), what="the header to say paused")
        assert all(panel.border_subtitle == "⏸ paused" for panel in app.panels.values())
        assert app.screen.active_bindings["p"].binding.description == "resume"
        await pilot.pause(0.5)  # calls in flight land
        calls = len(slow_server.requests)
        await pilot.pause(0.6)
        assert len(slow_server.requests) == calls, "no new model call while paused"
        await pilot.press("p")
        assert engine.state == "running"
        await wait_for(pilot, lambda: len(slow_server.requests) > calls, what="calls after resuming")
        assert not app.header.has_class("-paused")
        assert app.screen.active_bindings["p"].binding.description == "pause"
        assert any(line.endswith("you: pause") for line in app.state.log)
        await finish_by_abort(pilot, app, engine)


async def test_a_asks_and_n_keeps_the_run_going(tmp_path, slow_server):
    app, engine, ledger = real_app(tmp_path, base_url=slow_server.base_url, a="never-finish")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: started(app), what="the run to start")
        await pilot.press("a")
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("n")
        assert not isinstance(app.screen, ConfirmModal)
        assert engine.state == "running"
        await finish_by_abort(pilot, app, engine)


async def test_a_then_y_aborts_and_the_ledger_keeps_the_attempts(tmp_path, slow_server):
    app, engine, ledger = real_app(tmp_path, base_url=slow_server.base_url, a="never-finish")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: started(app) and len(slow_server.requests) >= 3, what="some calls")
        await pilot.press("a")
        await pilot.press("y")
        assert engine.state == "aborting"
        await wait_for(pilot, lambda: app.header.has_class("-aborted"), what="the header to say aborted")
        assert app.state.status == "aborted"
        assert app.check_action("pause", ()) is False  # run controls leave the footer
        assert app.check_action("resume", ()) is False
    run = ledger.run(engine.run_id)
    assert run["status"] == "aborted"
    attempts = ledger.attempts(engine.run_id)
    assert {a["arm"] for a in attempts} == {"A", "B"}
    assert all(a["calls"] >= 1 for a in attempts)
    report = build_report(ledger, [engine.run_id], with_cost=False, resamples=200)
    assert report["runs"][0]["run"]["status"] == "aborted"


@pytest.mark.parametrize("key, arm, other", [("1", "A", "B"), ("2", "B", "A")])
async def test_1_and_2_stop_one_arm_and_the_other_goes_on(tmp_path, slow_server, key, arm, other):
    # both arms never finish, and with 400 turns (60 s at the server's pace) the other arm cannot
    # reach its turn limit while the stop is on its way, however busy the machine
    app, engine, ledger = real_app(tmp_path, base_url=slow_server.base_url, a="never-finish", max_turns=400)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: started(app) and len(slow_server.requests) >= 2, what="the first calls")
        await pilot.press(key)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal), what="the confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: engine.arms[arm].state == "stopped", what=f"the engine to stop arm {arm}")
        assert engine.arms[other].state == "running"
        assert app.state.arms[arm].state in ("stopping", "stopped")
        assert app.check_action("stop_arm", (int(key) - 1,)) is None  # greyed out: already stopping
        await wait_for(pilot, lambda: app.state.arms[arm].state == "stopped", what=f"arm {arm} to stop")
        assert app.state.arms[other].state == "running"
        await finish_by_abort(pilot, app, engine)
    arms = {row["name"]: row for row in ledger.arms(engine.run_id)}
    assert arms[arm]["state"] == "stopped"


async def test_enter_on_a_task_opens_its_attempts_from_the_ledger(tmp_path, slow_server):
    app, engine, ledger = real_app(tmp_path, base_url=slow_server.base_url, a="never-finish")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(
            pilot, lambda: len(app.grid.task_ids) == 1 and len(slow_server.requests) >= 2, what="a running attempt"
        )
        await pilot.press("enter")
        assert isinstance(app.screen, AttemptsModal)
        body = app.screen.query_one("#attempts-body")
        await wait_for(pilot, lambda: "A attempt 1" in str(body.render()), what="the attempts to load")
        assert "B attempt 1" in str(body.render())
        await pilot.press("escape")
        assert not isinstance(app.screen, AttemptsModal)
        await finish_by_abort(pilot, app, engine)


async def test_q_asks_while_live_and_quitting_aborts_then_exits(tmp_path, slow_server):
    app, engine, ledger = real_app(tmp_path, base_url=slow_server.base_url, a="never-finish")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: started(app), what="the run to start")
        await pilot.press("q")
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("n")
        assert app.is_running and engine.state == "running"
        await pilot.press("ctrl+q")  # Textual's own quit key asks too
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("y")
        assert engine.state == "aborting"
        await wait_for(pilot, lambda: not app.is_running, what="the app to exit")
    assert app.return_value == engine.run_id
    assert ledger.run(engine.run_id)["status"] == "aborted"


async def test_q_after_the_run_is_over_quits_without_asking(tmp_path, slow_server):
    app, engine, ledger = real_app(tmp_path, base_url=slow_server.base_url, b="wrong")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.state.status == "finished", what="the run to finish")
        assert [(c.status, c.attempt) for c in (app.state.arms["A"].cells["py-word-count"],)] == [("accepted", 1)]
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running, what="the app to exit")
    assert app.return_value == engine.run_id
    assert ledger.run(engine.run_id)["status"] == "finished"


async def test_an_engine_error_shows_in_a_modal_and_q_quits(tmp_path, slow_server):
    app, engine, ledger = real_app(tmp_path, base_url=slow_server.base_url, tasks=("no-such-task",))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, FatalModal) and app.screen.query(".body"),
            what="the fatal-error modal",
        )
        assert "unknown task ids ['no-such-task']" in app.fatal
        assert "unknown task ids" in str(app.screen.query_one(".body").render())
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running, what="the app to exit")
    assert ledger.runs() == []


async def test_q_again_while_aborting_stops_now(tmp_path, slow_server):
    app, engine, ledger = real_app(tmp_path, base_url=slow_server.base_url, a="never-finish")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: started(app) and len(slow_server.requests) >= 2, what="the first calls")
        await pilot.press("q", "y")
        assert app.quit_requested and engine.state == "aborting"
        await pilot.press("q")  # no second question: calls in flight are cancelled
        await wait_for(pilot, lambda: not app.is_running, what="the app to exit")
    assert ledger.run(engine.run_id)["status"] == "aborted"


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM])
async def test_a_hang_up_or_sigterm_stops_now_and_the_view_closes(tmp_path, slow_server, signum):
    # the terminal closed (SIGHUP) or the process was asked to end: by default either ended the
    # process mid-write and left the ledger's WAL unfolded
    app, engine, ledger = real_app(tmp_path, base_url=slow_server.base_url, a="never-finish")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: started(app) and len(slow_server.requests) >= 2, what="the first calls")
        os.kill(os.getpid(), signum)
        await wait_for(pilot, lambda: not app.is_running, what="the app to exit")
    assert app.quit_requested and app.return_value == engine.run_id
    assert ledger.run(engine.run_id)["status"] == "aborted"
    assert not ledger.query("select * from calls where status = 'in_flight'")


async def test_ctrl_c_aborts_saying_what_it_waits_for_and_ctrl_c_again_stops_now(tmp_path):
    """Each call takes 3 s: the abort waits for the calls in flight and says so; the second Ctrl-C
    does not wait for them. No attempt starts after the first Ctrl-C."""
    from agent.endpoints.scripted_server import ScriptedServer

    from .conftest import SMOKE

    with ScriptedServer([SMOKE], delay_s=3.0) as server:
        app, engine, ledger = real_app(
            tmp_path, base_url=server.base_url, a="never-finish", max_turns=200, preflight="off"
        )
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: started(app) and len(engine.work.waiting_for()) == 2, what="calls in flight")
            await pilot.press("ctrl+c")
            assert engine.state == "aborting" and app.quit_requested
            await wait_for(pilot, lambda: any("engine aborting" in line for line in app.state.log), what="the abort")
            said = next(line for line in app.state.log if "engine aborting" in line)
            assert "aborting: waiting for a call of " in said and said.endswith("Ctrl-C again to stop now"), said
            assert "a call of A py-word-count #1 (up to 60 s)" in said and "a call of B py-word-count #1" in said
            await pilot.press("ctrl+c")
            await wait_for(
                pilot, lambda: not app.is_running, timeout=2.5, what="the view to close before the calls end"
            )
    assert ledger.run(engine.run_id)["status"] == "aborted"
    attempts = ledger.attempts(engine.run_id)
    assert len(attempts) == 2 and {a["failure_class"] for a in attempts} == {"aborted"}
    assert not ledger.query("select id from calls where status = 'in_flight'")


async def test_b_after_the_run_opens_the_browser_and_b_comes_back(tmp_path, slow_server):
    from tuiapp.browse.run import RunScreen

    app, engine, ledger = real_app(tmp_path, base_url=slow_server.base_url, a="never-finish")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: started(app), what="the run to start")
        await pilot.press("b")
        assert not isinstance(app.screen, RunScreen), "b does nothing while the run is live"
        await finish_by_abort(pilot, app, engine)
        await pilot.press("b")
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen), what="the browser's run screen")
        await pilot.press("b")
        await wait_for(pilot, lambda: not isinstance(app.screen, RunScreen), what="back to the live view")
