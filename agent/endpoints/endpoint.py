"""An async OpenAI-compatible chat client over httpx, and the `ChatEndpoint` seam it fills.

`ChatClient.complete` retries transport faults (capped exponential backoff, full jitter) and
reports every HTTP try as a `CallTry` through `on_try` before the next try (retries cost
quota too, so each is recorded).
Tokens per try: reported usage wins (when believable, see agent/endpoints/response.py); else, if output
arrived (success without usage, stream cut, malformed mid-way), the prompt and what arrived are
estimated; else 0 ("none"). Every try has a total deadline (request_deadline_s, and never past
the caller's `deadline`), not only httpx's gap-between-bytes timeout, so a server that trickles
keep-alive bytes cannot hold an attempt. The api key comes from the environment variable named
in the settings and is masked in everything a try returns before any text is cut.

Beyond the chat (agent/endpoints/provider.py): each try keeps the usage details the provider
reported (cached, cache-write and reasoning tokens, its cost) and the rate limits its headers
announced; with `pace`, a try waits in its slot until those limits can take it (pacing.py),
and the wait is its `paced_ms`, never its latency. A spent quota (HTTP 402, insufficient_quota)
raises ProviderQuotaExhausted at its first try. A stream is read past [DONE] to its end, so
the connection goes back to httpx's pool: one kept-alive connection per slot for a whole run.
"""

from __future__ import annotations

import contextlib
import functools
import os
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, overload

import anyio
import httpx

from agent import QuotabenchError
from agent.endpoints.chat import (
    CallTry,
    ChatEndpoint,
    Completion,
    ContextOverflow,
    DeadlinePassed,
    EndpointError,
    EndpointSettings,
    ProviderQuotaExhausted,
    RequestEncoder,
    request_sha256,
    response_sha256,
)
from agent.endpoints.httpclient import http_client
from agent.endpoints.pacing import Pacer
from agent.endpoints.provider import NO_DETAILS, rate_limits
from agent.endpoints.response import (
    Reply,
    ToolCallRequest,
    TryFailed,
    final_status,
    http_failure,
    json_object,
    not_chat,
    peek,
    read_body,
    read_events,
    reply_format,
)
from agent.endpoints.tokens import estimate_messages_tokens, estimate_reply_tokens

# The call's types are chat.py's; the client's importers may take them from here too.
__all__ = [
    "ChatClient",
    "CallTry",
    "ChatEndpoint",
    "Completion",
    "ContextOverflow",
    "DeadlinePassed",
    "EndpointError",
    "EndpointSettings",
    "ProviderQuotaExhausted",
    "request_sha256",
    "response_sha256",
]

RETRIED_STATUSES = frozenset(
    {"http_429", "http_5xx", "connect_error", "read_timeout", "stream_cut", "malformed_json", "empty_response"}
)
ERROR_CHARS = 300
# A shorter key is a local server's placeholder ("none", "EMPTY"), not a secret: masking it
# would rewrite every "none" in replies, transcripts and the files the model writes.
MIN_MASKED_KEY = 8
# The end of a stream sent right after [DONE] is there well within this (see _drain); a server
# that holds the stream open longer is hung up on (a new connection next time, no reply lost).
DRAIN_AFTER_DONE_S = 0.05
# What a malformed body can raise while it is taken apart: a try that fails, never the run.
_SHAPE_ERRORS = (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError, OverflowError)


