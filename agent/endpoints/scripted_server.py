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
import random
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent import QuotabenchError
from agent.endpoints.provider_model import ProviderModel
from agent.endpoints.scripted_http import ScriptedHandler, ScriptedHTTPServer, error_body
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
from agent.shipped import data_root
from verifiers import VerifierError
from verifiers.tasks import load_suite

FAULTS = ("429", "500", "overflow", "401", "cut", "malformed", "slow", "empty", "no_choices", "no_usage", "drop")
REQUEST_LOG = 256
TASK_FILES = 64


def default_suites() -> list[Path]:
    """Every suite folder of the shipped fixtures/."""
    root = data_root() / "fixtures"
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")) if root.is_dir() else []


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
        self.lock = threading.Lock()
        self._stopping = threading.Event()
        self._in_flight = 0
        self._served = self._workload = 0
        self._httpd: ScriptedHTTPServer | None = None
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
        self._httpd = ScriptedHTTPServer((self.host, self.port), ScriptedHandler)
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
        with self.lock:
            self._faults.extend(faults)

    def models(self) -> list[str]:
        return sorted(SCRIPTS)

    # -- used by the handler threads (scripted_http.ScriptedBackend) -------------------------------------------------------

    def record(self, body: dict[str, Any], headers: dict[str, str], probe: bool) -> tuple[str | None, int]:
        with self.lock:
            if probe:
                self.probes.append(body)
            else:
                self.requests.append(body)
                self.request_headers.append(headers)
                self._workload += 1
            self._served += 1
            return (self._faults.popleft() if self._faults and not probe else None), self._served

    @contextlib.contextmanager
    def busy(self) -> Iterator[None]:
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
        with self.lock:
            self._in_flight += 1
            self.peak_concurrency = max(self.peak_concurrency, self._in_flight)
        try:
            yield
        finally:
            with self.lock:
                self._in_flight -= 1

    def wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def log_usage(self, prompt: int, completion: int, probe: bool = False) -> None:
        with self.lock:
            (self.probe_log if probe else self.usage_log).append((prompt, completion))

    def turn(self, body: dict[str, Any]) -> tuple[int, dict[str, Any] | None, str, list[tuple[str, str]]]:
        """(status, error body, reply text, tool calls) for a chat request."""
        model = body.get("model")
        if model not in SCRIPTS:
            return (
                404,
                error_body(
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
            return 400, error_body("the first user message has no `Task id: <id>` line"), "", []
        task = self.tasks.get(match.group(1))
        if task is None:
            return (
                400,
                error_body(
                    f"task id {match.group(1)!r} is in none of the suites ({', '.join(str(s) for s in self.suites)})"
                ),
                "",
                [],
            )
        turn = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
        reply = play(model, task, turn, self.session_seed, request_seed=body.get("seed"), stage=stage_of(body))
        return (200, None, *render(reply, native))


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
