"""What hosted providers say beyond the chat: usage details, rate-limit headers, quota errors
(agent/endpoints/provider.py), the client-side pacer (pacing.py), and ChatClient against the
scripted server playing a provider (provider_model.py) on 127.0.0.1: cached tokens rising with
the conversation, reasoning tokens and cost as reported, pacing that meets no 429, a spent quota
ended at its first reply, and one TCP connection per client over a streamed run."""

from __future__ import annotations

import random
from pathlib import Path

import anyio
import pytest

from agent.endpoints.endpoint import ChatClient, EndpointError, EndpointSettings, ProviderQuotaExhausted
from agent.endpoints.pacing import Pacer
from agent.endpoints.provider import (
    RateLimits,
    is_quota_exhausted,
    rate_limits,
    reset_seconds,
    retry_delay,
    usage_details,
)
from agent.endpoints.provider_model import ProviderModel
from agent.endpoints.scripted_server import ScriptedServer

SMOKE = Path(__file__).resolve().parents[3] / "fixtures" / "smoke"
FIRST = [{"role": "user", "content": "Implement top_words.\nTask id: py-word-count"}]
LONG = [
    {"role": "user", "content": "Implement top_words.\nTask id: py-word-count\n" + "Be careful. " * 170}
]  # ~500 tokens


@pytest.fixture
def anyio_backend():
    return "asyncio"


# -- parsing ----------------------------------------------------------------------------------
def test_usage_details_of_each_provider_shape():
    openai = usage_details(
        {
            "prompt_tokens": 900,
            "completion_tokens": 50,
            "prompt_tokens_details": {"cached_tokens": 768},
            "completion_tokens_details": {"reasoning_tokens": 32},
        }
    )
    assert (openai.cached_tokens, openai.reasoning_tokens, openai.cost_usd) == (768, 32, None)
    assert openai.reported() == ["cached", "reasoning"]
    openrouter = usage_details(
        {"prompt_tokens_details": {"cached_tokens": 10, "cache_write_tokens": 90}, "cost": 0.0012}
    )
    assert (openrouter.cache_write_tokens, openrouter.cost_usd, openrouter.cost_source) == (90, 0.0012, "usage.cost")
    anthropic = usage_details({"cache_read_input_tokens": 5, "cache_creation_input_tokens": 7})
    assert (anthropic.cached_tokens, anthropic.cache_write_tokens) == (5, 7)
    assert usage_details({"prompt_cache_hit_tokens": 3}).cached_tokens == 3  # DeepSeek
    junk = usage_details({"prompt_tokens_details": {"cached_tokens": -1}, "cost": float("nan")})
    assert junk.reported() == [] and usage_details("nonsense").reported() == []
    assert usage_details({"cost": True}).cost_usd is None


def test_reset_forms_and_rate_limit_headers():
    now = 1_700_000_000.0
    assert reset_seconds("6m0s") == 360 and reset_seconds("1h2m3.5s") == 3723.5 and reset_seconds("20ms") == 0.02
    assert reset_seconds("12") == 12 and reset_seconds(str(now + 5), now) == 5
    assert reset_seconds(str((now + 2) * 1000), now) == pytest.approx(2)
    assert reset_seconds("2023-11-14T22:13:25Z", now) == pytest.approx(5)
    assert reset_seconds("soon") is None and reset_seconds(None) is None
    openai = rate_limits(
        {
            "x-ratelimit-limit-tokens": "40000",
            "x-ratelimit-remaining-tokens": "38000",
            "x-ratelimit-reset-tokens": "3s",
            "x-ratelimit-limit-requests": "500",
            "x-ratelimit-remaining-requests": "499",
            "x-ratelimit-reset-requests": "120ms",
        }
    )
    assert openai == RateLimits(40000, 38000, 3.0, 500, 499, 0.12, "openai")
    anthropic = rate_limits(
        {
            "anthropic-ratelimit-input-tokens-limit": "80000",
            "anthropic-ratelimit-input-tokens-remaining": "79000",
            "anthropic-ratelimit-requests-remaining": "49",
        }
    )
    assert anthropic is not None and (anthropic.source, anthropic.remaining_tokens) == ("anthropic", 79000)
    generic = rate_limits({"x-ratelimit-limit": "20", "x-ratelimit-remaining": "19"})
    assert generic is not None and (generic.limit_requests, generic.remaining_requests) == (20, 19)
    assert rate_limits({"content-type": "text/plain"}) is None


