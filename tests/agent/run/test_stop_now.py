"""Stop now with calls in flight, in-process: the lost calls are rows charged at their
reservation, every reservation is settled, and both arms' final rows are written."""

from __future__ import annotations

import json

import anyio
import pytest

from agent import events as ev
from agent.config import load_config
from agent.endpoints.scripted_server import ScriptedServer
from agent.ledger import Ledger
from agent.run.engine import RunEngine
from tests.conftest import FIXTURES
from tests.support.engine_helpers import arm_toml, write_config


async def _run_and_stop(cfg, db):
    engine, events = RunEngine(load_config(cfg), Ledger(db)), []
    reader = Ledger(db)

    async def drain():
        async for event in engine.events:
            events.append(event)

    async def stop_when_both_in_flight():
        while True:  # waits on ledger state: both arms have a call row in flight
            rows = await anyio.to_thread.run_sync(
                reader.query, "select distinct arm from calls where status = 'in_flight'"
            )
            if len(rows) == 2:
                engine.stop_now()
                return
            await anyio.sleep(0.02)

    async with anyio.create_task_group() as tg:
        tg.start_soon(drain)
        tg.start_soon(stop_when_both_in_flight)
        run_id = await engine.run()
    return engine, run_id, events


def test_stop_now_mid_call_settles_and_finalizes(tmp_path):
    with ScriptedServer([FIXTURES / "smoke"], delay_s=3.0) as server:
        cfg = write_config(
            tmp_path,
            [
                arm_toml("A", "solver", base_url=server.base_url),  # 3 s a call: no probes
                arm_toml("B", "solver", base_url=server.base_url),
            ],
            run_extra='preflight = "off"\n',
        )
        engine, run_id, events = anyio.run(_run_and_stop, cfg, tmp_path / "l.sqlite")
    ledger = Ledger(tmp_path / "l.sqlite")
    assert ledger.run(run_id)["status"] == "aborted"
    lost = ledger.query("select arm, prompt_tokens, reserved_tokens, usage_source from calls where status = 'lost'")
    assert {c["arm"] for c in lost} == {"A", "B"}
    assert all(c["prompt_tokens"] == c["reserved_tokens"] > 0 and c["usage_source"] == "reserved" for c in lost)
    assert not ledger.query("select id from calls where status = 'in_flight'")
    tasks = [t["task_id"] for t in ledger.tasks(run_id)]
    for arm in ledger.arms(run_id):
        assert arm["state"] == "aborted"
        assert json.loads(arm["unfinished_json"]) == tasks  # the in-flight task included
        assert arm["tokens_used"] == sum(c["prompt_tokens"] for c in lost if c["arm"] == arm["name"])
        runtime = engine.arms[arm["name"]]
        assert runtime.quota.reserved == 0 and runtime.quota.used == arm["tokens_used"]  # settled
    attempts = ledger.attempts(run_id)
    assert {(a["end_reason"], a["failure_class"], a["status"]) for a in attempts} == {("aborted", "aborted", "done")}
    assert [e.status for e in events if isinstance(e, ev.RunFinished)] == ["aborted"]


# -- pause and abort: nothing new starts, and the figures stay the uninterrupted run's -----------
FIGURES = ("acceptance", "qap", "retry_tax", "first_try_share", "tokens_per_attempt", "n_attempts", "total_tokens")
# Python tasks grade fastest; their visible-test output reads the same every run (node's test
# runner prints its timings, which would move a js task's token counts between two clean runs).
STEADY_TASKS = ["py-word-count", "py-tail-lines", "py-free-slots"]
SUITES = [FIXTURES / "smoke", FIXTURES / "core"]


def _retrying_config(tmp_path, server, tasks=STEADY_TASKS):
    """A fails each task once and passes the retry (retry_seed), B passes at once: retries, first
    tries and a paired comparison, all deterministic."""
    return write_config(
        tmp_path,
        [
            arm_toml("A", "second-passes", base_url=server.base_url, extra="retry_seed = true\n"),
            arm_toml("B", "solver", base_url=server.base_url, protocol="text"),
        ],
        suites=("smoke", "core"),
        tasks=list(tasks),
        max_attempts=2,
        run_extra='preflight = "off"\n',
    )


