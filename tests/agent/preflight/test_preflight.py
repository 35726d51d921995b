"""Preflight end to end: scripted servers that misreport (started by quotabench, real loopback HTTP),
a real SQLite ledger, the engine and the CLI (issue 17)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import anyio
import pytest

from agent.config import load_config
from agent.ledger import Ledger
from agent.ledger.writer import AsyncLedger
from agent.preflight import preflight_standalone
from agent.run.prepare import load_tasks
from agent.run.resume import engine_for_resume, resume_run
from tests.conftest import ROOT
from tests.support.engine_helpers import arm_toml, run_sync, write_config

SCRIPTED = {  # arm name -> (model, extra arm keys, [arms.scripted] switches)
    "clean": ("solver", "", ""),
    "model": ("solver", "", 'report_model = "gpt-4o"'),
    "ctx": ("solver", "context_tokens = 4096\n", "context_limit = 2000"),
    "small": ("solver", "context_tokens = 4096\n", "context_limit = 600"),
    "notools": ("solver", "", "tool_calls = false"),
    "nousage": ("solver", "", "stream_usage = false"),
    "serial": ("solver", "max_concurrency = 2\n", "slots = 1\ndelay_s = 0.1"),
}


def scripted_arm(name: str, model: str, extra: str = "", switches: str = "") -> str:
    table = f"[arms.scripted]\n{switches}\n" if switches else ""
    return arm_toml(name, model, extra=extra + table)


def _checks(result) -> dict:
    return {c.name: c for c in result.checks}


def test_preflight_names_each_difference_of_a_misreporting_server(tmp_path):
    cfg = write_config(
        tmp_path, [scripted_arm(name, *spec) for name, spec in SCRIPTED.items()], tasks=["py-word-count"]
    )
    config = load_config(cfg)
    db = tmp_path / "l.sqlite"
    lines: list[str] = []
    results = anyio.run(
        lambda: preflight_standalone(
            config, load_tasks(config), AsyncLedger(Ledger(db)), lambda arm, line: lines.append(line)
        )
    )
    by_arm = {r.arm: r for r in results}

    assert by_arm["clean"].verdict == "ok" and not by_arm["clean"].invalidating
    model = _checks(by_arm["model"])["model"]
    assert (model.status, model.invalidating) == ("differs", True) and "gpt-4o" in model.observed
    ctx = _checks(by_arm["ctx"])["context"]
    assert (ctx.status, ctx.invalidating) == ("differs", False) and "refused" in ctx.observed
    small = _checks(by_arm["small"])["context"]
    assert small.invalidating and "largest first request" in small.observed
    tools = _checks(by_arm["notools"])["tool calls"]
    assert tools.invalidating and "never returned native tool calls" in tools.observed
    usage = _checks(by_arm["nousage"])["stream usage"]
    assert (usage.status, usage.invalidating) == ("differs", False)
    slots = _checks(by_arm["serial"])["parallel slots"]
    assert slots.status == "differs" and "queue" in slots.observed
    for name in ("ctx", "nousage", "serial"):  # differences, not invalidating
        assert by_arm[name].verdict == "differs"
    assert {r.arm for r in results if r.invalidating} == {"model", "small", "notools"}

    assert any(line.startswith("preflight arm serial") for line in lines)
    assert any("differs" in line and "parallel slots" in line for line in lines)
    ledger = Ledger(db)
    rows = {r["arm"]: r for r in ledger.query("select * from preflights")}
    assert set(rows) == set(SCRIPTED) and all(r["run_id"] is None for r in rows.values())
    assert rows["model"]["verdict"] == "invalidating" and rows["clean"]["verdict"] == "ok"
    for name, result in by_arm.items():
        calls = ledger.query("select * from calls where preflight_id = ?", [rows[name]["id"]])
        assert calls and all(c["kind"] == "preflight" and c["attempt_id"] is None for c in calls)
        assert sum(c["prompt_tokens"] + c["completion_tokens"] for c in calls) == result.tokens > 0
        assert len(calls) == result.calls == rows[name]["calls"]
        assert {c["check"] for c in json.loads(rows[name]["checks_json"])} >= {"model", "context", "tool calls"}


def _cli(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def test_run_refuses_an_invalidating_mismatch_with_one_line_and_exit_2(tmp_path):
    cfg = write_config(
        tmp_path,
        [scripted_arm("A", "solver", "", 'report_model = "gpt-4o"'), scripted_arm("B", "solver")],
        tasks=["py-word-count"],
    )
    db = tmp_path / "l.sqlite"
    done = _cli("run", cfg, "--db", db, "--headless")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("quotabench: preflight refused the run: arm A model")
    assert "gpt-4o" in done.stderr and "--force" in done.stderr and "Traceback" not in done.stderr
    assert "preflight arm A" in done.stdout and "verdict: invalidating" in done.stdout
    ledger = Ledger(db)
    (run,) = ledger.runs()
    assert run["status"] == "refused" and not ledger.attempts(run["id"])
    assert {a["state"] for a in ledger.arms(run["id"])} == {"refused"}
    assert all(a["tokens_used"] == 0 for a in ledger.arms(run["id"]))  # preflight is not charged
    spent = ledger.query(
        "select count(*) n, sum(prompt_tokens + completion_tokens) t from calls "
        "where run_id = ? and kind = 'preflight'",
        [run["id"]],
    )[0]
    assert spent["n"] > 0 and spent["t"] > 0
    alone = _cli("preflight", cfg, "--db", db)
    assert alone.returncode == 2 and alone.stderr.count("\n") == 1 and "would invalidate a run" in alone.stderr
    assert _cli("run", cfg, "--db", db, "--force", "--no-preflight").returncode == 2  # one or the other


def test_preflight_tokens_are_recorded_but_never_charged_to_the_cap(tmp_path):
    cfg = write_config(tmp_path, [arm_toml("A", "solver", cap=4_000)], tasks=["py-word-count"], max_attempts=1)
    _, run_id, events = run_sync(cfg, tmp_path / "l.sqlite")
    ledger = Ledger(tmp_path / "l.sqlite")
    (arm,) = ledger.arms(run_id)
    attempts = sum(a["total_tokens"] for a in ledger.attempts(run_id))
    by_kind = {
        r["kind"]: r["n"]
        for r in ledger.query(
            "select kind, sum(prompt_tokens + completion_tokens) n from calls where run_id = ? group by kind", [run_id]
        )
    }
    assert arm["censored"] == 0 and arm["state"] == "finished" and ledger.attempts(run_id)[0]["accepted"] == 1
    assert arm["tokens_used"] == attempts == by_kind["attempt"]
    assert by_kind["preflight"] > 0 and by_kind["preflight"] + attempts > arm["cap_tokens"]  # charged, it would censor
    assert (
        arm["server_session_id"]
        and ledger.query("select count(distinct server_session_id) n from calls where run_id = ?", [run_id])[0]["n"]
        == 1
    )
    assert any("preflight spent" in getattr(e, "text", "") for e in events)


def test_force_runs_anyway_off_skips_and_a_refused_run_resumes_with_force(tmp_path):
    arms = [scripted_arm("A", "solver", "", "tool_calls = false")]
    forced = write_config(tmp_path, arms, tasks=["py-word-count"], max_attempts=1, run_extra='preflight = "force"\n')
    _, run_id, events = run_sync(forced, tmp_path / "l.sqlite")
    ledger = Ledger(tmp_path / "l.sqlite")
    assert ledger.run(run_id)["status"] == "finished" and ledger.attempts(run_id)
    assert ledger.query("select forced, verdict from preflights where run_id = ?", [run_id]) == [
        {"forced": 1, "verdict": "invalidating"}
    ]
    assert any("running anyway" in getattr(e, "text", "") for e in events)

    off = write_config(tmp_path, arms, tasks=["py-word-count"], max_attempts=1, run_extra='preflight = "off"\n')
    _, run_off, _ = run_sync(off, tmp_path / "l.sqlite")
    assert not ledger.query("select * from preflights where run_id = ?", [run_off])
    assert not ledger.query("select * from calls where run_id = ? and kind = 'preflight'", [run_off])

    refused = write_config(tmp_path, arms, tasks=["py-word-count"], max_attempts=1)
    _, run_refused, _ = run_sync(refused, tmp_path / "l.sqlite")
    assert ledger.run(run_refused)["status"] == "refused"
    engine = engine_for_resume(ledger, run_refused)
    engine.config = dataclasses.replace(engine.config, preflight="force")

    async def resume():
        async with anyio.create_task_group() as tg:

            async def drain():
                async for _ in engine.events:
                    pass

            tg.start_soon(drain)
            await resume_run(engine)

    anyio.run(resume)
    assert ledger.run(run_refused)["status"] == "finished" and ledger.attempts(run_refused)
    assert len(ledger.query("select * from preflights where run_id = ?", [run_refused])) == 2  # checked again


@pytest.mark.slow
def test_cli_force_runs_despite_the_mismatch(tmp_path):
    cfg = write_config(
        tmp_path, [scripted_arm("A", "solver", "", 'report_model = "gpt-4o"')], tasks=["py-word-count"], max_attempts=1
    )
    done = _cli("run", cfg, "--db", tmp_path / "l.sqlite", "--headless", "--force")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "--force: running anyway" in done.stdout and "ACCEPTED" in done.stdout
    skipped = _cli("run", cfg, "--db", tmp_path / "l.sqlite", "--headless", "--no-preflight")
    assert skipped.returncode == 0 and "preflight arm" not in skipped.stdout


def _stopped_in_preflight(tmp_path, delay_s: float, stop: str) -> tuple[str, int]:
    """A run whose endpoint answers after `delay_s`, stopped (`stop`: the engine's method) once
    the first probe is at the server; (run id, probes the server saw)."""
    from agent.endpoints.scripted_server import ScriptedServer
    from agent.run.engine import RunEngine

    with ScriptedServer(delay_s=delay_s) as server:
        cfg = write_config(tmp_path, [arm_toml("A", "solver", base_url=server.base_url)], tasks=["py-word-count"])
        engine = RunEngine(load_config(cfg), Ledger(tmp_path / "l.sqlite"))

        async def main():
            async def watch():
                while not server.probes:  # the first probe is at the server
                    await anyio.sleep(0.01)
                getattr(engine, stop)()

            async def drain():
                async for _ in engine.events:
                    pass

            async with anyio.create_task_group() as tg:
                tg.start_soon(watch)
                tg.start_soon(drain)
                return await engine.run()

        run_id = anyio.run(main)
        return run_id, len(server.probes)


def test_stop_now_during_preflight_aborts_the_run_and_closes_its_row(tmp_path):
    run_id, _ = _stopped_in_preflight(tmp_path, 30, "stop_now")
    ledger = Ledger(tmp_path / "l.sqlite")
    assert ledger.run(run_id)["status"] == "aborted" and not ledger.attempts(run_id)
    assert [r["verdict"] for r in ledger.query("select verdict from preflights where run_id = ?", [run_id])] == [
        "stopped"
    ]
    assert {a["state"] for a in ledger.arms(run_id)} == {"aborted"}


def test_a_trickling_endpoint_cannot_hold_the_preflight(tmp_path):
    from tests.support.hostile_server import HostileServer

    with HostileServer() as server:
        cfg = write_config(
            tmp_path,
            [
                arm_toml(
                    "A", "trickle", base_url=server.base_url, extra="request_timeout_s = 3\nrequest_deadline_s = 2\n"
                )
            ],
            tasks=["py-word-count"],
        )
        config = load_config(cfg)
        (result,) = anyio.run(
            lambda: preflight_standalone(
                config, load_tasks(config), AsyncLedger(Ledger(tmp_path / "l.sqlite")), lambda *_: None
            )
        )
    assert result.calls == 2  # the first probe's two tries, then stop
    # an endpoint that answers no tiny request within its deadline will not answer the run's either
    model = _checks(result)["model"]
    assert model.invalidating and "1 of 1 probe failed" in model.observed and "fails every request" in model.fix
    assert {c.status for n, c in _checks(result).items() if n != "model"} <= {"unknown", "ok"}


def test_ctrl_c_during_preflight_starts_no_more_probes(tmp_path):
    """Ctrl-C once (a graceful abort) while the first probe is at the server: that probe is
    answered, no other starts (they went on starting for 8.7 s), the row says `stopped`."""
    run_id, probes = _stopped_in_preflight(tmp_path, 0.5, "abort")
    ledger = Ledger(tmp_path / "l.sqlite")
    assert probes == 1 and ledger.run(run_id)["status"] == "aborted" and not ledger.attempts(run_id)
    assert [r["verdict"] for r in ledger.query("select verdict from preflights where run_id = ?", [run_id])] == [
        "stopped"
    ]
