"""Paired runs against a provider-like server on 127.0.0.1 (the scripted server with a
ProviderModel: a prompt cache, reasoning tokens, a tokens-per-minute limit in headers that it
enforces, a quota that runs out). The ledger holds exactly what the server sent; pacing meets
no 429; the arm is censored by the provider's quota at its first such reply (no retries) and
continues after a top-up (live: resume; headless: `quotabench resume`); one TCP connection per
arm and slot; the caching arm's cost equals a hand computation from the price table."""

from __future__ import annotations

import json

import anyio
import pytest

from agent import events as ev
from agent.endpoints.provider_model import ProviderModel
from agent.endpoints.scripted_server import ScriptedServer
from agent.ledger import Ledger
from agent.metrics.render import render_report
from agent.metrics.report import build_report
from agent.run.resume import engine_for_resume, resume_run
from tests.conftest import FIXTURES
from tests.support.engine_helpers import arm_toml, run_sync, write_config

PRICE = {"input_per_mtok": 3.0, "cached_input_per_mtok": 0.3, "cache_write_per_mtok": 3.75, "output_per_mtok": 15.0}
PRICE_TOML = ", ".join(f"{k} = {v}" for k, v in PRICE.items())


def provider() -> ProviderModel:
    # ~1,530 tokens charged per call (prompt + max_tokens) against 4,000 per 2 s: pacing must wait
    return ProviderModel(cache=True, reasoning=5, tpm=4000, window_s=2.0, quota_tokens=4000)


def config(tmp_path, base_url: str):
    a = arm_toml("A", "solver", base_url=base_url).replace(
        "price = { input_per_mtok = 1.0, output_per_mtok = 2.0 }", f"price = {{ {PRICE_TOML} }}"
    )
    return write_config(tmp_path, [a, arm_toml("B", "solver")], max_attempts=1, run_extra='preflight = "off"\n')


def hand_cost(billed: list[dict]) -> float:
    total = 0.0
    for u in billed:
        cached = u["prompt_tokens_details"]["cached_tokens"]
        written = u["prompt_tokens_details"]["cache_write_tokens"]
        uncached = u["prompt_tokens"] - cached - written
        total += (
            uncached * PRICE["input_per_mtok"]
            + cached * PRICE["cached_input_per_mtok"]
            + written * PRICE["cache_write_per_mtok"]
            + u["completion_tokens"] * PRICE["output_per_mtok"]
        ) / 1e6
    return total


@pytest.mark.slow
def test_headless_run_records_the_bill_paces_censors_at_the_quota_and_resumes(tmp_path):
    db = tmp_path / "l.sqlite"
    with ScriptedServer([FIXTURES / "smoke"], provider=provider()) as server:
        model = server.provider
        assert model is not None
        _, run_id, events = run_sync(config(tmp_path, server.base_url), db)
        ledger = Ledger(db)
        calls = ledger.query(
            "select status, prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, "
            "ratelimit_limit_tokens, paced_ms, latency_ms from calls where arm = 'A' order by id"
        )
        ok = [c for c in calls if c["status"] == "ok"]
        # the ledger holds exactly what the server sent
        assert [
            (c["prompt_tokens"], c["completion_tokens"], c["cached_tokens"], c["cache_write_tokens"]) for c in ok
        ] == [
            (
                u["prompt_tokens"],
                u["completion_tokens"],
                u["prompt_tokens_details"]["cached_tokens"],
                u["prompt_tokens_details"]["cache_write_tokens"],
            )
            for u in model.billed
        ]
        assert all(c["reasoning_tokens"] == 5 and c["ratelimit_limit_tokens"] == 4000 for c in ok)
        # never limited (whether it had to wait depends on how fast the machine ran the calls;
        # tests/agent/endpoints/test_provider.py shows the same load unpaced meeting 429s)
        assert model.rate_limited == 0 and all(c["paced_ms"] is not None for c in calls)
        # censored at the first quota reply: one try, no retry storm
        assert [c["status"] for c in calls].count("quota_exhausted") == 1 and model.quota_refused == 1
        arm = next(a for a in ledger.arms(run_id) if a["name"] == "A")
        assert (arm["censored"], arm["censored_by"]) == (1, "provider_quota")
        assert arm["state_reason"].startswith("provider quota: You exceeded your current quota")
        assert arm["paced_ms"] == sum(c["paced_ms"] for c in calls)
        spent = [e for e in events if isinstance(e, ev.ProviderQuotaSpent)]
        assert [(e.arm, e.policy) for e in spent] == [("A", "continue")]
        assert any(isinstance(e, ev.ProviderLimits) and e.limit_tokens == 4000 for e in events)
        assert server.connections == 1  # one arm, one slot: one connection for the whole streamed run
        # cost: a hand computation from the price table over what the server billed
        report = build_report(ledger, [run_id], resamples=200)
        arms = {a["metrics"]["name"]: a for a in report["runs"][0]["arms"]}
        # the attempt the quota cut off is lost spend: billed, out of the model's cost, priced apart
        cut = [
            r["lost"]
            for r in ledger.query(
                "select coalesce(a.failure_class, '') in ('aborted', 'censored') as lost from calls c "
                "join attempts a on a.id = c.attempt_id where c.arm = 'A' and c.status = 'ok' order by c.id"
            )
        ]
        assert len(cut) == len(model.billed) and any(cut) and not all(cut)
        kept = [u for u, lost in zip(model.billed, cut) if not lost]
        dropped = [u for u, lost in zip(model.billed, cut) if lost]
        assert arms["A"]["cost"]["model"] == pytest.approx(hand_cost(kept), rel=1e-9)
        assert arms["A"]["cost"]["lost"] == pytest.approx(hand_cost(dropped), rel=1e-9)
        assert "($" in next(line for line in render_report(report, "text").splitlines() if "lost spend" in line)
        assert arms["A"]["cost"]["cost_source"] == "priced"
        provider_figures = arms["A"]["provider"]
        assert provider_figures["cached_tokens"] == sum(
            u["prompt_tokens_details"]["cached_tokens"] for u in model.billed
        )
        assert 0.5 < provider_figures["cached_share"] < 1
        assert provider_figures["billed_equivalent_tokens"] < sum(u["total_tokens"] for u in model.billed)
        assert arms["B"]["provider"]["cached_share"] is None

        # top up, then `resume`: arm A runs its unfinished tasks; B's finished ones are not re-run
        model.top_up(1_000_000)
        attempts_b = len(ledger.query("select id from attempts where arm = 'B'"))
        engine = engine_for_resume(ledger, run_id)

        async def resume() -> None:
            async with anyio.create_task_group() as tg:

                async def drain() -> None:
                    async for _ in engine.events:
                        pass

                tg.start_soon(drain)
                await resume_run(engine)

        anyio.run(resume)
    arm = next(a for a in ledger.arms(run_id) if a["name"] == "A")
    assert (arm["censored"], arm["state"]) == (0, "finished")
    assert json_list(arm["unfinished_json"]) == []
    assert len(ledger.query("select id from attempts where arm = 'B'")) == attempts_b
    assert ledger.run(run_id)["status"] == "finished"


