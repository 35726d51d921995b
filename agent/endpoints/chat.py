"""The chat seam and what one call is made of: where an arm's requests go (EndpointSettings),
each HTTP try (CallTry, one ledger row), the successful result (Completion), how a call fails
for good (EndpointError and its kinds), and the ChatEndpoint Protocol an arm talks through."""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from agent import QuotabenchError
from agent.config import EndpointKnobs
from agent.endpoints.provider import NO_DETAILS, RateLimits, UsageDetails
from agent.endpoints.response import ToolCallRequest


@dataclass(frozen=True)
class EndpointSettings(EndpointKnobs):
    """Where one arm's requests go, and how (the knobs are agent.config.EndpointKnobs)."""

    base_url: str
    model: str


@dataclass(frozen=True)
class CallTry:
    """One HTTP try: one ledger row. status: ok, http_4xx, context_overflow, quota_exhausted or one
    of the retried statuses (agent.endpoints.endpoint.RETRIED_STATUSES)."""

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
    request_sha256: str | None = None  # the request body: the same for every try of one call
    response_sha256: str | None = None  # what came back (text and tool calls, not ids), for ok tries
    details: UsageDetails = NO_DETAILS  # cached, cache-write and reasoning tokens, cost, as reported
    limits: RateLimits | None = None  # the provider's rate limits, from this try's response headers
    paced_ms: int = 0  # waited before the try for the provider's limit (not in latency_ms)
    pace_window: str | None = None  # the pacer's model of the limit after this try (pacing.py); None: not paced


def request_sha256(body: dict[str, Any]) -> str:
    """The hash of a request body: equal hashes = the same conversation at the same settings."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=True).encode()).hexdigest()


def response_sha256(text: str, tool_calls: tuple[ToolCallRequest, ...]) -> str:
    """The hash of a reply's content: its text and each tool call's name and raw arguments (call
    ids are left out: servers number them per request, which is not a different answer)."""
    content = [text, [[c.name, c.arguments] for c in tool_calls]]
    return hashlib.sha256(json.dumps(content, ensure_ascii=True).encode()).hexdigest()


class RequestEncoder:
    """Request bodies as sent (the bytes of `json.dumps(body)`) and their `request_sha256`, byte
    for byte, with each message of a conversation encoded once, not on every call of an attempt:
    a body's "messages" list only grows between calls (a list whose earlier messages are not the
    same objects as last time is encoded afresh; a message is never changed once sent), and its
    "tools" are one list for a whole run (encoded again only when another list comes). The last
    `size` conversations are kept (one per slot)."""

    def __init__(self, size: int = 8):
        self.size = size
        # id(list) -> (the list, its messages so far, each as json.dumps and as sorted-keys JSON)
        self._conversations: OrderedDict[int, tuple[list[Any], list[Any], list[str], list[str]]] = OrderedDict()
        self._tools: tuple[object, str, str] | None = None
        self._scalars: dict[tuple[type, Any], tuple[str, str]] = {}

    def encode(self, body: dict[str, Any]) -> tuple[bytes, str]:
        """(json.dumps(body).encode(), request_sha256(body))."""
        plain, keyed = self._messages(body["messages"])
        done = {"messages": ("[" + ", ".join(plain) + "]", "[" + ", ".join(keyed) + "]")}
        if "tools" in body:
            tools = body["tools"]
            if self._tools is None or self._tools[0] is not tools:
                self._tools = (tools, _PLAIN.encode(tools), _KEYED.encode(tools))
            done["tools"] = self._tools[1:]
        for key, value in body.items():
            if key not in done:
                done[key] = self._value(value)
        sent = "{" + ", ".join(f"{_PLAIN.encode(key)}: {done[key][0]}" for key in body) + "}"
        hashed = "{" + ", ".join(f"{_KEYED.encode(key)}: {done[key][1]}" for key in sorted(body)) + "}"
        return sent.encode(), hashlib.sha256(hashed.encode()).hexdigest()

    def _value(self, value: Any) -> tuple[str, str]:
        """A setting's value encoded both ways; the scalars a client sends on every call (model,
        max_tokens, stream) are encoded once (floats are not kept: -0.0 == 0.0)."""
        if type(value) not in _SCALARS:
            return _PLAIN.encode(value), _KEYED.encode(value)
        key = (type(value), value)
        pair = self._scalars.get(key)
        if pair is None:
            if len(self._scalars) >= _MAX_SCALARS:
                self._scalars.clear()
            pair = self._scalars[key] = (_PLAIN.encode(value), _KEYED.encode(value))
        return pair

    def _messages(self, messages: list[Any]) -> tuple[list[str], list[str]]:
        entry = self._conversations.pop(id(messages), None)
        if entry is None or entry[0] is not messages or not _extends(messages, entry[1]):
            entry = (messages, [], [], [])
        _, seen, plain, keyed = entry
        for message in messages[len(seen) :]:
            seen.append(message)
            plain.append(_PLAIN.encode(message))
            keyed.append(_KEYED.encode(message))
        self._conversations[id(messages)] = entry
        while len(self._conversations) > self.size:
            self._conversations.popitem(last=False)
        return plain, keyed


def _extends(messages: list[Any], seen: list[Any]) -> bool:
    return len(messages) >= len(seen) and all(a is b for a, b in zip(seen, messages))


# json.dumps(value) and request_sha256's json.dumps(value, sort_keys=True, ensure_ascii=True)
_PLAIN, _KEYED = json.JSONEncoder(), json.JSONEncoder(sort_keys=True, ensure_ascii=True)
_SCALARS = (str, int, bool, type(None))
_MAX_SCALARS = 64


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


class DeadlinePassed(EndpointError):
    """The caller's deadline (the attempt's time limit) passed before a reply arrived."""


class ProviderQuotaExhausted(EndpointError):
    """The provider's own quota or credits are spent (HTTP 402, insufficient_quota): never retried,
    it ends the arm until the user tops up. `.reason` is the provider's message in one line."""

    def __init__(self, message: str, reason: str, tries: tuple[CallTry, ...] = ()):
        super().__init__(message, tries)
        self.reason = reason


@runtime_checkable
class ChatEndpoint(Protocol):
    """The seam an arm talks through; ChatClient is the HTTP implementation."""

    settings: EndpointSettings

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
    ) -> Completion: ...

    async def aclose(self) -> None: ...
    async def list_models(self) -> list[str]: ...
    def mask(self, text: str | None) -> str | None: ...
