"""An endpoint that answers every chat request at once with the same `list_files` tool call, for
the per-call benchmarks: in process (an httpx MockTransport handler) and over loopback HTTP (a
server in its own process, so its CPU is not the client's).

    python benchmarks/canned.py [--port 0]     prints the port it listens on, then serves
"""

from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

MODEL = "instant"
_TOOL_CALL = {"index": 0, "id": "c1", "type": "function", "function": {"name": "list_files", "arguments": "{}"}}
_USAGE = {"prompt_tokens": 100, "completion_tokens": 10}
MODELS = json.dumps({"data": [{"id": MODEL}]}).encode()


def _sse(chunks: list[dict]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


STREAMED = _sse(
    [
        {"model": MODEL, "choices": [{"index": 0, "delta": {"tool_calls": [_TOOL_CALL]}}]},
        {"model": MODEL, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"model": MODEL, "choices": [], "usage": _USAGE},
    ]
)
WHOLE = json.dumps(
    {
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": [_TOOL_CALL]},
                "finish_reason": "tool_calls",
            }
        ],
        "usage": _USAGE,
    }
).encode()


def reply(body: bytes) -> tuple[bytes, str]:
    """The canned reply to a chat request's body, streamed if it asks for a stream."""
    if json.loads(body).get("stream"):
        return STREAMED, "text/event-stream"
    return WHOLE, "application/json"


def handler(request: httpx.Request) -> httpx.Response:
    """The canned endpoint as an httpx MockTransport handler."""
    if request.url.path.endswith("/models"):
        return httpx.Response(200, content=MODELS, headers={"content-type": "application/json"})
    content, kind = reply(request.content)
    return httpx.Response(200, content=content, headers={"content-type": kind})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a real endpoint offers
    disable_nagle_algorithm = True  # else a reply written in two pieces waits out a delayed ACK

    def _send(self, content: bytes, kind: str) -> None:
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)
        self.wfile.flush()

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self._send(MODELS, "application/json")

    def do_POST(self) -> None:  # noqa: N802
        self._send(*reply(self.rfile.read(int(self.headers.get("content-length", 0)))))

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), _Handler)
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
