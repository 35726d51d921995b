"""An async OpenAI-compatible chat client over httpx, and the `ChatEndpoint` seam it fills.

`ChatClient.complete` retries transport faults (capped exponential backoff, full jitter) and
reports every HTTP try as a `CallTry` through `on_try` before the next try (seeds 002, 004).
Tokens per try: reported usage wins; else, if output arrived (success without usage, stream
cut, malformed mid-way), the prompt and what arrived are estimated; else 0 ("none").
The api key comes from the environment variable named in the settings and is never shown.
"""
from __future__ import annotations

import functools
import json
import os
import random
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Awaitable, Callable, Protocol

import anyio
import httpx

from agent import QuotabenchError
from agent.tokens import estimate_messages_tokens, estimate_reply_tokens

RETRIED_STATUSES = frozenset({"http_429", "http_5xx", "connect_error", "read_timeout",
                              "stream_cut", "malformed_json", "empty_response"})
_OVERFLOW_MARKERS = ("context_length_exceeded", "context length", "context window", "maximum context",
                     "prompt is too long", "too many tokens", "exceeds the context")


@dataclass(frozen=True)
class EndpointSettings:
    """How to reach one arm's endpoint. `api_key_env` is the NAME of an environment variable."""
    base_url: str
    model: str
    api_key_env: str | None = None
    temperature: float | None = 0.0
    top_p: float | None = None
    max_tokens: int = 1024
    seed: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    request_timeout_s: float = 120.0  # connect, and each read of the response (httpx semantics)
    max_concurrency: int = 2
    max_retries: int = 4  # retries after the first try
    backoff_base_s: float = 0.5
    backoff_cap_s: float = 20.0
    stream: bool = True
    tool_choice: str | dict | None = None  # sent only when tools are given


@dataclass(frozen=True)
class ToolCallRequest:
    id: str
    name: str
    arguments: str  # raw, exactly as the server sent it (may not be valid JSON)


@dataclass(frozen=True)
class CallTry:
    """One HTTP try: one ledger row. status: ok, http_4xx, context_overflow or one of RETRIED_STATUSES."""
    retry_index: int
    started_utc: str
    latency_ms: int
    status: str
    http_status: int | None
    prompt_tokens: int
    completion_tokens: int
    usage_source: str  # reported | estimated | none
    model_reported: str | None
    system_fingerprint: str | None
    finish_reason: str | None
    error: str | None  # one line, never containing the api key
    text: str  # assistant text received (possibly partial)
    tool_calls: tuple[ToolCallRequest, ...]


@dataclass(frozen=True)
class Completion:
    """The successful result of `complete`, with every try it took."""
    text: str
    tool_calls: tuple[ToolCallRequest, ...]
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    usage_source: str
    model_reported: str | None
    system_fingerprint: str | None
    tries: tuple[CallTry, ...]


class EndpointError(QuotabenchError):
    """The call failed for good (retry limit or a non-retried 4xx); `.tries` holds every try."""

    def __init__(self, message: str, tries: tuple[CallTry, ...] = ()):
        super().__init__(message)
        self.tries = tuple(tries)


class ContextOverflow(EndpointError):
    """HTTP 400 saying the prompt is longer than the model's context (never retried)."""


class ChatEndpoint(Protocol):
    """The seam the agent loop talks to; ChatClient is the HTTP implementation."""

    async def complete(self, messages: list[dict], tools: list[dict] | None = None, *,
                       on_try: Callable[[CallTry], Awaitable[None]] | None = None,
                       on_delta: Callable[[str], None] | None = None) -> Completion: ...

    async def aclose(self) -> None: ...


class _TryFailed(Exception):
    def __init__(self, status: str, error: str, retry_after: float | None = None):
        super().__init__(error)
        self.status, self.error, self.retry_after = status, error, retry_after


