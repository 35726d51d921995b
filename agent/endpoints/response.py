"""What one HTTP try of a chat request received, checked against the shape the protocol says.

An OpenAI-compatible body (or stream chunk) is a JSON object whose `choices[0]` holds a
`message` (or `delta`) object with string `content` and a list of `tool_calls` objects, each
with a string `id` and a `function` object holding a string `name` and `arguments`. Anything
else — a string where an object belongs, a list where a call belongs, a body nested deeper
than the parser goes — raises `TryFailed("malformed_json")`, which the client retries like any
malformed reply. Usage counts are believed only when they are integers in [0, MAX_USAGE);
otherwise the try's usage is estimated. What is read from the wire is bounded (MAX_BODY_BYTES
per try, MAX_LINE_BYTES per stream line), so no endpoint can make a try hold unbounded memory.
A reply is read as a body or a stream by its first bytes (a JSON object, or server-sent events),
whatever `stream` asked for; one that is neither — an HTML page, plain text — or whose JSON
never has `choices` (another API) is not a chat completion: its try fails as `malformed_json`
and counts no tokens.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from agent.endpoints.provider import (
    NO_DETAILS,
    RateLimits,
    UsageDetails,
    is_quota_exhausted,
    rate_limits,
    retry_delay,
    usage_details,
)

MAX_BODY_BYTES = 8 * 1024 * 1024
MAX_LINE_BYTES = 2 * 1024 * 1024
MAX_USAGE = 100_000_000  # tokens per call; a count at or above it is not believed
MAX_RETRY_AFTER_S = 3600.0
_OVERFLOW_MARKERS = (
    "context_length_exceeded",
    "context length",
    "context window",
    "maximum context",
    "prompt is too long",
    "too many tokens",
    "exceeds the context",
)


class TryFailed(Exception):
    """One try ended without a usable reply; `status` is its CallTry status."""

    def __init__(self, status: str, error: str, retry_after: float | None = None):
        super().__init__(error)
        self.status, self.error, self.retry_after = status, error, retry_after


def _malformed(what: str, value: object) -> TryFailed:
    return TryFailed("malformed_json", f"{what} is {type(value).__name__}, not what the chat protocol says")


@dataclass(frozen=True)
class ToolCallRequest:
    id: str
    name: str
    arguments: str  # raw, exactly as the server sent it (may not be valid JSON)


@dataclass
class Reply:
    """What one try received so far, assembled from stream chunks or a whole response body."""

    http_status: int | None = None
    received: bool = False  # any payload besides [DONE] arrived
    saw_choices: bool = False
    done: bool = False
    text_parts: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: tuple[int, int] | None = None
    details: UsageDetails = NO_DETAILS  # cached, reasoning tokens and cost, as the usage reported them
    limits: RateLimits | None = None  # the provider's rate limits, from the response headers
    model: str | None = None
    fingerprint: str | None = None
    objects: int = 0  # JSON objects absorbed
    chat: bool = False  # one of them had `choices`: the chat protocol's shape

    @property
    def foreign(self) -> bool:
        """JSON arrived, but none of it is a chat completion (another API at base_url)."""
        return self.objects > 0 and not self.chat

    @property
    def text(self) -> str:
        return "".join(self.text_parts)

    @property
    def tool_calls(self) -> tuple[ToolCallRequest, ...]:
        return tuple(
            ToolCallRequest(c["id"] or f"call_{i}", c["name"], c["arguments"]) for i, c in sorted(self.calls.items())
        )

    def absorb(self, data: dict[str, Any], on_delta: Callable[[str], None] | None = None) -> None:
        """Fold in a stream chunk (choices[].delta) or a whole response (choices[].message)."""
        if data.get("error"):
            message = error_text(data["error"])
            status = "context_overflow" if is_overflow(message) else "stream_cut"
            if is_quota_exhausted(None, data["error"]):
                status = "quota_exhausted"
            raise TryFailed(status, f"server sent an error: {message}")
        if isinstance(data.get("model"), str):
            self.model = data["model"][:200] or self.model
        if isinstance(data.get("system_fingerprint"), str):
            self.fingerprint = data["system_fingerprint"][:200] or self.fingerprint
        usage = checked_usage(data.get("usage"))
        if usage is not None:
            self.usage = usage
            self.details = usage_details(data["usage"])
        self.objects += 1
        choices = data.get("choices")
        self.chat = self.chat or "choices" in data
        if choices is None:
            return
        if not isinstance(choices, list):
            raise _malformed("choices", choices)
        if not choices:
            return
        choice = choices[0]
        if not isinstance(choice, dict):
            raise _malformed("choices[0]", choice)
        self.saw_choices = True
        finish = choice.get("finish_reason")
        if finish is not None and not isinstance(finish, str):
            raise _malformed("finish_reason", finish)
        self.finish_reason = finish or self.finish_reason
        key = "delta" if "delta" in choice else "message"
        part = choice.get(key)
        if part is None:
            return
        if not isinstance(part, dict):
            raise _malformed(key, part)
        content = _content(part.get("content"))
        if content:
            self.text_parts.append(content)
            if on_delta is not None and key == "delta":
                on_delta(content)
        calls = part.get("tool_calls")
        if calls is None:
            return
        if not isinstance(calls, list):
            raise _malformed("tool_calls", calls)
        for position, call in enumerate(calls):
            self._absorb_call(position, call)

    def _absorb_call(self, position: int, call: object) -> None:
        if not isinstance(call, dict):
            raise _malformed("a tool call", call)
        index = call.get("index")
        index = index if isinstance(index, int) and not isinstance(index, bool) else position
        call_id, function = call.get("id"), call.get("function")
        if call_id is not None and not isinstance(call_id, str):
            raise _malformed("a tool call id", call_id)
        if function is None:
            function = {}
        if not isinstance(function, dict):
            raise _malformed("a tool call's function", function)
        name, arguments = function.get("name"), function.get("arguments")
        if name is not None and not isinstance(name, str):
            raise _malformed("a tool call's name", name)
        if arguments is not None and not isinstance(arguments, (str, dict, list)):
            raise _malformed("a tool call's arguments", arguments)
        slot = self.calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        slot["id"] = call_id or slot["id"]
        if name and name != slot["name"]:
            slot["name"] += name
        if arguments is not None:
            slot["arguments"] += arguments if isinstance(arguments, str) else json.dumps(arguments)


def _content(content: object) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list) and all(isinstance(p, dict) and isinstance(p.get("text", ""), str) for p in content):
        return "".join(p.get("text", "") for p in content)  # content parts
    raise _malformed("content", content)


def checked_usage(usage: object) -> tuple[int, int] | None:
    """(prompt, completion) when both are believable counts, else None (the try is estimated)."""
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens", 0)
    completion = 0 if completion is None else completion
    if (
        isinstance(prompt, int)
        and isinstance(completion, int)
        and all(type(n) is int and 0 <= n < MAX_USAGE for n in (prompt, completion))
    ):
        return prompt, completion
    return None


def json_object(text: str | bytes) -> dict[str, Any] | None:
    """The JSON object in `text`, or None for anything else (bad JSON, too deep, not an object)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def error_text(error: object) -> str:
    if isinstance(error, dict):
        error = error.get("message") or error.get("code") or error
    try:
        return str(error)
    except (ValueError, RecursionError):  # a huge or deeply nested error object
        return f"(an unprintable {type(error).__name__})"


