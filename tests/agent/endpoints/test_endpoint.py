"""ChatClient against the real scripted server on 127.0.0.1: streaming and not, tool-call
delta assembly, every injected fault with its CallTry status, retries and token accounting,
Retry-After and backoff (a fake sleep records the delays), context overflow, the api key."""

from __future__ import annotations

import contextlib
import json
import random
import socket
from pathlib import Path

import anyio
import pytest

from agent import QuotabenchError
from agent.endpoints.endpoint import CallTry, ChatClient, ContextOverflow, EndpointError, EndpointSettings
from agent.endpoints.scripted_server import ScriptedServer
from agent.endpoints.tokens import estimate_messages_tokens, estimate_reply_tokens

SMOKE = Path(__file__).resolve().parents[3] / "fixtures" / "smoke"
REFERENCE = SMOKE / "py-word-count" / "reference" / "words.py"
SECRET = "sk-quotabench-SECRET-7f3a9c"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} tool",
            "parameters": {
                "type": "object",
                "properties": {k: {"type": "string"} for k in args},
                "required": list(args),
            },
        },
    }
    for name, args in (
        ("list_files", ()),
        ("read_file", ("path",)),
        ("write_file", ("path", "content")),
        ("edit_file", ("path", "old", "new")),
        ("run_tests", ()),
        ("finish", ()),
    )
]


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def server():
    with ScriptedServer([SMOKE], slow_s=3.0) as s:
        yield s


class Sleeps:
    """A fake sleep: records the delays instead of sleeping."""

    def __init__(self):
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@contextlib.asynccontextmanager
async def client_for(base_url: str, sleep: Sleeps | None = None, model: str = "solver", **kw):
    client = ChatClient(EndpointSettings(base_url, model, **kw), sleep=sleep or Sleeps(), rng=random.Random(7))
    try:
        yield client
    finally:
        await client.aclose()


def conversation(turns: int = 1) -> list[dict]:
    """A native-tools conversation with `turns` assistant turns already taken (list_files each)."""
    messages = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Implement top_words.\nTask id: py-word-count"},
    ]
    for i in range(turns):
        call = {"id": f"call_{i}", "type": "function", "function": {"name": "list_files", "arguments": "{}"}}
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{i}", "content": "words.py\ntest_visible.py"},
        ]
    return messages


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [True, False])
async def test_solver_turn_assembles_text_tool_calls_and_reported_usage(server, stream):
    deltas: list[str] = []
    async with client_for(server.base_url, stream=stream) as client:
        result = await client.complete(conversation(1), TOOLS, on_delta=deltas.append)
    assert [c.name for c in result.tool_calls] == ["write_file"]
    arguments = json.loads(result.tool_calls[0].arguments)
    assert arguments == {"path": "words.py", "content": REFERENCE.read_text()}
    assert result.tool_calls[0].id
    assert result.text == "I will write the solution."
    assert result.finish_reason == "tool_calls"
    assert (result.model_reported, result.system_fingerprint) == ("solver", "fp_scripted_1")
    assert result.usage_source == "reported"
    assert (result.prompt_tokens, result.completion_tokens) == server.usage_log[-1]
    assert result.prompt_tokens == estimate_messages_tokens(conversation(1), TOOLS)
    assert [t.status for t in result.tries] == ["ok"]
    body = server.requests[-1]
    assert body["stream"] is stream and body["tools"] == TOOLS and body["temperature"] == 0.0
    assert body["max_tokens"] == 1024 and body["messages"] == conversation(1)
    if stream:
        assert body["stream_options"] == {"include_usage": True}
        assert len(deltas) > 1 and "".join(deltas) == result.text
    else:
        assert "stream_options" not in body and deltas == []


@pytest.mark.anyio
async def test_request_settings_pass_through(server):
    async with client_for(
        server.base_url, temperature=None, top_p=0.9, seed=11, max_tokens=77, tool_choice="auto", headers={"X-Arm": "A"}
    ) as client:
        await client.complete(conversation(0), TOOLS)
        await client.complete(conversation(0))
    with_tools, without_tools = server.requests
    assert with_tools["top_p"] == 0.9 and with_tools["seed"] == 11 and with_tools["max_tokens"] == 77
    assert "temperature" not in with_tools and with_tools["tool_choice"] == "auto"
    assert "tools" not in without_tools and "tool_choice" not in without_tools
    assert server.request_headers[0]["X-Arm"] == "A" and "Authorization" not in server.request_headers[0]


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [True, False])
async def test_usage_is_estimated_when_the_server_omits_it(server, stream):
    async with client_for(server.base_url, stream=stream) as client:
        server.inject("no_usage")
        estimated = await client.complete(conversation(1), TOOLS)
        reported = await client.complete(conversation(1), TOOLS)
    assert estimated.usage_source == "estimated" and reported.usage_source == "reported"
    assert len(server.usage_log) == 1  # the server reported usage once
    calls = [(c.name, c.arguments) for c in estimated.tool_calls]
    assert estimated.prompt_tokens == estimate_messages_tokens(conversation(1), TOOLS)
    assert estimated.completion_tokens == estimate_reply_tokens(estimated.text, calls)
    # the scripted server reports with the same estimator, so both agree exactly
    assert (estimated.prompt_tokens, estimated.completion_tokens) == (
        reported.prompt_tokens,
        reported.completion_tokens,
    )


