"""A small hostile OpenAI-compatible server on 127.0.0.1: the request's `model` names what it
sends back. Turn 0 of a conversation gets the hostile reply; later turns get a plain `finish`,
so an attempt that survives the hostile reply ends on its own.

Tool-call payloads (a valid body whose tool call is hostile) and their text-protocol twins
(`text_...`), body payloads (a body whose shape is wrong, sent on every try), usage payloads
(a valid reply with unbelievable usage), `trickle` (a keep-alive byte every 2 s, never a reply),
`many_calls` (40 run_tests in one turn), `echo_key_*` (the bearer key echoed past character 200),
and dead endpoints: `dead_500` (HTTP 500 to every request) and `dead_no_choices` (200 with no choices).
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEEP = 3_000

# name -> (tool, raw arguments); "{file}" is replaced by an existing workspace file
TOOL_PAYLOADS = {
    "nul_path": ("write_file", json.dumps({"path": "a\u0000b.py", "content": "x = 1\n"})),
    "through_file": ("write_file", json.dumps({"path": "{file}/x.py", "content": "x = 1\n"})),
    "long_name": ("write_file", json.dumps({"path": "a" * 300, "content": "x = 1\n"})),
    "surrogate": ("write_file", '{"path": "notes.txt", "content": "bad \\ud800 text"}'),
    "deep_args": ("write_file", '{"path": "x.py", "content": ' + "[" * DEEP + "]" * DEEP + "}"),
    "huge_write": ("write_file", json.dumps({"path": "big.txt", "content": "x" * 1_500_000})),
    "read_through_file": ("read_file", json.dumps({"path": "{file}/x"})),
    "edit_surrogate": ("edit_file", '{"path": "{file}", "old": "def", "new": "\\udc80"}'),
}
TEXT_PAYLOADS = {
    "text_nul_path": "```write_file path=a\u0000b.py\nx = 1\n```",
    "text_through_file": "```write_file path={file}/x.py\nx = 1\n```",
    "text_long_name": "```write_file path=" + "b" * 300 + "\nx = 1\n```",
    "text_surrogate": "```write_file path=notes.txt\nbad \ud800 text\n```",
    "text_fences": "".join("`" * k + "x\n" for k in range(3, 400)),
}
_CHOICE = {"index": 0, "finish_reason": "stop"}
BODY_PAYLOADS = {
    "message_str": {"choices": [{**_CHOICE, "message": "hi"}]},
    "tool_calls_str": {
        "choices": [{**_CHOICE, "message": {"role": "assistant", "content": None, "tool_calls": "list_files"}}]
    },
    "call_list": {"choices": [{**_CHOICE, "message": {"role": "assistant", "tool_calls": [["list_files", "{}"]]}}]},
    "function_str": {
        "choices": [
            {
                **_CHOICE,
                "message": {
                    "role": "assistant",
                    "tool_calls": [{"id": "c1", "type": "function", "function": "list_files"}],
                },
            }
        ]
    },
    "name_int": {
        "choices": [
            {
                **_CHOICE,
                "message": {
                    "role": "assistant",
                    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": 5, "arguments": "{}"}}],
                },
            }
        ]
    },
    "delta_str": {"choices": [{**_CHOICE, "delta": "hi"}]},
    "content_int": {"choices": [{**_CHOICE, "message": {"role": "assistant", "content": 12}}]},
    "choices_dict": {"choices": {"0": {"message": {"content": "hi"}}}},
}
USAGE_PAYLOADS = {
    "usage_huge": {"prompt_tokens": 10**30, "completion_tokens": 5},
    "usage_str": "lots",
    "usage_list": [1, 2],
    "usage_negative": {"prompt_tokens": -1_000_000, "completion_tokens": -50},
    "usage_float": {"prompt_tokens": 1e30, "completion_tokens": 1.5},
    "usage_bool": {"prompt_tokens": True, "completion_tokens": False},
}
RAW_PAYLOADS = {  # bodies that are not even a protocol-shaped JSON object
    "deep_body": ('{"a":' * 5_000 + "1" + "}" * 5_000).encode(),
    "huge_body": b'{"choices": [{"message": {"content": "' + b"y" * (20 * 1024 * 1024) + b'"}}]}',
    "list_body": b"[1, 2, 3]",
    "not_utf8": b'{"choices": [{"message": {"content": "\xff\xfe\xfd"}, "finish_reason": "stop"}]}',
}
_FILES = re.compile(r"Files in the workspace:\n(?P<first>[^\n]+)")


class HostileServer:
    def __init__(self, key_padding: int = 250):
        self.key_padding = key_padding
        self.requests: list[dict] = []
        self.authorizations: list[str] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.hostile = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def _message(content: str | None, calls: list[tuple[str, str]]) -> dict:
    message: dict = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(calls)
        ]
    return {
        "id": "x",
        "object": "chat.completion",
        "model": "hostile",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        self._send(200, json.dumps({"object": "list", "data": [{"id": "hostile"}]}).encode())

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        server: HostileServer = self.server.hostile  # type: ignore[attr-defined]
        with server._lock:
            server.requests.append(body)
            server.authorizations.append(self.headers.get("Authorization", ""))
        try:
            self._reply(server, body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _reply(self, server: HostileServer, body: dict) -> None:
        name = body.get("model", "")
        messages = body.get("messages") or []
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        text_mode = not body.get("tools")
        users = [m.get("content") or "" for m in messages if m.get("role") == "user"]
        match = _FILES.search(users[0] if users else "")
        first_file = match.group("first") if match else "main.py"
        key = self.headers.get("Authorization", "").removeprefix("Bearer ")
        if name.startswith("echo_key"):
            return self._echo_key(name, key, server.key_padding)
        if name == "trickle":
            return self._trickle(server)
        if name == "dead_500":  # every request, probes too
            return self._send(500, json.dumps({"error": {"message": "internal error"}}).encode())
        if name == "dead_no_choices":
            return self._json({"id": "x", "object": "chat.completion", "choices": []})
        if turn > 0 and name not in BODY_PAYLOADS and name not in RAW_PAYLOADS:
            return self._json(_message("```finish```", []) if text_mode else _message("done", [("finish", "{}")]))
        if name in TOOL_PAYLOADS:
            tool, arguments = TOOL_PAYLOADS[name]
            return self._json(_message("working", [(tool, arguments.replace("{file}", first_file))]))
        if name in TEXT_PAYLOADS:
            return self._json(_message(TEXT_PAYLOADS[name].replace("{file}", first_file), []))
        if name in BODY_PAYLOADS:
            return self._json(BODY_PAYLOADS[name])
        if name in USAGE_PAYLOADS:
            reply = _message("looking", [("list_files", "{}")])
            reply["usage"] = USAGE_PAYLOADS[name]
            return self._json(reply)
        if name in RAW_PAYLOADS:
            return self._send(200, RAW_PAYLOADS[name])
        if name == "many_calls":
            return self._json(_message("testing", [("run_tests", "{}")] * 40))
        return self._send(404, json.dumps({"error": {"message": f"no payload {name!r}"}}).encode())

    def _echo_key(self, name: str, key: str, padding: int) -> None:
        echoed = "p" * padding + f" your key {key} is wrong"
        if name == "echo_key_401":
            return self._send(401, json.dumps({"error": {"message": echoed}}).encode())
        if name == "echo_key_text":
            return self._send(500, echoed.encode())
        if name == "echo_key_garbage":  # unparseable body: quoted in the error
            return self._send(200, ("{" + echoed).encode())
        if name == "echo_key_stream":  # an error event inside a stream
            payload = f"data: {json.dumps({'error': {'message': echoed}})}\n\n".encode()
            return self._send(200, payload, "text/event-stream")
        return self._json(_message(echoed, [("finish", json.dumps({"summary": echoed}))]))  # echo_key_content

    def _trickle(self, server: HostileServer) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        while not server._stopping.is_set():
            line = b": keep-alive\n\n"
            self.wfile.write(b"%X\r\n%s\r\n" % (len(line), line))
            self.wfile.flush()
            server._stopping.wait(2.0)

    def _json(self, data: dict) -> None:
        self._send(200, json.dumps(data).encode())

    def _send(self, status: int, payload: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()


def wait_until(predicate, timeout: float = 60.0, every: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)
    return False