def test_retry_delay_prefers_milliseconds_then_seconds_then_the_spent_limits_reset():
    assert retry_delay({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_delay({"retry-after": "9"}) == 9
    spent = RateLimits(1000, 0, 4.0, 10, 3, 1.0)
    assert retry_delay({}, spent) == 4.0
    assert retry_delay({}, RateLimits(1000, 10, 4.0)) is None


def test_quota_errors_are_told_from_rate_limits():
    assert is_quota_exhausted(402, "")
    assert is_quota_exhausted(429, '{"error": {"code": "insufficient_quota"}}')
    assert is_quota_exhausted(400, "Your credit balance is too low to access the API")
    assert not is_quota_exhausted(429, "Rate limit reached for tokens per min (TPM)")


# -- the pacer ----------------------------------------------------------------------------------
class Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.mark.anyio
async def test_the_pacer_waits_for_the_refill_a_call_needs():
    clock = Clock()
    pacer = Pacer(clock.sleep, clock)
    assert await pacer.admit(5000) == 0  # nothing announced yet: nothing waits
    pacer.done(5000)
    pacer.observe(RateLimits(limit_tokens=6000, remaining_tokens=1000, reset_tokens_s=10.0))  # 500 tok/s
    assert pacer.wait_needed(1000) == 0
    assert pacer.wait_needed(3000) == pytest.approx(4.0)
    waited = await pacer.admit(3000)
    assert waited == pytest.approx(4.0) and clock.slept == [pytest.approx(4.0)]
    # the call just admitted holds its 3000 until answered: the next one waits for them too
    assert pacer.wait_needed(1000) == pytest.approx(2.0)
    pacer.done(3000)
    assert pacer.wait_needed(1000) == 0
    assert pacer.wait_needed(100_000) == pytest.approx(6.0)  # larger than the limit: until the bucket is full


@pytest.mark.anyio
async def test_headers_older_than_the_last_taken_do_not_overstate_the_bucket():
    """Two calls out at once: the second's answer (taken first) already counts the first's charge;
    the first's headers, answered later, predate the second's charge, which `done` has taken off
    the calls out, so taking them would let a call go that the provider refuses (seen in CI)."""
    clock = Clock()
    pacer = Pacer(clock.sleep, clock)
    pacer.observe(RateLimits(limit_tokens=2400, remaining_tokens=2400, reset_tokens_s=0.0), 0)
    await pacer.admit(760)
    first = pacer.sent
    await pacer.admit(760)
    second = pacer.sent
    pacer.observe(RateLimits(limit_tokens=2400, remaining_tokens=880, reset_tokens_s=1.27), second)
    pacer.done(760)  # the second is answered
    pacer.observe(RateLimits(limit_tokens=2400, remaining_tokens=1640, reset_tokens_s=0.63), first)  # stale
    pacer.done(760)
    assert pacer.limits is not None and pacer.limits.remaining_tokens == 880
    assert pacer.wait_needed(760) == 0 and pacer.wait_needed(1000) > 0


@pytest.mark.anyio
async def test_a_429_on_a_call_it_let_go_teaches_the_pacer_a_fixed_window():
    clock = Clock()
    pacer = Pacer(clock.sleep, clock)
    await pacer.admit(1000)
    pacer.done(1000)
    pacer.answered(pacer.sent, "http_429")  # nothing announced yet: a 429 then says nothing of the refill
    assert pacer.window == "unknown"
    pacer.observe(RateLimits(limit_tokens=6000, remaining_tokens=1000, reset_tokens_s=10.0))
    assert pacer.wait_needed(3000) == pytest.approx(4.0)  # steady until told otherwise: 500 tok/s
    pacer.answered(pacer.sent, "http_429")
    assert pacer.window == "fixed"
    assert pacer.wait_needed(1000) == 0  # what is left of the window still fits
    assert pacer.wait_needed(3000) == pytest.approx(10.0 + 0.05 + 0.2)  # the reset, and a little after it
    await clock.sleep(10.5)
    assert pacer.wait_needed(3000) == 0 and pacer.wait_needed(6000) == 0  # the whole budget is back
    assert pacer.wait_needed(100_000) == 0  # larger than the limit: it goes when the bucket is full


@pytest.mark.anyio
async def test_a_fixed_window_whose_reset_is_now_waits_for_nothing():
    clock = Clock()
    pacer = Pacer(clock.sleep, clock)
    pacer.observe(RateLimits(limit_tokens=6000, remaining_tokens=0, reset_tokens_s=0.0))  # a reset stated as now
    pacer.answered(pacer.sent, "http_429")
    assert pacer.window == "fixed" and pacer.wait_needed(3000) == 0


# -- against the provider-like server -----------------------------------------------------------
def turn(messages: list[dict], text: str) -> list[dict]:
    return messages + [{"role": "assistant", "content": text or "ok"}, {"role": "user", "content": "go on. " * 30}]


async def _client(server: ScriptedServer, **kw) -> ChatClient:
    settings = EndpointSettings(server.base_url, "solver", **({"max_tokens": 256, "max_retries": 3} | kw))
    return ChatClient(settings, rng=random.Random(3))


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [True, False])
async def test_cached_reasoning_and_cost_are_recorded_as_sent(stream):
    provider = ProviderModel(
        cache=True, reasoning=9, price={"input": 3.0, "cached_input": 0.3, "cache_write": 3.75, "output": 15.0}
    )
    with ScriptedServer([SMOKE], provider=provider) as server:
        client = await _client(server, stream=stream)
        tries, messages = [], FIRST
        for _ in range(4):
            done = await client.complete(messages)
            tries.append(done.tries[-1])
            messages = turn(messages, done.text)
        await client.aclose()
    cached = [t.details.cached_tokens for t in tries]
    assert cached[0] == 0 and cached == sorted(cached) and cached[-1] > cached[1] > 0  # rises with the conversation
    for t, billed in zip(tries, provider.billed):
        assert (t.prompt_tokens, t.completion_tokens) == (billed["prompt_tokens"], billed["completion_tokens"])
        assert t.details.cached_tokens == billed["prompt_tokens_details"]["cached_tokens"]
        assert t.details.cache_write_tokens == billed["prompt_tokens_details"]["cache_write_tokens"]
        assert t.details.reasoning_tokens == 9 and t.details.cost_usd == billed["cost"]


@pytest.mark.anyio
async def test_pacing_meets_no_429_that_sending_at_once_meets():
    def server() -> ScriptedServer:
        return ScriptedServer([SMOKE], provider=ProviderModel(tpm=2400, window_s=2.0))  # 1,200 tokens/s, ~3 calls

    async def run(pace: bool) -> tuple[int, list[int]]:
        with server() as s:
            client = await _client(s, pace=pace, max_concurrency=2, backoff_base_s=0.05, backoff_cap_s=0.5)
            paced: list[int] = []

            async def one() -> None:
                try:
                    done = await client.complete(LONG)
                except EndpointError:  # unpaced: the 429s may outlast the retries
                    return
                paced.extend(t.paced_ms for t in done.tries)

            async with anyio.create_task_group() as tg:
                for _ in range(10):
                    tg.start_soon(one)
            await client.aclose()
            assert s.provider is not None
            return s.provider.rate_limited, paced

    limited_unpaced, _ = await run(pace=False)
    limited_paced, paced = await run(pace=True)
    assert limited_unpaced > 0  # the limit is real
    # Pacing waited instead. At most one 429 is left to timing: under CI's load (12 on 2 cores)
    # one in about fifteen runs met one (stale headers were one cause, now ignored: see the test
    # above); a paced call that meets it waits the Retry-After the provider sends, as any call does.
    assert limited_paced <= 1 and sum(paced) > 0


@pytest.mark.anyio
async def test_against_a_fixed_window_at_most_one_429_is_met_and_the_model_is_recorded():
    """A provider that refills nothing until its reset: the steady model sends calls into a
    window they do not fit (each a 429); the first such 429 teaches the pacer the window."""
    with ScriptedServer([SMOKE], provider=ProviderModel(tpm=2400, window_s=2.0, refill="fixed")) as s:
        client = await _client(s, max_concurrency=2, backoff_base_s=0.05, backoff_cap_s=0.5)
        tries = []

        async def one() -> None:
            tries.extend((await client.complete(LONG)).tries)

        async with anyio.create_task_group() as tg:
            for _ in range(8):
                tg.start_soon(one)
        await client.aclose()
        assert s.provider is not None
        limited = s.provider.rate_limited
    assert limited <= 1, [(t.status, t.paced_ms) for t in tries]
    assert client.pacer.window == "fixed" if limited else True
    assert {t.pace_window for t in tries} <= {"unknown", "steady", "fixed"} and sum(t.paced_ms for t in tries) > 0


@pytest.mark.anyio
@pytest.mark.parametrize("status", [429, 402])
async def test_a_spent_quota_ends_the_call_at_its_first_try(status):
    provider = ProviderModel(quota_tokens=1, quota_status=status)
    with ScriptedServer([SMOKE], provider=provider) as server:
        client = await _client(server, max_retries=4)
        await client.complete(FIRST)  # spends past the quota
        with pytest.raises(ProviderQuotaExhausted) as caught:
            await client.complete(FIRST)
        await client.aclose()
    assert [t.status for t in caught.value.tries] == ["quota_exhausted"]  # no retry storm
    assert provider.quota_refused == 1
    want = "You exceeded your current quota" if status == 429 else "Insufficient credits"
    assert caught.value.reason.startswith("provider quota: ") and want in caught.value.reason


@pytest.mark.anyio
async def test_a_rate_limit_429_waits_what_retry_after_ms_asks():
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        await anyio.sleep(seconds)

    with ScriptedServer([SMOKE], provider=ProviderModel(tpm=1000, window_s=10.0)) as server:  # 100 tokens/s
        settings = EndpointSettings(server.base_url, "solver", max_tokens=256, pace=False, backoff_cap_s=5.0)
        client = ChatClient(settings, sleep=sleep)
        await client.complete(LONG)  # ~760 charged, ~235 unused given back
        done = await client.complete(LONG)  # the bucket is short by ~300: a 429 asks for ~3 s of refill
        await client.aclose()
    assert [t.status for t in done.tries] == ["http_429", "ok"]
    assert 1.0 < slept[0] <= 5.0 and done.tries[0].limits is not None and done.tries[0].limits.limit_tokens == 1000


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [True, False])
async def test_one_connection_per_client_over_a_run(stream):
    with ScriptedServer([SMOKE]) as server:
        client = await _client(server, stream=stream)
        for _ in range(25):
            await client.complete(FIRST)
        await client.aclose()
    assert server.connections == 1


