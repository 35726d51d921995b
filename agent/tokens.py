"""The one token estimator every arm shares (seed 002: "estimate from a tokenizer you keep in
the repo ... and use the same estimator for every arm").

It is deliberately simple and deterministic: ceil(characters / 4) for text, a small fixed
overhead per message, tool schemas counted as their compact JSON. It is used when a server
does not report usage, for tries that failed after output started, and by the scripted
server to report usage, so estimated and reported numbers agree on the scripted models.
"""
from __future__ import annotations

import json
import math
from typing import Iterable

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4  # role, separators
REPLY_PRIMING = 3  # the tokens that start the assistant's reply


def estimate_tokens(text: str) -> int:
    """ceil(len(text) / 4); 0 for the empty string."""
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def _content_text(content) -> str:
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


def _compact_json(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def estimate_messages_tokens(messages: list[dict], tools: list[dict] | None = None) -> int:
    """Prompt tokens for a chat request: every message's text, name, tool calls and
    tool_call_id plus MESSAGE_OVERHEAD each, the tool schemas as compact JSON, plus REPLY_PRIMING."""
    total = REPLY_PRIMING
    for message in messages:
        total += MESSAGE_OVERHEAD + estimate_tokens(_content_text(message.get("content")))
        for key in ("name", "tool_call_id"):
            if message.get(key):
                total += estimate_tokens(str(message[key]))
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            arguments = function.get("arguments", "")
            if not isinstance(arguments, str):
                arguments = _compact_json(arguments)
            total += estimate_reply_tokens("", [(str(function.get("name", "")), arguments)])
    if tools:
        total += _tools_tokens(tools)
    return total


_tools_cache: dict[int, tuple[list, int]] = {}


def _tools_tokens(tools: list[dict]) -> int:
    """Tool schemas are the same list on every call of a run: estimate each list once."""
    cached = _tools_cache.get(id(tools))
    if cached is None or cached[0] is not tools:
        cached = (tools, estimate_tokens(_compact_json(tools)))
        _tools_cache[id(tools)] = cached
    return cached[1]


def estimate_reply_tokens(text: str, tool_calls: Iterable[tuple[str, str]] = ()) -> int:
    """Completion tokens for a reply: its text plus each tool call's name and raw arguments."""
    return estimate_tokens(text) + sum(estimate_tokens(name) + estimate_tokens(arguments)
                                       for name, arguments in tool_calls)
