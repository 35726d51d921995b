"""Stop now with calls in flight, in-process: the lost calls are rows charged at their
reservation, every reservation is settled, and both arms' final rows are written."""

from __future__ import annotations

import json

import anyio

from agent import events as ev
from agent.config import load_config
from agent.endpoints.scripted_server import ScriptedServer
from agent.ledger import Ledger
from agent.run.engine import RunEngine
from tests.agent.engine_helpers import arm_toml, write_config
from tests.conftest import FIXTURES


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
