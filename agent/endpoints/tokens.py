"""The one token estimator every arm shares: estimates compare across arms only when every arm
is estimated the same way, by an estimator kept in the repository.

It is deliberately simple and deterministic: ceil(characters / 4) for text, a small fixed
overhead per message, tool schemas counted as their compact JSON. It is used when a server
does not report usage, for tries that failed after output started, and by the scripted
server to report usage, so estimated and reported numbers agree on the scripted models.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4  # role, separators
REPLY_PRIMING = 3  # the tokens that start the assistant's reply


def estimate_tokens(text: str) -> int:
    """ceil(len(text) / 4); 0 for the empty string."""
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def _content_text(content: object) -> str:
    """A message's content as text: a string, or the text parts of a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                parts.append(str(part.get("text", "")))
            else:
                parts.append(str(part))
        return "".join(parts)
    return str(content)


def _compact_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


class _IdentityCache:
    """At most `size` values keyed by an object's identity (plus a length and a partner object
    it was computed with), least recently used dropped first. Each entry holds its objects, so
    an id cannot be reused by another object while cached, and a run's tools lists (or a
    request's, on the scripted server) never pin more than `size` entries."""

    def __init__(self, size: int):
        self.size = size
        self._entries: OrderedDict[int, tuple[object, int, object, int]] = OrderedDict()
        self._lock = threading.Lock()  # the scripted server estimates from its handler threads

    def get(self, obj: object, length: int = 0, partner: object = None) -> int | None:
        with self._lock:
            entry = self._entries.get(id(obj))
            if entry is None or entry[0] is not obj or entry[1] != length or entry[2] is not partner:
                return None
            self._entries.move_to_end(id(obj))
            return entry[3]

    def last(self, obj: object, partner: object = None) -> tuple[int, int] | None:
        """The length and value last cached for `obj` with this partner (any length), or None."""
        with self._lock:
            entry = self._entries.get(id(obj))
            if entry is None or entry[0] is not obj or entry[2] is not partner:
                return None
            return entry[1], entry[3]

    def put(self, obj: object, value: int, length: int = 0, partner: object = None) -> int:
        with self._lock:
            self._entries[id(obj)] = (obj, length, partner, value)
            self._entries.move_to_end(id(obj))
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._entries)


CACHE_SIZE = 64
_tools_cache = _IdentityCache(CACHE_SIZE)
# The same conversation is estimated twice per call (the quota reservation, then the client's
# fallback for a reply without usage). The agent loop only appends to its list, so the list, its
# length and the tools list name one request.
_conversation_cache = _IdentityCache(CACHE_SIZE)


def cache_sizes() -> dict[str, int]:
    """Entries held by the estimator's caches (each at most CACHE_SIZE)."""
    return {"tools": len(_tools_cache), "conversations": len(_conversation_cache)}


def estimate_messages_tokens(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> int:
    """Prompt tokens for a chat request: every message's text, name, tool calls and
    tool_call_id plus MESSAGE_OVERHEAD each, the tool schemas as compact JSON, plus REPLY_PRIMING.
    A conversation list is remembered by identity and length: change it only by appending (a
    longer one is estimated from its last estimate, adding the messages appended since)."""
    cached = _conversation_cache.get(messages, len(messages), tools)
    if cached is not None:
        return cached
    last = _conversation_cache.last(messages, tools)
    if last is not None and last[0] < len(messages):
        start, total = last
    else:
        start, total = 0, REPLY_PRIMING + (_tools_tokens(tools) if tools else 0)
    for message in messages[start:]:
        total += _message_tokens(message)
    return _conversation_cache.put(messages, total, len(messages), tools)


def _message_tokens(message: dict[str, Any]) -> int:
    total = MESSAGE_OVERHEAD + estimate_tokens(_content_text(message.get("content")))
    for key in ("name", "tool_call_id"):
        if message.get(key):
            total += estimate_tokens(str(message[key]))
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = _compact_json(arguments)
        total += estimate_tokens(str(function.get("name", ""))) + estimate_tokens(arguments)
    return total


def _tools_tokens(tools: list[dict[str, Any]]) -> int:
    """Tool schemas are the same list on every call of a run: estimate each list once."""
    cached = _tools_cache.get(tools)
    return cached if cached is not None else _tools_cache.put(tools, estimate_tokens(_compact_json(tools)))


def estimate_reply_tokens(text: str, tool_calls: Iterable[tuple[str, str]] = ()) -> int:
    """Completion tokens for a reply: its text plus each tool call's name and raw arguments."""
    return estimate_tokens(text) + sum(
        estimate_tokens(name) + estimate_tokens(arguments) for name, arguments in tool_calls
    )