def _figures(ledger, run_id) -> dict:
    from agent.metrics.report import build_report

    arms = build_report(ledger, [run_id], with_cost=False, resamples=0)["runs"][0]["arms"]
    return {a["metrics"]["name"]: {k: a["metrics"][k] for k in FIGURES} for a in arms}


def _utc(text: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(text).timestamp()


async def _drain(engine, start, on_event=None) -> tuple[str, list]:
    events = []

    async def read():
        async for event in engine.events:
            events.append(event)
            if on_event:
                on_event(event)

    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        run_id = await start()
    return run_id, events


def _first_failure_of_a(event) -> bool:
    """A's first attempt failed: its retry is the next thing A would start."""
    return isinstance(event, ev.TaskGraded) and event.arm == "A" and not event.accepted


async def _run_with_a_pause(cfg, db, then: str):
    """Pause as A's first attempt fails; once nothing is in flight, `then` ("resume" or "abort")."""
    engine = RunEngine(load_config(cfg), Ledger(db))
    paused = anyio.Event()

    def on_event(event):
        if _first_failure_of_a(event) and not paused.is_set():
            engine.pause("paused by the test")
            paused.set()

    async def then_when_idle():
        await paused.wait()
        while engine.work.waiting_for():  # the calls and grades in flight at the pause finish
            await anyio.sleep(0.02)
        await anyio.sleep(0.5)  # not a synchronisation: a window in which a wrong start would show
        getattr(engine, then)()

    async with anyio.create_task_group() as tg:
        tg.start_soon(then_when_idle)
        run_id, events = await _drain(engine, engine.run, on_event)
    return run_id, events


def _nothing_started_while_paused(ledger, run_id, events, until: str) -> None:
    pause = next(i for i, e in enumerate(events) if isinstance(e, ev.EngineStateChanged) and e.state == "paused")
    end = next(
        i for i, e in enumerate(events[pause:], pause) if isinstance(e, ev.EngineStateChanged) and e.state == until
    )
    assert not [e for e in events[pause:end] if isinstance(e, ev.AttemptStarted)], "an attempt started while paused"
    t0, t1 = events[pause].at, events[end].at - 0.001  # the ledger's times are cut to the millisecond
    assert not [a for a in ledger.attempts(run_id) if t0 < _utc(a["started_utc"]) < t1]
    calls = ledger.query("select started_utc from calls where run_id = ?", [run_id])
    assert not [c for c in calls if t0 < _utc(c["started_utc"]) < t1], "a model call was sent while paused"


def test_no_attempt_or_call_starts_while_paused_nor_after_the_abort_that_follows(tmp_path):
    with ScriptedServer(SUITES, delay_s=0.1) as server:
        cfg = _retrying_config(tmp_path, server, tasks=STEADY_TASKS[:1])
        run_id, events = anyio.run(_run_with_a_pause, cfg, tmp_path / "l.sqlite", "abort")
    ledger = Ledger(tmp_path / "l.sqlite")
    _nothing_started_while_paused(ledger, run_id, events, until="aborting")
    abort = next(i for i, e in enumerate(events) if isinstance(e, ev.EngineStateChanged) and e.state == "aborting")
    assert not [e for e in events[abort:] if isinstance(e, ev.AttemptStarted)]
    rows = ledger.attempts(run_id)
    assert ledger.run(run_id)["status"] == "aborted"
    assert not [a for a in rows if not a["calls"]], "a 0-call attempt row: it started after the pause"
    a = [r for r in rows if r["arm"] == "A"]
    assert [(r["attempt_no"], r["failure_class"]) for r in a] == [(1, "reasoning")]  # its retry never started


def test_no_attempt_starts_after_an_abort_and_the_lost_ones_stay_out_of_tokens_per_attempt(tmp_path):
    with ScriptedServer(SUITES, delay_s=0.1) as server:
        cfg = _retrying_config(tmp_path, server, tasks=STEADY_TASKS[:2])
        engine = RunEngine(load_config(cfg), Ledger(tmp_path / "l.sqlite"))
        run_id, events = anyio.run(
            lambda: _drain(engine, engine.run, lambda e: _first_failure_of_a(e) and engine.abort())
        )
    ledger = Ledger(tmp_path / "l.sqlite")
    assert ledger.run(run_id)["status"] == "aborted"
    abort = next(i for i, e in enumerate(events) if isinstance(e, ev.EngineStateChanged) and e.state == "aborting")
    assert not [e for e in events[abort:] if isinstance(e, ev.AttemptStarted)], "an attempt started after abort"
    rows = ledger.attempts(run_id)
    assert not [a for a in rows if _utc(a["started_utc"]) > events[abort].at]
    figures = _figures(ledger, run_id)
    for arm in ("A", "B"):
        model = [a for a in rows if a["arm"] == arm and a["failure_class"] not in ("aborted", "censored")]
        assert figures[arm]["n_attempts"] == len(model) == figures[arm]["tokens_per_attempt"]["n"]


@pytest.fixture(scope="module")
def clean_figures(tmp_path_factory):
    """The uninterrupted run's figures, and its config (one scripted server for the module)."""
    folder = tmp_path_factory.mktemp("clean")
    with ScriptedServer(SUITES, delay_s=0.1) as server:
        cfg = _retrying_config(folder, server)
        engine = RunEngine(load_config(cfg), Ledger(folder / "l.sqlite"))
        run_id, _ = anyio.run(lambda: _drain(engine, engine.run))
        yield _figures(Ledger(folder / "l.sqlite"), run_id), server, cfg


@pytest.mark.slow
def test_a_paused_run_has_the_uninterrupted_runs_figures(tmp_path, clean_figures):
    expected, server, cfg = clean_figures
    run_id, events = anyio.run(_run_with_a_pause, cfg, tmp_path / "l.sqlite", "resume")
    ledger = Ledger(tmp_path / "l.sqlite")
    _nothing_started_while_paused(ledger, run_id, events, until="running")
    assert ledger.run(run_id)["status"] == "finished"
    assert _figures(ledger, run_id) == expected


@pytest.mark.slow
def test_an_aborted_run_resumed_has_the_uninterrupted_runs_figures(tmp_path, clean_figures):
    """What the abort cut off is lost; `resume` retries it under its own number (attempt_no never
    passes max_attempts) and the figures are those of a run that was never aborted."""
    from agent.run.resume import engine_for_resume, resume_run

    expected, server, cfg = clean_figures
    engine = RunEngine(load_config(cfg), Ledger(tmp_path / "l.sqlite"))
    run_id, _ = anyio.run(lambda: _drain(engine, engine.run, lambda e: _first_failure_of_a(e) and engine.abort()))
    ledger = Ledger(tmp_path / "l.sqlite")
    assert ledger.run(run_id)["status"] == "aborted"
    resumed = engine_for_resume(ledger, run_id)
    anyio.run(lambda: _drain(resumed, lambda: resume_run(resumed)))
    ledger = Ledger(tmp_path / "l.sqlite")
    assert ledger.run(run_id)["status"] == "finished"
    assert max(a["attempt_no"] for a in ledger.attempts(run_id)) <= 2
    assert _figures(ledger, run_id) == expected


@pytest.mark.slow  # waits out a pause longer than the attempt's time limit
def test_time_paused_is_not_taken_from_the_attempts_time_limit(tmp_path):
    """Paused mid-attempt for longer than its whole time limit, the attempt goes on after resume
    and ends as the model ended it, not at `time_limit`."""
    with ScriptedServer(SUITES, delay_s=0.2) as server:
        cfg = write_config(
            tmp_path,
            [arm_toml("A", "solver", base_url=server.base_url)],
            tasks=["py-word-count"],
            max_attempts=1,
            run_extra='preflight = "off"\n',
        )
        cfg.write_text(cfg.read_text().replace("attempt_timeout_s = 120", "attempt_timeout_s = 8"))
        engine = RunEngine(load_config(cfg), Ledger(tmp_path / "l.sqlite"))
        paused = anyio.Event()

        def on_event(event):
            if isinstance(event, ev.CallFinished) and not paused.is_set():
                engine.pause("paused by the test")
                paused.set()

        async def main():
            async def resume_later():
                await paused.wait()
                await anyio.sleep(9)  # the scenario, not a synchronisation: longer than the limit
                engine.resume()

            async with anyio.create_task_group() as tg:
                tg.start_soon(resume_later)
                return await _drain(engine, engine.run, on_event)

        run_id, _ = anyio.run(main)
    (attempt,) = Ledger(tmp_path / "l.sqlite").attempts(run_id)
    assert (attempt["end_reason"], attempt["failure_class"]) == ("finished", "accepted"), attempt["end_detail"]
    assert attempt["duration_ms"] > 9000
