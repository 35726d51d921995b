"""RequestEncoder: each message of a conversation encoded once, the bytes sent and the request
hash still exactly json.dumps(body) and request_sha256(body) at every call; and the request
itself, its headers merged once, still the one httpx's build_request makes."""

from __future__ import annotations

import json

import httpx
import pytest

from agent.endpoints.chat import EndpointSettings, RequestEncoder, request_sha256
from agent.endpoints.endpoint import ChatClient
from agent.endpoints.scripted_server import ScriptedServer
from tests.agent.endpoints.test_endpoint import SMOKE, TOOLS, client_for, conversation


def _body(messages: list, **extra) -> dict:
    return {"model": "m", "messages": messages, "max_tokens": 16, "stream": True, "tools": TOOLS, **extra}


def _expected(body: dict) -> tuple[bytes, str]:
    return json.dumps(body).encode(), request_sha256(body)


def test_a_growing_conversation_encodes_as_json_dumps_and_hashes_as_request_sha256():
    encoder = RequestEncoder(size=2)
    growing = conversation(0)
    other = conversation(1)
    for turn in range(8):
        growing += [
            {
                "role": "assistant",
                "content": f"ünïcode \ud800 {turn}",
                "tool_calls": [{"id": f"c{turn}", "z": 1, "a": 2}],
            },
            {"role": "tool", "tool_call_id": f"c{turn}", "content": "x" * turn},
        ]
        body = _body(growing, seed=turn, temperature=0.1 * turn, stream_options={"include_usage": True})
        assert encoder.encode(body) == _expected(body)
        assert encoder.encode(_body(other)) == _expected(_body(other))  # another attempt in between
    growing[3] = {"role": "tool", "tool_call_id": "c0", "content": "replaced"}  # a list changed, not appended to
    assert encoder.encode(_body(growing)) == _expected(_body(growing))
    del growing[5:]
    assert encoder.encode(_body(growing)) == _expected(_body(growing))
    without_tools = {"model": "m", "messages": growing, "stream": False}
    assert encoder.encode(without_tools) == _expected(without_tools)
    for i, (seed, temperature) in enumerate([(1, 0.0), (True, -0.0), (None, 1), (2**70, float("nan"))] * 20):
        body = _body(growing, seed=seed + i if type(seed) is int else seed, temperature=temperature, tool_choice="auto")
        assert encoder.encode(body) == _expected(body)  # settings kept encoded: 1 is not true, -0.0 not 0.0
    for i in range(4):  # more conversations than it keeps: the oldest are dropped, results unchanged
        assert encoder.encode(_body(conversation(i))) == _expected(_body(conversation(i)))
    assert len(encoder._conversations) == 2


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_each_call_of_a_growing_conversation_records_the_hash_of_what_the_server_received():
    with ScriptedServer([SMOKE]) as server:
        hashes: list[str | None] = []

        async def on_try(t) -> None:
            hashes.append(t.request_sha256)

        messages = conversation(0)
        async with client_for(server.base_url, model="solver") as client:
            for turn in range(3):
                await client.complete(messages, TOOLS, on_try=on_try)
                messages += [
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {
                                "id": f"c{turn}",
                                "type": "function",
                                "function": {"name": "list_files", "arguments": "{}"},
                            }
                        ],
                    },
                    {"role": "tool", "tool_call_id": f"c{turn}", "content": "words.py"},
                ]
        received = list(server.requests)[-3:]
        assert hashes == [request_sha256(body) for body in received]
        assert len(set(hashes)) == 3


@pytest.mark.anyio
async def test_a_request_is_what_httpx_would_build_headers_cookies_and_timeout_included(monkeypatch):
    monkeypatch.setenv("QB_TEST_KEY", "sk-test-0123456789")
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        body = {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}
        return httpx.Response(200, json=body, headers={"set-cookie": f"lb=node{len(sent)}; Path=/"})

    settings = EndpointSettings(
        base_url="http://h.invalid/v1", model="m", api_key_env="QB_TEST_KEY", headers={"X-Extra": "1"}, stream=False
    )
    client = ChatClient(settings, transport=httpx.MockTransport(handler))
    for _ in range(2):  # the second request carries the cookie the server set
        await client.complete([{"role": "user", "content": "x"}])
    await client.aclose()
    http = httpx.AsyncClient(timeout=httpx.Timeout(settings.request_timeout_s), cookies={"lb": "node1"})
    for request, cookies in zip(sent, ({}, {"lb": "node1"}), strict=True):
        http.cookies = cookies
        built = http.build_request(
            "POST",
            "http://h.invalid/v1/chat/completions",
            content=request.content,
            headers={"X-Extra": "1", "Authorization": "Bearer sk-test-0123456789", "Content-Type": "application/json"},
        )
        assert request.headers.raw == built.headers.raw
        assert (request.url, request.extensions) == (built.url, built.extensions)
    await http.aclose()