def error_message(text: str) -> str:
    data = json_object(text)
    if data is not None and "error" in data:
        return error_text(data["error"])
    return text.strip() or "(empty body)"


def is_overflow(text: str) -> bool:
    return any(marker in text.lower() for marker in _OVERFLOW_MARKERS)


def http_failure(response: httpx.Response, text: str) -> TryFailed:
    code = response.status_code
    message = f"HTTP {code}: {error_message(text)}"
    if 400 <= code < 500 and is_quota_exhausted(code, text):  # spent, not busy: waiting does not help
        return TryFailed("quota_exhausted", message)
    if code == 429:
        delay = retry_delay(response.headers, rate_limits(response.headers))
        return TryFailed("http_429", message, None if delay is None else min(delay, MAX_RETRY_AFTER_S))
    if code >= 500:
        return TryFailed("http_5xx", message)
    if code in (400, 413) and is_overflow(text):
        return TryFailed("context_overflow", message)
    return TryFailed("http_4xx", message)


def final_status(reply: Reply) -> tuple[str, str | None]:
    if reply.foreign:
        return "malformed_json", "not a chat completion: JSON without `choices` (another API at base_url?)"
    if reply.done or reply.finish_reason:
        return ("ok", None) if reply.saw_choices else ("empty_response", "HTTP 200 without choices")
    if reply.received:
        return "stream_cut", "the stream ended before [DONE]"
    return "empty_response", "HTTP 200 with an empty stream"