@pytest.mark.anyio
async def test_a_stream_that_never_ends_after_done_keeps_its_reply():
    """A server that sends [DONE] and then holds the stream open: the reply stands, after DRAIN_S."""
    import socket
    import threading

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    port = sock.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        conn, _ = sock.accept()
        conn.recv(65536)
        chunk = b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            + b"%X\r\n%s\r\n" % (len(chunk), chunk)
        )
        stop.wait(10)
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    client = ChatClient(EndpointSettings(f"http://127.0.0.1:{port}/v1", "m", max_retries=0))
    try:
        done = await client.complete(FIRST)
    finally:
        stop.set()
        await client.aclose()
        sock.close()
    assert done.text == "hi" and [t.status for t in done.tries] == ["ok"]
    assert done.tries[0].latency_ms < 5000


def test_provider_usage_migration_adds_its_columns_and_keeps_old_rows(tmp_path):
    import sqlite3

    from sqlite_utils import Database

    from agent.ledger import Ledger
    from agent.ledger.schema import migrations

    path = tmp_path / "old.sqlite"
    old = Database(sqlite3.connect(path))
    migrations.apply(old, stop_before="m020_provider_usage")
    old["runs"].insert({"id": "R1", "status": "finished"})
    old["calls"].insert({"id": "C1", "run_id": "R1", "arm": "A", "prompt_tokens": 10, "completion_tokens": 2})
    old.conn.commit()
    old.conn.close()
    ledger = Ledger(path)
    assert ledger.query("select prompt_tokens, cached_tokens, cost_usd, paced_ms from calls") == [
        {"prompt_tokens": 10, "cached_tokens": None, "cost_usd": None, "paced_ms": None}
    ]
    columns = {t: {c.name for c in ledger.db[t].columns} for t in ("calls", "attempts", "arms")}
    assert {"cache_write_tokens", "reasoning_tokens", "cost_source", "ratelimit_remaining_tokens"} <= columns["calls"]
    assert {"cached_tokens", "reasoning_tokens", "cost_usd", "paced_ms"} <= columns["attempts"]
    assert {"censored_by", "paced_ms"} <= columns["arms"]


def test_a_price_table_takes_the_cache_keys_and_names_the_valid_ones(tmp_path):
    from agent.config import ConfigError, load_config_text

    suite = Path(__file__).resolve().parents[3] / "fixtures" / "smoke"
    text = (
        f'[run]\nsuites = ["{suite}"]\n[[arms]]\nname = "A"\nkind = "scripted"\nmodel = "solver"\n'
        "price = {{ input_per_mtok = 3, output_per_mtok = 15, {extra} }}\n"
    )
    ok = load_config_text(
        text.format(extra="cached_input_per_mtok = 0.3, cache_write_per_mtok = 3.75"), tmp_path / "r.toml"
    )
    assert ok.arms[0].price["cached_input_per_mtok"] == 0.3
    with pytest.raises(ConfigError, match="price.cache_per_mtok: not a price key — valid keys: input_per_mtok"):
        load_config_text(text.format(extra="cache_per_mtok = 0.3"), tmp_path / "r.toml")