@pytest.mark.anyio
async def test_stream_without_include_usage_support_is_estimated(server):
    """A server that ignores stream_options (no usage chunk) is the same as no_usage."""
    async with client_for(server.base_url) as client:
        server.inject("no_usage")
        result = await client.complete(conversation(0), TOOLS)
    assert result.usage_source == "estimated" and result.prompt_tokens > 0 and result.completion_tokens > 0


# fault, expected status, http status, whether tokens were consumed (estimated) or not (none)
FAULTS = [
    ("500", "http_5xx", 500, "none"),
    ("429:none", "http_429", 429, "none"),
    ("drop", "connect_error", None, "none"),
    ("empty", "empty_response", 200, "none"),
    ("no_choices", "empty_response", 200, "none"),
    ("cut", "stream_cut", 200, "estimated"),
    ("malformed", "malformed_json", 200, "estimated"),
]


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("fault, status, http_status, source", FAULTS)
async def test_each_fault_is_one_failed_try_then_a_retry(server, stream, fault, status, http_status, source):
    sleeps, seen = Sleeps(), []

    async def on_try(call: CallTry) -> None:
        seen.append(call)

    server.inject(fault)
    async with client_for(server.base_url, sleeps, stream=stream) as client:
        result = await client.complete(conversation(1), TOOLS, on_try=on_try)
    failed, ok = result.tries
    assert list(result.tries) == seen
    assert (failed.status, failed.http_status, failed.usage_source) == (status, http_status, source)
    assert failed.retry_index == 0 and ok.retry_index == 1 and ok.status == "ok"
    assert failed.error and "\n" not in failed.error
    assert len(sleeps.delays) == 1
    full = estimate_reply_tokens(ok.text, [(c.name, c.arguments) for c in ok.tool_calls])
    if source == "none":
        assert (failed.prompt_tokens, failed.completion_tokens) == (0, 0)
    else:  # consumed: the prompt plus what arrived before the fault
        assert failed.prompt_tokens == estimate_messages_tokens(conversation(1), TOOLS)
        partial = estimate_reply_tokens(failed.text, [(c.name, c.arguments) for c in failed.tool_calls])
        assert failed.completion_tokens == partial < full
        assert ok.text.startswith(failed.text)
        if stream:
            assert failed.completion_tokens > 0
    assert list(server.usage_log) == [(ok.prompt_tokens, ok.completion_tokens)]


@pytest.mark.anyio
async def test_read_timeout_before_output_costs_nothing_and_is_retried(server):
    server.inject("slow")
    async with client_for(server.base_url, request_timeout_s=0.3) as client:
        result = await client.complete(conversation(0), TOOLS)
    first = result.tries[0]
    assert (first.status, first.http_status, first.usage_source, first.prompt_tokens) == (
        "read_timeout",
        None,
        "none",
        0,
    )
    assert 250 <= first.latency_ms < 2000
    assert result.tries[1].status == "ok"


@pytest.mark.anyio
async def test_connect_error_retries_with_capped_full_jitter_then_gives_up():
    sleeps, seen = Sleeps(), []

    async def on_try(call: CallTry) -> None:
        seen.append(call.status)

    async with client_for(
        f"http://127.0.0.1:{free_port()}/v1", sleeps, max_retries=3, backoff_base_s=1.0, backoff_cap_s=3.0
    ) as client:
        with pytest.raises(EndpointError) as info:
            await client.complete(conversation(0), TOOLS, on_try=on_try)
    assert not isinstance(info.value, ContextOverflow)
    assert [t.status for t in info.value.tries] == ["connect_error"] * 4 == seen
    assert [t.retry_index for t in info.value.tries] == [0, 1, 2, 3]
    assert all(t.usage_source == "none" and t.http_status is None for t in info.value.tries)
    assert len(sleeps.delays) == 3
    for i, delay in enumerate(sleeps.delays):
        assert 0.0 <= delay <= min(3.0, 1.0 * 2**i)
    message = str(info.value)
    assert "solver" in message and "4 tries" in message and "connect_error" in message


@pytest.mark.anyio
async def test_backoff_is_deterministic_for_a_seeded_rng(server):
    runs = []
    for _ in range(2):
        sleeps = Sleeps()
        server.inject("500", "500", "500")
        async with client_for(server.base_url, sleeps, backoff_base_s=10.0, backoff_cap_s=25.0) as client:
            await client.complete(conversation(0), TOOLS)
        runs.append(sleeps.delays)
    assert runs[0] == runs[1] and len(set(runs[0])) == 3
    assert all(0 <= d <= cap for d, cap in zip(runs[0], (10.0, 20.0, 25.0)))


@pytest.mark.anyio
async def test_retry_after_is_honoured_and_capped(server):
    sleeps = Sleeps()
    server.inject("429:3", "429:100", "429")
    async with client_for(server.base_url, sleeps, backoff_cap_s=20.0) as client:
        result = await client.complete(conversation(0), TOOLS)
    assert [t.status for t in result.tries] == ["http_429"] * 3 + ["ok"]
    assert sleeps.delays == [3.0, 20.0, 1.0]


