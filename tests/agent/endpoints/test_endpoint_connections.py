"""ChatClient keeps its connection across calls when a stream ends with [DONE], and a server
that holds the stream open after [DONE] neither delays the reply nor changes it. A small HTTP
server on 127.0.0.1 counts the connections it accepts."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agent.endpoints.endpoint import DRAIN_AFTER_DONE_S, ChatClient, EndpointSettings

CHUNKS = [
    {"model": "m", "choices": [{"index": 0, "delta": {"content": "hello"}}]},
    {"model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    {"model": "m", "choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 1}},
]
EVENTS = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in CHUNKS) + b"data: [DONE]\n\n"
HOLD_S = 1.5


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    mode = "length"  # length: Content-Length; chunked: chunked encoding; hold: chunked, ended late

    def setup(self) -> None:
        self.server.connections += 1  # type: ignore[attr-defined]
        super().setup()

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers["content-length"]))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        if self.mode == "length":
            self.send_header("content-length", str(len(EVENTS)))
            self.end_headers()
            self.wfile.write(EVENTS)
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(EVENTS), EVENTS))
        self.wfile.flush()
        if self.mode == "hold":
            time.sleep(HOLD_S)
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@pytest.fixture
def anyio_backend():
    return "asyncio"


@contextlib.contextmanager
def serving(mode: str) -> Iterator[ThreadingHTTPServer]:
    handler = type("ModeHandler", (Handler,), {"mode": mode})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.connections = 0  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


async def three_calls(server: ThreadingHTTPServer) -> list[float]:
    client = ChatClient(EndpointSettings(f"http://127.0.0.1:{server.server_address[1]}/v1", "m"))
    took = []
    try:
        for _ in range(3):
            started = time.perf_counter()
            result = await client.complete([{"role": "user", "content": "hi"}])
            took.append(time.perf_counter() - started)
            assert result.text == "hello" and (result.prompt_tokens, result.completion_tokens) == (7, 1)
    finally:
        await client.aclose()
    return took


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["length", "chunked"])
async def test_a_stream_ended_by_done_leaves_the_connection_for_the_next_call(mode):
    with serving(mode) as server:
        await three_calls(server)
        assert server.connections == 1  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_a_server_holding_the_stream_open_after_done_is_hung_up_on():
    with serving("hold") as server:
        took = await three_calls(server)
        assert max(took) < DRAIN_AFTER_DONE_S + HOLD_S / 3
        assert server.connections == 3  # type: ignore[attr-defined]