@dataclass
class _Reply:
    """What one try received so far, assembled from stream chunks or a whole response body."""
    http_status: int | None = None
    received: bool = False  # any payload besides [DONE] arrived
    saw_choices: bool = False
    done: bool = False
    text_parts: list[str] = field(default_factory=list)
    calls: dict[int, dict] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: tuple[int, int] | None = None
    model: str | None = None
    fingerprint: str | None = None

    @property
    def text(self) -> str:
        return "".join(self.text_parts)

    @property
    def tool_calls(self) -> tuple[ToolCallRequest, ...]:
        return tuple(ToolCallRequest(c["id"] or f"call_{i}", c["name"], c["arguments"])
                     for i, c in sorted(self.calls.items()))

    def absorb(self, data: dict, on_delta: Callable[[str], None] | None = None) -> None:
        """Fold in a stream chunk (choices[].delta) or a whole response (choices[].message)."""
        if data.get("error"):
            message = _error_text(data["error"])
            raise _TryFailed("context_overflow" if _is_overflow(message) else "stream_cut",
                             f"server sent an error: {message}")
        self.model = data.get("model") or self.model
        self.fingerprint = data.get("system_fingerprint") or self.fingerprint
        usage = data.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
            self.usage = (usage["prompt_tokens"], int(usage.get("completion_tokens") or 0))
        choices = data.get("choices") or []
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return
        self.saw_choices = True
        choice = choices[0]
        self.finish_reason = choice.get("finish_reason") or self.finish_reason
        part = choice.get("delta") or choice.get("message") or {}
        content = part.get("content")
        if isinstance(content, str) and content:
            self.text_parts.append(content)
            if on_delta is not None and "delta" in choice:
                on_delta(content)
        for position, call in enumerate(part.get("tool_calls") or ()):
            self._absorb_call(position, call)

    def _absorb_call(self, position: int, call: dict) -> None:
        index = call["index"] if isinstance(call.get("index"), int) else position
        slot = self.calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        slot["id"] = call.get("id") or slot["id"]
        function = call.get("function") or {}
        name = function.get("name") or ""
        if name and name != slot["name"]:
            slot["name"] += name
        arguments = function.get("arguments")
        if arguments is not None:
            slot["arguments"] += arguments if isinstance(arguments, str) else json.dumps(arguments)


