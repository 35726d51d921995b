"""A real OpenAI-compatible HTTP server on loopback that plays the scripted models
(agent.endpoints.scripted_models) on fixture tasks, with transport faults on demand.

    GET  /v1/models            the scripted model names
    POST /v1/chat/completions  stream true/false; the request's `model` picks the script, the
                               first user message's `Task id: <id>` line picks the task

Usage is reported with the shared estimator (agent.endpoints.tokens): prompt tokens of the request,
completion tokens of the reply. `inject()` queues one fault per chat request:

    429[:SECONDS|:none]  HTTP 429 with Retry-After (default 1)      500     HTTP 500
    overflow  HTTP 400 context_length_exceeded      401  HTTP 401 echoing the bearer token
    cut       half the stream (or body), then the connection closes
    malformed a garbage JSON line in the stream (a garbage body when not streaming)
    slow      wait `slow_s` before answering        empty   HTTP 200 with an empty body
    no_choices  HTTP 200 without choices            no_usage  a normal reply without usage
    drop      close the connection without a response

`provider` (agent.endpoints.provider_model.ProviderModel) bills and limits as a hosted provider:
a prompt cache, reasoning tokens, usage.cost, a tokens-per-minute limit in headers, a quota.
`connections` counts the TCP connections accepted (a client that keeps its connection: 1).

Misreport switches (what an endpoint says it is vs what it runs; preflight finds each):
`report_model` (replies name another model), `context_limit` (prompts of that many estimated
tokens or more are refused as context_length_exceeded), `tool_calls=False` (tools are ignored:
actions come back as text), `stream_usage=False` (no usage in streams), `slots=1` (one request
at a time: the rest queue). `session_seed`: an int, or "random" for a new one at every start;
within a session the same request always gets the same reply, a new seed varies the wording
and `coin`'s toss (agent.endpoints.scripted_models.play). A preflight probe (a request carrying
scripted_models.PROBE_MARKER) gets a short reply, never takes an injected fault, and is kept
in `probes` and `probe_log`, apart from the workload's `requests` and `usage_log`.

Run `python -m agent.endpoints.scripted_server --port 8000 [--suite fixtures/smoke]` for demos (`--help`
lists the switches).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import hashlib
import json
import random
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast

from agent import QuotabenchError
from agent.endpoints.provider_model import ProviderModel
from agent.endpoints.scripted_models import (
    SCRIPTS,
    TASK_ID,
    TaskFilesByID,
    first_user_text,
    is_probe,
    play,
    probe_reply,
    render,
    stage_of,
)
from agent.endpoints.tokens import estimate_messages_tokens, estimate_reply_tokens
from agent.shipped import data_root
from verifiers import VerifierError
from verifiers.tasks import load_suite

FAULTS = ("429", "500", "overflow", "401", "cut", "malformed", "slow", "empty", "no_choices", "no_usage", "drop")
FINGERPRINT = "fp_scripted_1"
REQUEST_LOG = 256
TASK_FILES = 64


def _overflow(limit: int = 8192, prompt: int = 9100) -> dict[str, Any]:
    return {
        "message": f"This model's maximum context length is {limit} tokens. However, your messages resulted "
        f"in {prompt} tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }


def default_suites() -> list[Path]:
    """Every suite folder of the shipped fixtures/."""
    root = data_root() / "fixtures"
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")) if root.is_dir() else []


def _error(message: str, kind: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class ScriptedServer:
    """The server; `start()` serves in a background thread (also a context manager)."""

    def __init__(
        self,
        suites: list[Path] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        delay_s: float = 0.0,
        slow_s: float = 5.0,
        report_model: str | None = None,
        context_limit: int | None = None,
        tool_calls: bool = True,
        stream_usage: bool = True,
        slots: int | None = None,
        session_seed: int | str | None = None,
        provider: ProviderModel | None = None,
    ):
        self.provider = provider  # bills and limits as a hosted provider does (agent/endpoints/provider_model.py)
        self.suites = [Path(s) for s in (suites if suites is not None else default_suites())]
        self.host, self.port, self.delay_s, self.slow_s = host, port, delay_s, slow_s
        self.report_model, self.context_limit = report_model, context_limit
        self.tool_calls, self.stream_usage = tool_calls, stream_usage
        self._slots = threading.BoundedSemaphore(slots) if slots else None
        if session_seed is not None and session_seed != "random" and not isinstance(session_seed, int):
            raise QuotabenchError(f"scripted server: session_seed {session_seed!r} — use an integer or 'random'")
        self.session_policy = session_seed
        self.session_seed: int | None = session_seed if isinstance(session_seed, int) else None
        # The last REQUEST_LOG chat requests (bodies, headers, reported usage), for tests: a long
        # run keeps a window, not every body (~24 KB per attempt). `served` counts them all.
        self.requests: collections.deque[dict[str, Any]] = collections.deque(maxlen=REQUEST_LOG)  # the workload's
        self.request_headers: collections.deque[dict[str, str]] = collections.deque(maxlen=REQUEST_LOG)
        self.usage_log: collections.deque[tuple[int, int]] = collections.deque(maxlen=REQUEST_LOG)
        self.probes: collections.deque[dict[str, Any]] = collections.deque(maxlen=REQUEST_LOG)  # preflight's
        self.probe_log: collections.deque[tuple[int, int]] = collections.deque(maxlen=REQUEST_LOG)
        self.peak_concurrency = 0
        self.connections = 0  # TCP connections accepted since the server was made
        self.tasks = TaskFilesByID(TASK_FILES)
        self.problems: list[str] = []
        self._faults: collections.deque[str] = collections.deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._in_flight = 0
        self._served = self._workload = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        for suite in self.suites:
            try:
                loaded = load_suite(suite)
            except VerifierError as exc:
                raise QuotabenchError(f"scripted server: {exc}") from None
            self.problems += [str(p) for p in loaded.problems]
            for task in loaded.tasks:
                self.tasks.add(task)

    @property
    def served(self) -> int:
        """Workload chat requests (not preflight probes) received since the server was made (the
        logs keep only the last REQUEST_LOG)."""
        return self._workload

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> ScriptedServer:
        if self.session_policy == "random":  # a new session: what a restarted real server is
            self.session_seed = random.SystemRandom().randrange(2**32)
        self._stopping.clear()
        self._httpd = _HTTPServer((self.host, self.port), _Handler)
        self._httpd.scripted = self
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.01},
            name=f"scripted-server-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers waiting on delay_s / slow
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def inject(self, *faults: str) -> None:
        """Queue faults for the next chat requests, one per request, in order."""
        for fault in faults:
            if fault.partition(":")[0] not in FAULTS:
                raise QuotabenchError(f"scripted server: unknown fault {fault!r} — use one of {', '.join(FAULTS)}")
        with self._lock:
            self._faults.extend(faults)

    def models(self) -> list[str]:
        return sorted(SCRIPTS)

    # -- used by the handler threads -------------------------------------------------------

    def _record(self, body: dict[str, Any], headers: dict[str, str], probe: bool) -> tuple[str | None, int]:
        with self._lock:
            if probe:
                self.probes.append(body)
            else:
                self.requests.append(body)
                self.request_headers.append(headers)
                self._workload += 1
            self._served += 1
            return (self._faults.popleft() if self._faults and not probe else None), self._served

    @contextlib.contextmanager
    def _busy(self) -> Iterator[None]:
        if self._slots is not None:
            self._slots.acquire()  # serial slots: the request queues here, as on a one-slot server
        try:
            with self._in_flight_count():
                yield
        finally:
            if self._slots is not None:
                self._slots.release()

    @contextlib.contextmanager
    def _in_flight_count(self) -> Iterator[None]:
        with self._lock:
            self._in_flight += 1
            self.peak_concurrency = max(self.peak_concurrency, self._in_flight)
        try:
            yield
        finally:
            with self._lock:
                self._in_flight -= 1

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def _log_usage(self, prompt: int, completion: int, probe: bool = False) -> None:
        with self._lock:
            (self.probe_log if probe else self.usage_log).append((prompt, completion))

    def _turn(self, body: dict[str, Any]) -> tuple[int, dict[str, Any] | None, str, list[tuple[str, str]]]:
        """(status, error body, reply text, tool calls) for a chat request."""
        model = body.get("model")
        if model not in SCRIPTS:
            return (
                404,
                _error(
                    f"model {model!r} does not exist; scripted models: {', '.join(self.models())}",
                    code="model_not_found",
                ),
                "",
                [],
            )
        native = bool(body.get("tools")) and self.tool_calls
        if is_probe(body):
            return (
                200,
                None,
                *render(probe_reply(body.get("tools"), body.get("tool_choice"), self.tool_calls), native),
            )
        match = TASK_ID.search(first_user_text(body))
        if match is None:
            return 400, _error("the first user message has no `Task id: <id>` line"), "", []
        task = self.tasks.get(match.group(1))
        if task is None:
            return (
                400,
                _error(
                    f"task id {match.group(1)!r} is in none of the suites ({', '.join(str(s) for s in self.suites)})"
                ),
                "",
                [],
            )
        turn = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
        reply = play(model, task, turn, self.session_seed, request_seed=body.get("seed"), stage=stage_of(body))
        return (200, None, *render(reply, native))


class _HTTPServer(ThreadingHTTPServer):
    scripted: ScriptedServer
    daemon_threads = True

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.scripted._lock:  # every accepted TCP connection (reuse shows as few)
            self.scripted.connections += 1
        super().process_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client hanging up is not news
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "quotabench-scripted/1"
    disable_nagle_algorithm = True  # TCP_NODELAY, as uvicorn and llama.cpp set: no 40 ms per reused reply

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 — quiet; the tests read .requests
        pass

    @property
    def scripted(self) -> ScriptedServer:
        return cast(_HTTPServer, self.server).scripted

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "quotabench"} for m in self.scripted.models()
            ]
            self._json(200, {"object": "list", "data": data})
        else:
            self._json(404, _error(f"no route GET {self.path}"))

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            return self._json(404, _error(f"no route POST {self.path}"))
        try:
            body = json.loads(raw)
        except ValueError:
            return self._json(400, _error("the request body is not JSON"))
        probe = isinstance(body, dict) and is_probe(body)
        fault, number = self.scripted._record(body, dict(self.headers.items()), probe)
        try:
            with self.scripted._busy():
                self._chat(body, fault or "", number, probe)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout, abort)
            self.close_connection = True

    def _chat(self, body: dict[str, Any], fault: str, number: int, probe: bool = False) -> None:
        name, _, arg = fault.partition(":")
        server, stream = self.scripted, bool(body.get("stream"))
        server._wait(server.delay_s)
        if name == "slow":
            server._wait(server.slow_s)
        if name == "drop":
            self.close_connection = True
            return
        if name == "429":
            return self._json(
                429,
                _error("Rate limit reached; try again later.", "rate_limit_error", "rate_limit_exceeded"),
                {} if arg == "none" else {"Retry-After": arg or "1"},
            )
        if name == "500":
            return self._json(500, _error("The server had an error processing your request.", "server_error"))
        if name == "overflow":
            return self._json(400, {"error": _overflow()})
        if name == "401":
            key = self.headers.get("Authorization", "").removeprefix("Bearer ")
            return self._json(401, _error(f"Incorrect API key provided: {key}.", code="invalid_api_key"))
        if name == "empty":
            return self._send(200, b"", "text/event-stream" if stream else "application/json")
        prompt = estimate_messages_tokens(body.get("messages") or [], body.get("tools"))
        if server.context_limit is not None and prompt >= server.context_limit:
            return self._json(400, {"error": _overflow(server.context_limit, prompt)})
        if server.provider is not None and not probe and (refused := server.provider.admit(body, prompt)):
            return self._json(*refused)
        status, error, text, calls = server._turn(body)
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
            server._log_usage(usage["prompt_tokens"], usage["completion_tokens"], probe)
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


def _seed(text: str) -> int | str:
    if text == "random" or text.isdigit():
        return text if text == "random" else int(text)
    raise argparse.ArgumentTypeError(f"{text!r} is not an integer or 'random'")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agent.endpoints.scripted_server",
        description="Serve the scripted models over an OpenAI-compatible API.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument(
        "--suite", action="append", type=Path, help="suite folder (repeatable; default: all of fixtures/)"
    )
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to wait before every reply")
    parser.add_argument("--report-model", help="misreport: name this model in every reply")
    parser.add_argument("--context-limit", type=int, help="misreport: refuse prompts of this many tokens or more")
    parser.add_argument("--no-tool-calls", action="store_true", help="misreport: ignore tools, answer in text")
    parser.add_argument("--no-stream-usage", action="store_true", help="misreport: never send usage in streams")
    parser.add_argument("--slots", type=int, help="requests served at once (1 = serial: the rest queue)")
    parser.add_argument("--session-seed", type=_seed, help="an integer, or 'random' for a new seed at every start")
    args = parser.parse_args(argv)
    seed = args.session_seed
    try:
        server = ScriptedServer(
            args.suite,
            args.host,
            args.port,
            delay_s=args.delay,
            report_model=args.report_model,
            context_limit=args.context_limit,
            tool_calls=not args.no_tool_calls,
            stream_usage=not args.no_stream_usage,
            slots=args.slots,
            session_seed=seed,
        ).start()
    except (QuotabenchError, OSError) as exc:
        print(f"scripted server: cannot start on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 2
    session = "" if server.session_seed is None else f"; session seed {server.session_seed}"
    print(
        f"scripted server at {server.base_url} — models: {', '.join(server.models())}; "
        f"{len(server.tasks)} tasks{session}",
        flush=True,
    )
    for problem in server.problems:
        print(f"skipped {problem}", file=sys.stderr)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
