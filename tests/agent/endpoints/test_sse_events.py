"""Server-sent events as the spec defines them, from a real loopback server: a JSON chunk split
over several `data:` lines is one event; comments and other fields are skipped; a server that
omits the blank line between events still gets its chunks read one by one."""

from __future__ import annotations

import json
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import pytest

from agent.endpoints.endpoint import ChatClient, EndpointSettings

CHUNKS = [
    {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hello"}}]},
    {"choices": [{"index": 0, "delta": {"content": ", world"}}]},
    {
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 3},
    },
]


def _multi_line(chunk: dict) -> str:  # one event, its JSON pretty-printed over several data: lines
    return "".join(f"data: {line}\n" for line in json.dumps(chunk, indent=1).split("\n")) + "\n"


STREAMS = {
    "multi_line": ": keep-alive\n\n" + "".join(_multi_line(c) for c in CHUNKS) + "data: [DONE]\n\n",
    "fields": "".join(f"event: chunk\nid: {i}\nretry: 10\ndata:{json.dumps(c)}\n\n" for i, c in enumerate(CHUNKS))
    + "data: [DONE]\n\n",
    "no_blank_lines": "".join(f"data: {json.dumps(c)}\n" for c in CHUNKS) + "data: [DONE]\n\n",
    "crlf": "".join(f"data: {json.dumps(c)}\r\n\r\n" for c in CHUNKS) + "data: [DONE]\r\n\r\n",
}


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        payload = STREAMS[body["model"]].encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture(scope="module")
def base_url():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("stream", sorted(STREAMS))
def test_each_event_shape_reads_as_the_same_reply(base_url, stream):
    async def ask():
        client = ChatClient(EndpointSettings(base_url, stream, max_retries=0), rng=random.Random(1))
        try:
            return await client.complete([{"role": "user", "content": "hi"}])
        finally:
            await client.aclose()

    completion = anyio.run(ask)
    last = completion.tries[-1]
    assert last.status == "ok", last.error
    assert last.text == "Hello, world"
    assert (last.prompt_tokens, last.completion_tokens, last.usage_source) == (11, 3, "reported")