async def read_body(response: httpx.Response, source: AsyncIterator[bytes] | None = None) -> str:
    """The whole body (from `source`, the response's bytes after a peek, else the response),
    refusing one longer than MAX_BODY_BYTES."""
    chunks, size = [], 0
    async for chunk in source if source is not None else response.aiter_bytes():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise TryFailed(
                "malformed_json", f"the response body passed {MAX_BODY_BYTES} bytes; it was not read further"
            )
        chunks.append(chunk)
    try:
        return b"".join(chunks).decode(response.encoding or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return b"".join(chunks).decode("utf-8", errors="replace")


async def read_lines(source: AsyncIterator[bytes]) -> AsyncIterator[str]:
    """Stream lines, refusing a line longer than MAX_LINE_BYTES or a stream past MAX_BODY_BYTES."""
    pending: list[bytes] = []  # the unfinished line, in pieces (a trickle must not cost O(n^2))
    pending_size = size = 0
    async for chunk in source:
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise TryFailed("malformed_json", f"the stream passed {MAX_BODY_BYTES} bytes; it was not read further")
        if b"\n" not in chunk:
            pending.append(chunk)
            pending_size += len(chunk)
            if pending_size > MAX_LINE_BYTES:
                raise TryFailed("malformed_json", f"a stream line passed {MAX_LINE_BYTES} bytes without ending")
            continue
        *lines, rest = (b"".join(pending) + chunk).split(b"\n")
        pending, pending_size = [rest], len(rest)
        for line in lines:
            yield line.rstrip(b"\r").decode("utf-8", errors="replace")
    if pending_size:
        yield b"".join(pending).rstrip(b"\r").decode("utf-8", errors="replace")


async def read_events(source: AsyncIterator[bytes]) -> AsyncIterator[str]:
    """The data of each server-sent event: its `data:` lines joined by newlines, as the SSE spec
    says (one JSON chunk may span several lines); an event ends at a blank line or the stream's
    end. Other fields (event:, id:, retry:) and comments (": keep-alive") carry nothing we use.
    Built on read_lines for its bounds (httpx-sse reads lines of any length)."""
    data: list[str] = []
    async for line in read_lines(source):
        if not line:
            if data:
                yield "\n".join(data)
                data = []
            continue
        name, _, value = line.partition(":")
        if name == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data:
        yield "\n".join(data)


# The first bytes of a chat reply: a JSON object, or server-sent events (a field or a comment).
_SSE_START = re.compile(rb"^(data|event|id|retry)?:")
_NOT_THERE = (404, 405, 501)  # no such path or method at base_url: an HTML page here is a web server's
_HTML_TYPES = ("text/html", "application/xhtml+xml")


async def peek(response: httpx.Response) -> tuple[bytes, AsyncIterator[bytes]]:
    """The reply's first bytes that are not whitespace (b"" for an empty reply) and every byte
    of it, those first ones included, to read on."""
    chunks = response.aiter_bytes()
    seen: list[bytes] = []
    async for chunk in chunks:
        seen.append(chunk)
        if chunk.strip():
            break

    async def whole() -> AsyncIterator[bytes]:
        for chunk in seen:
            yield chunk
        async for chunk in chunks:
            yield chunk

    return b"".join(seen).lstrip(), whole()


def reply_format(content_type: str, head: bytes) -> str | None:
    """How a reply is read: "json" (a body), "events" (a stream), "empty", or None when it is not
    a chat completion at all (an HTML page, plain text): told by its content type and first bytes."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind in _HTML_TYPES or head[:1] == b"<":
        return None
    if head[:1] == b"{":
        return "json"
    if _SSE_START.match(head):
        return "events"
    return "empty" if not head else None


def not_chat(response: httpx.Response, head: bytes) -> TryFailed | None:
    """A try that reached something other than a chat-completion endpoint: a success (or a
    missing path or method) whose reply is an HTML page or text; None when it may be one."""
    if not (response.is_success or response.status_code in _NOT_THERE):
        return None
    kind = response.headers.get("content-type", "")
    if reply_format(kind, head) is not None:
        return None
    start = " ".join(head[:80].decode("utf-8", "replace").split())
    return TryFailed(
        "malformed_json",
        f"not a chat completion: HTTP {response.status_code} {kind.split(';')[0] or 'with no content type'} "
        f"starting {start!r}",
    )