class ChatClient:
    """OpenAI-compatible /chat/completions client for one arm (implements ChatEndpoint)."""

    def __init__(
        self,
        settings: EndpointSettings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
        rng: random.Random | None = None,
    ):
        self.settings = settings
        self._base = settings.base_url.rstrip("/")
        self._where = f"arm endpoint {settings.model} at {self._base}"
        self._key = os.environ.get(settings.api_key_env) if settings.api_key_env else None
        if settings.api_key_env and not self._key:
            raise QuotabenchError(
                f"{self._where}: environment variable {settings.api_key_env} is not set"
                " — export it or remove api_key_env"
            )
        self._http = http_client(self._base, settings.request_timeout_s, transport)
        # fast_acquire: a free slot is taken without a trip round the event loop (a waiter still queues in order)
        self._semaphore = anyio.Semaphore(max(1, settings.max_concurrency), fast_acquire=True)
        self._sleep = sleep
        self._rng = rng or random.Random()
        self.pacer = Pacer(sleep)
        self._encoder = RequestEncoder()

    def __repr__(self) -> str:
        return f"ChatClient(model={self.settings.model!r}, base_url={self._base!r})"

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        on_try: Callable[[CallTry], Awaitable[None]] | None = None,
        on_delta: Callable[[str], None] | None = None,
        deadline: float | None = None,
        seed: int | None = None,
        temperature: float | None = None,
    ) -> Completion:
        """Send the request, retrying transport faults (on_delta sees each try's text). `deadline`
        (time.monotonic) bounds every try and the backoff between them. `seed` and `temperature`
        replace the configured ones (a strategy's candidate, a task's later attempt)."""
        body = self._body(messages, tools)
        if seed is not None:  # a strategy's candidate i sends seed + i
            body["seed"] = seed
        if temperature is not None:
            body["temperature"] = temperature
        prompt_estimate = estimate_messages_tokens(messages, tools)
        content, asked = self._encoder.encode(body)
        tries: list[CallTry] = []
        for retry_index in range(self.settings.max_retries + 1):
            if deadline is not None and time.monotonic() >= deadline:
                raise DeadlinePassed(
                    f"{self._where}: the attempt's time ran out after {len(tries)} tries", tuple(tries)
                )
            call, retry_after = await self._one_try(content, retry_index, prompt_estimate, on_delta, deadline, asked)
            tries.append(call)
            if on_try is not None:
                await on_try(call)
            if call.status == "ok":
                return Completion(
                    call.text,
                    call.tool_calls,
                    call.finish_reason,
                    call.prompt_tokens,
                    call.completion_tokens,
                    call.usage_source,
                    call.model_reported,
                    call.system_fingerprint,
                    tuple(tries),
                )
            if call.status == "context_overflow":
                raise ContextOverflow(
                    f"{self._where}: the prompt is longer than the model's context "
                    f"({call.error}) — shorten the conversation or use a longer-context model",
                    tuple(tries),
                )
            if call.status == "quota_exhausted":
                reason = f"provider quota: {(call.error or '').split(': ', 1)[-1]}"
                raise ProviderQuotaExhausted(
                    f"{self._where}: the provider's quota is spent ({call.error}) — top up the account "
                    "or raise its limit, then resume the run",
                    reason,
                    tuple(tries),
                )
            if call.status not in RETRIED_STATUSES:
                raise EndpointError(
                    f"{self._where}: the request was rejected ({call.error}) — check the "
                    "model name, api key and request settings",
                    tuple(tries),
                )
            if retry_index < self.settings.max_retries:
                pause = self._backoff(retry_index, retry_after)
                if deadline is not None:
                    pause = min(pause, max(0.0, deadline - time.monotonic()))
                await self._sleep(pause)
        if deadline is not None and time.monotonic() >= deadline:
            raise DeadlinePassed(f"{self._where}: the attempt's time ran out after {len(tries)} tries", tuple(tries))
        raise EndpointError(
            f"{self._where}: {len(tries)} tries failed, the last with {tries[-1].status} "
            f"({tries[-1].error}) — check that the server is up, or raise max_retries",
            tuple(tries),
        )

    async def list_models(self) -> list[str]:
        """The model ids GET {base_url}/models lists (at most 200); [] on any failure (never raises)."""
        try:
            with anyio.move_on_after(min(self.settings.request_timeout_s, self.settings.request_deadline_s)):
                async with self._http.stream("GET", f"{self._base}/models", headers=self._headers()) as response:
                    if response.status_code != 200:
                        return []
                    data = (json_object(await read_body(response)) or {}).get("data")
                    return [
                        (self._redact(str(m["id"])) or "")[:200]
                        for m in (data if isinstance(data, list) else [])[:200]
                        if isinstance(m, dict) and isinstance(m.get("id"), (str, int))
                    ]
        except Exception:  # noqa: BLE001 — a probe: any failure means "no models known"
            pass
        return []

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _one_try(
        self,
        content: bytes,
        retry_index: int,
        prompt_estimate: int,
        on_delta: Callable[[str], None] | None,
        deadline: float | None,
        asked: str | None = None,
    ) -> tuple[CallTry, float | None]:
        reply = Reply()
        status, error, retry_after = "ok", None, None
        spend = prompt_estimate + self.settings.max_tokens  # what a provider counts against its limit
        async with self._semaphore, self._paced(spend, deadline) as (paced_s, ticket):
            started, t0 = datetime.now(UTC).isoformat(timespec="milliseconds"), time.monotonic()
            budget = self.settings.request_deadline_s
            if deadline is not None:
                budget = max(0.0, min(budget, deadline - t0))
            try:
                with anyio.move_on_after(budget) as scope:
                    await self._request(content, reply, on_delta)
                if scope.cancelled_caught:
                    status, error = "read_timeout", f"no complete reply within {budget:.1f} s (the whole-try deadline)"
                    reply.received = reply.received or bool(reply.text_parts or reply.calls)
                else:
                    status, error = final_status(reply)
            except TryFailed as exc:
                status, error, retry_after = exc.status, exc.error, exc.retry_after
            except httpx.TimeoutException as exc:
                status = (
                    "connect_error" if isinstance(exc, (httpx.ConnectTimeout, httpx.PoolTimeout)) else "read_timeout"
                )
                error = f"{type(exc).__name__}: {exc} (timeout {self.settings.request_timeout_s}s)"
            except httpx.RequestError as exc:  # refused, dropped before a response, cut mid-body, bad encoding
                status = "stream_cut" if reply.http_status is not None else "connect_error"
                reply.received = reply.http_status is not None  # the server was already answering
                error = f"{type(exc).__name__}: {exc}"
            except _SHAPE_ERRORS as exc:
                status, error = "malformed_json", f"the reply could not be taken apart ({type(exc).__name__}: {exc})"
            latency_ms = int((time.monotonic() - t0) * 1000)
            if ticket is not None:  # before its headers: were the limits known when it went?
                self.pacer.answered(ticket, status)
            self.pacer.observe(reply.limits, ticket)
        prompt, completion, source = self._tokens(reply, status, prompt_estimate)
        details = reply.details if source == "reported" else NO_DETAILS
        calls = tuple(
            ToolCallRequest(self.mask(c.id), self.mask(c.name), self.mask(c.arguments)) for c in reply.tool_calls
        )
        text = self.mask(reply.text)
        call = CallTry(
            retry_index,
            started,
            latency_ms,
            status,
            reply.http_status,
            prompt,
            completion,
            source,
            self.mask(reply.model),
            self.mask(reply.fingerprint),
            self.mask(reply.finish_reason),
            self._redact(error),
            text,
            calls,
            asked,
            response_sha256(text, calls) if status == "ok" else None,
            details,
            reply.limits,
            round(paced_s * 1000),
            self.pacer.window if self.settings.pace else None,
        )
        return call, retry_after

    @contextlib.asynccontextmanager
    async def _paced(self, spend: int, deadline: float | None) -> AsyncIterator[tuple[float, int | None]]:
        """Within a slot: wait until the provider's announced limit can take `spend` (pace = true);
        yields the seconds waited and the call's ticket (Pacer.observe). Pacing after taking the slot: calls queued for a slot were not
        yet sent, so they must not count against the limit."""
        if not self.settings.pace:
            yield 0.0, None
            return
        waited = await self.pacer.admit(spend, deadline)
        ticket = self.pacer.sent  # read before any await: this call's own number
        try:
            yield waited, ticket
        finally:
            self.pacer.done(spend, ticket)

    async def _request(self, content: bytes, reply: Reply, on_delta: Callable[[str], None] | None) -> None:
        # The body is json.dumps' (RequestEncoder): it escapes non-ASCII, so a lone surrogate a model sent
        # earlier goes back as the \ud800 escape it came as instead of failing to encode (httpx's json= encodes UTF-8 strictly).
        request = httpx.Request(
            "POST",
            self._chat_url,
            content=content,
            headers=self._chat_headers,
            cookies=self._http.cookies,
            extensions=self._chat_extensions,
        )
        async with contextlib.aclosing(await self._http.send(request, stream=True)) as response:
            reply.http_status = response.status_code
            reply.limits = rate_limits(response.headers)
            head, chunks = await peek(response)
            refused = not_chat(response, head)
            if refused is not None:  # an HTML page or text: nothing here speaks the chat protocol
                raise refused
            form = reply_format(response.headers.get("content-type", ""), head)
            if response.is_success and (form == "events" or (form == "empty" and self.settings.stream)):
                await self._read_events(chunks, reply, on_delta)
            else:  # a body: not streaming, an error, or a server that ignored stream=true
                await self._absorb_body(response, chunks, reply)

    async def _read_events(
        self, chunks: AsyncIterator[bytes], reply: Reply, on_delta: Callable[[str], None] | None
    ) -> None:
        events = read_events(chunks)
        async for event in events:
            chunk = json_object(event)
            # a server that skips the blank line between events sends several chunks as one event
            for payload in [event] if chunk is not None else [p.strip() for p in event.split("\n") if p.strip()]:
                if payload == "[DONE]":
                    reply.done = True
                    await _drain(events)
                    return
                reply.received = True
                chunk = chunk if payload is event else json_object(payload)
                if chunk is None:
                    raise TryFailed("malformed_json", f"unparseable stream line {self._quote(payload)}")
                reply.absorb(chunk, on_delta)

    async def _absorb_body(self, response: httpx.Response, chunks: AsyncIterator[bytes], reply: Reply) -> None:
        text = await read_body(response, chunks)
        if not response.is_success:
            raise http_failure(response, text)
        if not text.strip():
            raise TryFailed("empty_response", f"HTTP {response.status_code} with an empty body")
        reply.received = True
        data = json_object(text)
        if data is None:
            raise TryFailed("malformed_json", f"unparseable response body {self._quote(text)}")
        reply.absorb(data)
        reply.done = True

    @functools.cached_property
    def _chat_url(self) -> httpx.URL:  # parsed once: httpx parses a URL given as text on every request
        return httpx.URL(f"{self._base}/chat/completions")

    # What httpx's build_request would merge on every call, merged once: the client's headers and
    # ours, and its timeout (the client's cookies, which a server may set, are still read per call).
    @functools.cached_property
    def _chat_headers(self) -> httpx.Headers:
        headers = httpx.Headers(self._http.headers)
        headers.update({**self._headers(), "Content-Type": "application/json"})
        return headers

    @functools.cached_property
    def _chat_extensions(self) -> dict[str, Any]:
        return {"timeout": self._http.timeout.as_dict()}

    def _body(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        s = self.settings
        body: dict[str, Any] = {"model": s.model, "messages": messages, "max_tokens": s.max_tokens, "stream": s.stream}
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

    def _tokens(self, reply: Reply, status: str, prompt_estimate: int) -> tuple[int, int, str]:
        if reply.usage is not None:
            return reply.usage[0], reply.usage[1], "reported"
        if reply.received and status != "empty_response" and not reply.foreign:
            arrived = estimate_reply_tokens(reply.text, [(c.name, c.arguments) for c in reply.tool_calls])
            return prompt_estimate, arrived, "estimated"
        return 0, 0, "none"

    def _backoff(self, retry_index: int, retry_after: float | None) -> float:
        cap = self.settings.backoff_cap_s
        if retry_after is not None:
            return min(max(retry_after, 0.0), cap)
        return self._rng.uniform(0.0, min(cap, self.settings.backoff_base_s * 2**retry_index))

    @overload
    def mask(self, text: str) -> str: ...
    @overload
    def mask(self, text: None) -> None: ...
    @overload
    def mask(self, text: str | None) -> str | None: ...

    def mask(self, text: str | None) -> str | None:
        """`text` with the api key masked (every other cut or store of endpoint text comes after)."""
        if text is not None and self._key and len(self._key) >= MIN_MASKED_KEY:
            text = text.replace(self._key, "***")
        return text

    def _redact(self, text: str | None) -> str | None:  # one line, the key masked before cutting
        text = self.mask(text)
        return None if text is None else " ".join(text.split())[:ERROR_CHARS]

    def _quote(self, text: str) -> str:
        return repr(self.mask(text)[:ERROR_CHARS])


async def _drain(events: AsyncIterator[str]) -> None:
    """Read a stream past [DONE] to its end, so httpx returns the connection to the pool instead
    of closing it (one TCP connection, and one TLS handshake, per call otherwise). A server that
    keeps sending after [DONE] gets DRAIN_AFTER_DONE_S; then the connection is closed, the reply kept."""
    with anyio.move_on_after(DRAIN_AFTER_DONE_S), contextlib.suppress(TryFailed, httpx.HTTPError):
        async for _ in events:
            pass