@pytest.mark.anyio
async def test_gives_up_after_the_retry_limit_and_on_try_precedes_each_retry(server):
    requests_seen_at_on_try = []

    async def on_try(call: CallTry) -> None:
        requests_seen_at_on_try.append(server.served)

    server.inject("500", "500", "500", "500")
    async with client_for(server.base_url, max_retries=2) as client:
        with pytest.raises(EndpointError) as info:
            await client.complete(conversation(0), TOOLS, on_try=on_try)
    assert [t.status for t in info.value.tries] == ["http_5xx"] * 3
    assert requests_seen_at_on_try == [1, 2, 3]  # each ledger row before the next request
    assert "3 tries" in str(info.value)


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [True, False])
async def test_context_overflow_is_not_retried(server, stream):
    sleeps = Sleeps()
    server.inject("overflow")
    async with client_for(server.base_url, sleeps, stream=stream) as client:
        with pytest.raises(ContextOverflow) as info:
            await client.complete(conversation(0), TOOLS)
    assert isinstance(info.value, EndpointError) and isinstance(info.value, QuotabenchError)
    (only,) = info.value.tries
    assert (only.status, only.http_status, only.usage_source) == ("context_overflow", 400, "none")
    assert "maximum context length" in only.error and sleeps.delays == []
    assert server.served == 1


@pytest.mark.anyio
async def test_other_4xx_is_not_retried(server):
    async with client_for(server.base_url, model="no-such-model") as client:
        with pytest.raises(EndpointError) as info:
            await client.complete(conversation(0), TOOLS)
    assert not isinstance(info.value, ContextOverflow)
    (only,) = info.value.tries
    assert (only.status, only.http_status) == ("http_4xx", 404)
    assert "does not exist" in only.error and "no-such-model" in str(info.value)


@pytest.mark.anyio
async def test_api_key_is_sent_but_never_shown(server, monkeypatch):
    monkeypatch.setenv("QB_TEST_KEY", SECRET)
    settings = EndpointSettings(server.base_url, "solver", api_key_env="QB_TEST_KEY")
    client = ChatClient(settings, sleep=Sleeps())
    try:
        await client.complete(conversation(0), TOOLS)
        server.inject("401")  # the server echoes the key it received, as some providers do
        with pytest.raises(EndpointError) as info:
            await client.complete(conversation(0), TOOLS)
    finally:
        await client.aclose()
    assert server.request_headers[0]["Authorization"] == f"Bearer {SECRET}"
    (only,) = info.value.tries
    assert only.status == "http_4xx" and "Incorrect API key provided: ***" in only.error
    shown = [
        repr(client),
        str(client),
        repr(settings),
        str(info.value),
        repr(info.value),
        repr(info.value.tries),
        repr(info.value.args),
    ]
    assert all(SECRET not in text for text in shown)


def test_missing_api_key_env_fails_at_construction(monkeypatch):
    monkeypatch.delenv("QB_TEST_MISSING_KEY", raising=False)
    with pytest.raises(QuotabenchError) as info:
        ChatClient(EndpointSettings("http://127.0.0.1:9/v1", "m", api_key_env="QB_TEST_MISSING_KEY"))
    assert "QB_TEST_MISSING_KEY is not set" in str(info.value) and "export it or remove api_key_env" in str(info.value)


@pytest.mark.anyio
async def test_list_models(server):
    async with client_for(server.base_url) as client:
        assert await client.list_models() == [
            "chatty",
            "coin",
            "critique-breaks",
            "gamer",
            "garbled-judge",
            "malformed",
            "never-finish",
            "saboteur",
            "second-passes",
            "solver",
            "unparseable",
            "wrong",
        ]
    async with client_for(f"http://127.0.0.1:{free_port()}/v1") as dead:
        assert await dead.list_models() == []


@pytest.mark.anyio
@pytest.mark.parametrize("limit", [1, 2])
async def test_concurrency_is_limited_per_client(limit):
    with ScriptedServer([SMOKE], delay_s=0.1) as server:
        async with client_for(server.base_url, max_concurrency=limit) as client:
            async with anyio.create_task_group() as tg:
                for _ in range(4):
                    tg.start_soon(client.complete, conversation(0), TOOLS)
        assert server.peak_concurrency == limit and server.served == 4


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [True, False])
async def test_unparseable_tool_arguments_are_returned_raw_not_retried(server, stream):
    async with client_for(server.base_url, model="malformed", stream=stream) as client:
        result = await client.complete(conversation(0), TOOLS)
    assert [t.status for t in result.tries] == ["ok"]
    bad, unknown, missing = result.tool_calls
    with pytest.raises(ValueError):
        json.loads(bad.arguments)
    assert bad.arguments == '{"path": "notes.txt", "content": "unterminated'
    assert unknown.name == "delete_file" and (missing.name, missing.arguments) == ("read_file", "{}")
    assert len({c.id for c in result.tool_calls}) == 3