class ChatClient:
    """OpenAI-compatible /chat/completions client for one arm (implements ChatEndpoint)."""

    def __init__(self, settings: EndpointSettings, *, transport: httpx.AsyncBaseTransport | None = None,
                 sleep: Callable[[float], Awaitable[None]] = anyio.sleep, rng: random.Random | None = None):
        self.settings = settings
        self._base = settings.base_url.rstrip("/")
        self._where = f"arm endpoint {settings.model} at {self._base}"
        self._key = os.environ.get(settings.api_key_env) if settings.api_key_env else None
        if settings.api_key_env and not self._key:
            raise QuotabenchError(f"{self._where}: environment variable {settings.api_key_env} is not set"
                                  " — export it or remove api_key_env")
        self._http = httpx.AsyncClient(transport=transport, timeout=httpx.Timeout(settings.request_timeout_s),
                                       verify=_ssl_context())
        self._semaphore = anyio.Semaphore(max(1, settings.max_concurrency))
        self._sleep = sleep
        self._rng = rng or random.Random()

    def __repr__(self) -> str:
        return f"ChatClient(model={self.settings.model!r}, base_url={self._base!r})"

    async def complete(self, messages: list[dict], tools: list[dict] | None = None, *,
                       on_try: Callable[[CallTry], Awaitable[None]] | None = None,
                       on_delta: Callable[[str], None] | None = None) -> Completion:
        """Send the request, retrying transport faults (on_delta sees each try's text)."""
        body = self._body(messages, tools)
        prompt_estimate = estimate_messages_tokens(messages, tools)
        tries: list[CallTry] = []
        for retry_index in range(self.settings.max_retries + 1):
            call, retry_after = await self._one_try(body, retry_index, prompt_estimate, on_delta)
            tries.append(call)
            if on_try is not None:
                await on_try(call)
            if call.status == "ok":
                return Completion(call.text, call.tool_calls, call.finish_reason, call.prompt_tokens,
                                  call.completion_tokens, call.usage_source, call.model_reported,
                                  call.system_fingerprint, tuple(tries))
            if call.status == "context_overflow":
                raise ContextOverflow(f"{self._where}: the prompt is longer than the model's context "
                                      f"({call.error}) — shorten the conversation or use a longer-context model", tuple(tries))
            if call.status not in RETRIED_STATUSES:
                raise EndpointError(f"{self._where}: the request was rejected ({call.error}) — check the "
                                    "model name, api key and request settings", tuple(tries))
            if retry_index < self.settings.max_retries:
                await self._sleep(self._backoff(retry_index, retry_after))
        raise EndpointError(f"{self._where}: {len(tries)} tries failed, the last with {tries[-1].status} "
                            f"({tries[-1].error}) — check that the server is up, or raise max_retries", tuple(tries))

    async def list_models(self) -> list[str]:
        """The model ids GET {base_url}/models lists; [] on any failure (never raises)."""
        try:
            response = await self._http.get(f"{self._base}/models", headers=self._headers())
            if response.status_code != 200:
                return []
            data = response.json().get("data") or []
            return [str(m["id"]) for m in data if isinstance(m, dict) and m.get("id")]
        except Exception:  # noqa: BLE001 — a probe: any failure means "no models known"
            return []

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _one_try(self, body: dict, retry_index: int, prompt_estimate: int,
                       on_delta: Callable[[str], None] | None) -> tuple[CallTry, float | None]:
        reply = _Reply()
        status, error, retry_after = "ok", None, None
        async with self._semaphore:
            started, t0 = datetime.now(timezone.utc).isoformat(timespec="milliseconds"), time.monotonic()
            try:
                await self._request(body, reply, on_delta)
                status, error = _final_status(reply)
            except _TryFailed as exc:
                status, error, retry_after = exc.status, exc.error, exc.retry_after
            except httpx.TimeoutException as exc:
                status = "connect_error" if isinstance(exc, (httpx.ConnectTimeout, httpx.PoolTimeout)) else "read_timeout"
                error = f"{type(exc).__name__}: {exc} (timeout {self.settings.request_timeout_s}s)"
            except httpx.RequestError as exc:  # refused, dropped before a response, cut mid-body, bad encoding
                status = "stream_cut" if reply.http_status is not None else "connect_error"
                reply.received = reply.http_status is not None  # the server was already answering
                error = f"{type(exc).__name__}: {exc}"
            latency_ms = int((time.monotonic() - t0) * 1000)
        prompt, completion, source = self._tokens(reply, status, prompt_estimate)
        call = CallTry(retry_index, started, latency_ms, status, reply.http_status, prompt, completion, source,
                       reply.model, reply.fingerprint, reply.finish_reason, self._redact(error), reply.text,
                       reply.tool_calls)
        return call, retry_after

    async def _request(self, body: dict, reply: _Reply, on_delta: Callable[[str], None] | None) -> None:
        async with self._http.stream("POST", f"{self._base}/chat/completions", json=body,
                                     headers=self._headers()) as response:
            reply.http_status = response.status_code
            if self.settings.stream and response.is_success and "json" not in response.headers.get("content-type", ""):
                await self._read_events(response, reply, on_delta)
            else:  # not streaming, an error, or a server that ignored stream=true
                await response.aread()
                self._absorb_body(response, reply)

    @staticmethod
    async def _read_events(response: httpx.Response, reply: _Reply, on_delta: Callable[[str], None] | None) -> None:
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue  # blank separators, ": keep-alive" comments, event: lines
            payload = line[5:].strip()
            if payload == "[DONE]":
                reply.done = True
                return
            reply.received = True
            chunk = _json_dict(payload)
            if chunk is None:
                raise _TryFailed("malformed_json", f"unparseable stream line {payload[:80]!r}")
            reply.absorb(chunk, on_delta)

    def _absorb_body(self, response: httpx.Response, reply: _Reply) -> None:
        text = response.text
        if not response.is_success:
            raise _http_failure(response, text)
        if not text.strip():
            raise _TryFailed("empty_response", f"HTTP {response.status_code} with an empty body")
        reply.received = True
        data = _json_dict(text)
        if data is None:
            raise _TryFailed("malformed_json", f"unparseable response body {text[:80]!r}")
        reply.absorb(data)
        reply.done = True

    def _body(self, messages: list[dict], tools: list[dict] | None) -> dict:
        s = self.settings
        body: dict = {"model": s.model, "messages": messages, "max_tokens": s.max_tokens, "stream": s.stream}
        for key in ("temperature", "top_p", "seed"):
            if getattr(s, key) is not None:
                body[key] = getattr(s, key)
        if s.stream:
            body["stream_options"] = {"include_usage": True}
        if tools:
            body["tools"] = tools
            if s.tool_choice is not None:
                body["tool_choice"] = s.tool_choice
        return body

    def _headers(self) -> dict[str, str]:
        headers = dict(self.settings.headers)
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        return headers

    def _tokens(self, reply: _Reply, status: str, prompt_estimate: int) -> tuple[int, int, str]:
        if reply.usage is not None:
            return reply.usage[0], reply.usage[1], "reported"
        if reply.received and status != "empty_response":
            arrived = estimate_reply_tokens(reply.text, [(c.name, c.arguments) for c in reply.tool_calls])
            return prompt_estimate, arrived, "estimated"
        return 0, 0, "none"

    def _backoff(self, retry_index: int, retry_after: float | None) -> float:
        cap = self.settings.backoff_cap_s
        if retry_after is not None:
            return min(max(retry_after, 0.0), cap)
        return self._rng.uniform(0.0, min(cap, self.settings.backoff_base_s * 2 ** retry_index))

    def _redact(self, text: str | None) -> str | None:  # one line, the key masked before cutting
        if text is not None and self._key:
            text = text.replace(self._key, "***")
        return None if text is None else " ".join(text.split())[:300]


