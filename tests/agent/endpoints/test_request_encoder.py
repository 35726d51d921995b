"""RequestEncoder: each message of a conversation encoded once, the bytes sent and the request
hash still exactly json.dumps(body) and request_sha256(body) at every call."""

from __future__ import annotations

import json

import pytest

from agent.endpoints.chat import RequestEncoder, request_sha256
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
