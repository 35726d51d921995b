"""The scripted server's HTTP side: the OpenAI-compatible routes, the faults as the wire shows
them (status codes, cut and garbage bodies, dropped connections) and streaming. What to answer
comes from a ScriptedBackend (agent.endpoints.scripted_server.ScriptedServer)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol, cast

from agent.endpoints.provider_model import ProviderModel
from agent.endpoints.scripted_models import is_probe
from agent.endpoints.tokens import estimate_messages_tokens, estimate_reply_tokens

FINGERPRINT = "fp_scripted_1"


class ScriptedBackend(Protocol):
    """What the handler threads use of the scripted server."""

    delay_s: float
    slow_s: float
    report_model: str | None
    context_limit: int | None
    stream_usage: bool
    provider: ProviderModel | None
    connections: int
    lock: threading.Lock

    def models(self) -> list[str]: ...

    def record(self, body: dict[str, Any], headers: dict[str, str], probe: bool) -> tuple[str | None, int]: ...

    def busy(self) -> contextlib.AbstractContextManager[None]: ...

    def wait(self, seconds: float) -> None: ...

    def log_usage(self, prompt: int, completion: int, probe: bool = False) -> None: ...

    def turn(self, body: dict[str, Any]) -> tuple[int, dict[str, Any] | None, str, list[tuple[str, str]]]: ...


def _overflow(limit: int = 8192, prompt: int = 9100) -> dict[str, Any]:
    return {
        "message": f"This model's maximum context length is {limit} tokens. However, your messages resulted "
        f"in {prompt} tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }


def error_body(message: str, kind: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class ScriptedHTTPServer(ThreadingHTTPServer):
    scripted: ScriptedBackend
    daemon_threads = True

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.scripted.lock:  # every accepted TCP connection (reuse shows as few)
            self.scripted.connections += 1
        super().process_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client hanging up is not news
            super().handle_error(request, client_address)


class ScriptedHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "quotabench-scripted/1"
    disable_nagle_algorithm = True  # TCP_NODELAY, as uvicorn and llama.cpp set: no 40 ms per reused reply

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 — quiet; the tests read .requests
        pass

    @property
    def scripted(self) -> ScriptedBackend:
        return cast(ScriptedHTTPServer, self.server).scripted

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "quotabench"} for m in self.scripted.models()
            ]
            self._json(200, {"object": "list", "data": data})
        else:
            self._json(404, error_body(f"no route GET {self.path}"))

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            return self._json(404, error_body(f"no route POST {self.path}"))
        try:
            body = json.loads(raw)
        except ValueError:
            return self._json(400, error_body("the request body is not JSON"))
        probe = isinstance(body, dict) and is_probe(body)
        fault, number = self.scripted.record(body, dict(self.headers.items()), probe)
        try:
            with self.scripted.busy():
                self._chat(body, fault or "", number, probe)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout, abort)
            self.close_connection = True

    def _chat(self, body: dict[str, Any], fault: str, number: int, probe: bool = False) -> None:
        name, _, arg = fault.partition(":")
        server, stream = self.scripted, bool(body.get("stream"))
        server.wait(server.delay_s)
        if name == "slow":
            server.wait(server.slow_s)
        if name == "drop":
            self.close_connection = True
            return
        if name == "429":
            return self._json(
                429,
                error_body("Rate limit reached; try again later.", "rate_limit_error", "rate_limit_exceeded"),
                {} if arg == "none" else {"Retry-After": arg or "1"},
            )
        if name == "500":
            return self._json(500, error_body("The server had an error processing your request.", "server_error"))
        if name == "overflow":
            return self._json(400, {"error": _overflow()})
        if name == "401":
            key = self.headers.get("Authorization", "").removeprefix("Bearer ")
            return self._json(401, error_body(f"Incorrect API key provided: {key}.", code="invalid_api_key"))
        if name == "empty":
            return self._send(200, b"", "text/event-stream" if stream else "application/json")
        prompt = estimate_messages_tokens(body.get("messages") or [], body.get("tools"))
        if server.context_limit is not None and prompt >= server.context_limit:
            return self._json(400, {"error": _overflow(server.context_limit, prompt)})
        if server.provider is not None and not probe and (refused := server.provider.admit(body, prompt)):
            return self._json(*refused)
        status, error, text, calls = server.turn(body)
        if error is not None:
            return self._json(status, error)
        usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": estimate_reply_tokens(text, calls)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        headers = {}
        if server.provider is not None:
            usage, headers = server.provider.bill(body, usage), server.provider.headers()
        reports = name not in ("no_usage", "cut", "malformed", "no_choices") and (
            not stream or (server.stream_usage and bool((body.get("stream_options") or {}).get("include_usage")))
        )
        if reports:
            server.log_usage(usage["prompt_tokens"], usage["completion_tokens"], probe)
        base = {
            "id": f"chatcmpl-scripted-{number}",
            "created": int(time.time()),
            "model": server.report_model or body["model"],
            "system_fingerprint": FINGERPRINT,
        }
        finish = "tool_calls" if calls else "stop"
        # tool-call ids from the request, not the server's count: the same request gets the same
        # reply, byte for byte, whatever came before it (a resumed run's retry is the clean run's)
        tag = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).hexdigest()[:12]
        if stream:
            self._stream(base, text, calls, finish, usage if reports else None, name, tag, headers)
        else:
            self._whole(base, text, calls, finish, usage if reports else None, name, tag, headers)

    def _whole(
        self,
        base: dict[str, Any],
        text: str,
        calls: list[Any],
        finish: str,
        usage: dict[str, Any] | None,
        fault: str,
        tag: str,
        headers: dict[str, str],
    ) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = [
                {"id": f"call_{tag}_{i}", "type": "function", "function": {"name": n, "arguments": a}}
                for i, (n, a) in enumerate(calls)
            ]
        choices = [] if fault == "no_choices" else [{"index": 0, "message": message, "finish_reason": finish}]
        data = {**base, "object": "chat.completion", "choices": choices}
        if usage is not None:
            data["usage"] = usage
        payload = json.dumps(data).encode()
        if fault == "malformed":
            return self._send(200, payload[: len(payload) // 2] + b"<<garbage", "application/json", headers)
        if fault == "cut":
            self._send_headers(200, "application/json", {"Content-Length": str(len(payload)), **headers})
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self._send(200, payload, "application/json", headers)

    def _stream(
        self,
        base: dict[str, Any],
        text: str,
        calls: list[Any],
        finish: str,
        usage: dict[str, Any] | None,
        fault: str,
        tag: str,
        headers: dict[str, str],
    ) -> None:
        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            return {
                **base,
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }

        events = [chunk({"role": "assistant", "content": ""})] + [chunk({"content": p}) for p in _pieces(text, 24)]
        for i, (name, arguments) in enumerate(calls):
            events.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": i,
                                "id": f"call_{tag}_{i}",
                                "type": "function",
                                "function": {"name": name, "arguments": ""},
                            }
                        ]
                    }
                )
            )
            events += [
                chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]}) for p in _pieces(arguments, 40)
            ]
        events.append(chunk({}, finish))
        if fault == "no_choices":
            events = []
        if usage is not None:
            events.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
        lines = [f"data: {json.dumps(e)}\n\n".encode() for e in events] + [b"data: [DONE]\n\n"]
        half = max(2, len(lines) // 2)
        if fault == "malformed":
            lines.insert(half, b'data: {"choices": [{"delta": {"content": "tru<<garbage\n\n')
        self._send_headers(
            200, "text/event-stream", {"Transfer-Encoding": "chunked", "Cache-Control": "no-cache", **headers}
        )
        for i, line in enumerate(lines):
            if fault == "cut" and i == half:
                self.close_connection = True  # no terminating chunk: the client sees the body cut short
                return
            self.wfile.write(b"%X\r\n%s\r\n" % (len(line), line))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _send_headers(self, status: int, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()

    def _send(self, status: int, payload: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self._send_headers(status, content_type, {"Content-Length": str(len(payload)), **(headers or {})})
        self.wfile.write(payload)
        self.wfile.flush()

    def _json(self, status: int, data: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(data).encode(), "application/json", headers)