def _final_status(reply: _Reply) -> tuple[str, str | None]:
    if reply.done or reply.finish_reason:
        return ("ok", None) if reply.saw_choices else ("empty_response", "HTTP 200 without choices")
    if reply.received:
        return "stream_cut", "the stream ended before [DONE]"
    return "empty_response", "HTTP 200 with an empty stream"


def _http_failure(response: httpx.Response, text: str) -> _TryFailed:
    code = response.status_code
    message = f"HTTP {code}: {_error_message(text)}"
    if code == 429:
        return _TryFailed("http_429", message, _retry_after(response.headers.get("retry-after")))
    if code >= 500:
        return _TryFailed("http_5xx", message)
    if code in (400, 413) and _is_overflow(text):
        return _TryFailed("context_overflow", message)
    return _TryFailed("http_4xx", message)


def _json_dict(text: str) -> dict | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _error_message(text: str) -> str:
    data = _json_dict(text)
    if data is not None and "error" in data:
        return _error_text(data["error"])
    return text.strip()[:200] or "(empty body)"


def _error_text(error) -> str:
    return str((error.get("message") or error.get("code") or error) if isinstance(error, dict) else error)[:200]


def _is_overflow(text: str) -> bool:
    return any(marker in text.lower() for marker in _OVERFLOW_MARKERS)


def _retry_after(value: str | None) -> float | None:  # seconds; an HTTP-date falls back to backoff
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


@functools.cache
def _ssl_context():  # one verifying context for every client: building one costs ~50 ms
    return httpx.create_ssl_context()