def json_list(text: str | None) -> list:
    return json.loads(text or "[]")


@pytest.mark.slow
def test_live_run_pauses_at_the_provider_quota_and_the_call_goes_again_after_a_top_up(tmp_path):
    db = tmp_path / "l.sqlite"
    with ScriptedServer([FIXTURES / "smoke"], provider=provider()) as server:
        model = server.provider
        assert model is not None

        def on_event(engine, event) -> None:
            if isinstance(event, ev.ProviderQuotaSpent):
                assert engine.state == "paused" and event.policy is None
                model.top_up(1_000_000)  # the user tops up, then resumes
                engine.resume()

        cfg = config(tmp_path, server.base_url)
        _, run_id, events = run_sync(cfg, db, on_event=on_event, auto_pause=True)
    ledger = Ledger(db)
    arm = next(a for a in ledger.arms(run_id) if a["name"] == "A")
    assert (arm["censored"], arm["state"]) == (0, "finished") and json_list(arm["unfinished_json"]) == []
    assert model.quota_refused == 1
    classes = [r["failure_class"] for r in ledger.query("select failure_class from attempts where arm = 'A'")]
    assert len(classes) == 3 and "censored" not in classes  # the paused call was sent again, in its attempt
    assert any(isinstance(e, ev.ArmStateChanged) and e.state == "running" for e in events)


@pytest.mark.slow
def test_a_provider_reported_cost_is_the_arms_cost(tmp_path):
    server_price = {"input": 2.0, "cached_input": 0.5, "cache_write": 2.5, "output": 8.0}
    with ScriptedServer([FIXTURES / "smoke"], provider=ProviderModel(cache=True, price=server_price)) as server:
        model = server.provider
        assert model is not None
        cfg = write_config(
            tmp_path,
            [arm_toml("A", "solver", base_url=server.base_url)],
            tasks=["py-word-count"],
            max_attempts=1,
            run_extra='preflight = "off"\n',
        )
        _, run_id, _ = run_sync(cfg, tmp_path / "l.sqlite")
    ledger = Ledger(tmp_path / "l.sqlite")
    assert [c["cost_source"] for c in ledger.query("select cost_source from calls where status = 'ok'")] == [
        "usage.cost"
    ] * len(model.billed)
    cost = build_report(ledger, [run_id], resamples=200)["runs"][0]["arms"][0]["cost"]
    assert cost["cost_source"] == "reported"
    assert cost["model"] == pytest.approx(sum(u["cost"] for u in model.billed), rel=1e-9)


@pytest.mark.slow
def test_a_fixed_window_provider_costs_at_most_one_429_and_the_report_names_the_model(tmp_path):
    """A provider that refills nothing until the reset its headers state (issue 41's 4 of 13
    calls met an avoidable 429): the first 429 on a paced call teaches the pacer the window."""
    fixed = ProviderModel(tpm=4000, window_s=2.0, refill="fixed")
    with ScriptedServer([FIXTURES / "smoke"], provider=fixed) as server:
        cfg = write_config(
            tmp_path,
            [arm_toml("A", "solver", base_url=server.base_url), arm_toml("B", "solver")],
            max_attempts=1,
            run_extra='preflight = "off"\n',
        )
        _, run_id, _ = run_sync(cfg, tmp_path / "l.sqlite")
    ledger = Ledger(tmp_path / "l.sqlite")
    calls = ledger.query("select status, paced_ms, pace_window from calls where arm = 'A' and kind = 'attempt'")
    assert len(calls) > 4 and fixed.rate_limited <= 1, calls
    assert sum(c["paced_ms"] or 0 for c in calls) > 0  # it waited for the window instead
    text = render_report(build_report(ledger, [run_id], resamples=0), "text")
    if fixed.rate_limited:
        assert calls[-1]["pace_window"] == "fixed"
        assert "1 try met a rate-limit 429; paced as a fixed window" in text
    else:
        assert "paced as a steady refill" in text
