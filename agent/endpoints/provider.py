"""What a hosted provider says beyond the chat itself: the usage details it bills by, the
rate limits it announces in headers, and the errors that mean its quota is spent.

Usage details (`usage_details`), each None when the provider does not report it:
  cached_tokens       usage.prompt_tokens_details.cached_tokens (OpenAI, OpenRouter, vLLM),
                      usage.prompt_cache_hit_tokens (DeepSeek), usage.cache_read_input_tokens (Anthropic)
  cache_write_tokens  usage.prompt_tokens_details.cache_write_tokens (OpenRouter),
                      usage.cache_creation_input_tokens (Anthropic)
  reasoning_tokens    usage.completion_tokens_details.reasoning_tokens (billed as output, not in the text)
  cost_usd            usage.cost (OpenRouter): the call's price as the provider charged it
All are part of prompt_tokens / completion_tokens as the provider sent them, never added to them.

Rate-limit headers (`rate_limits`), for tokens and requests: limit, remaining, seconds to reset.
  x-ratelimit-{limit,remaining,reset}-{tokens,requests}   OpenAI, Groq, Together, vLLM proxies
  anthropic-ratelimit-{tokens,input-tokens,requests}-{limit,remaining,reset}
  x-ratelimit-{limit,remaining,reset}                     OpenRouter and others (requests)
Resets are durations ("1s", "6m0s", "20ms"), seconds, epoch seconds or ms, or RFC 3339 times.
`retry_delay` reads retry-after-ms, then Retry-After, then the reset of an exhausted limit.

A spent quota (`is_quota_exhausted`): HTTP 402, or an error whose code, type or message says
the account's quota or credits are used up (OpenAI insufficient_quota, "credit balance is too
low"). It is not a rate limit: waiting does not help, so it is never retried.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

MAX_COUNT = 100_000_000  # a token count at or above it is not believed
MAX_COST_USD = 1e6  # one call's reported cost at or above it is not believed
MAX_RESET_S = 86_400.0
_QUOTA_MARKERS = (
    "insufficient_quota",
    "exceeded your current quota",
    "credit balance is too low",
    "insufficient credits",
    "insufficient_credits",
    "out of credits",
    "billing_hard_limit",
)


@dataclass(frozen=True)
class UsageDetails:
    cached_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    cost_source: str | None = None  # the usage field the cost came from (usage.cost)

    def reported(self) -> list[str]:
        """Which details the provider reported: cached, cache_write, reasoning, cost."""
        pairs = (
            ("cached", self.cached_tokens),
            ("cache_write", self.cache_write_tokens),
            ("reasoning", self.reasoning_tokens),
            ("cost", self.cost_usd),
        )
        return [name for name, value in pairs if value is not None]


NO_DETAILS = UsageDetails()


def _count(value: object) -> int | None:
    return value if type(value) is int and 0 <= value < MAX_COUNT else None


def _first(*values: int | None) -> int | None:
    return next((v for v in values if v is not None), None)


def _table(usage: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = usage.get(key)
    return value if isinstance(value, dict) else {}


def usage_details(usage: object) -> UsageDetails:
    """The billing details of a `usage` object (NO_DETAILS for anything that is not one)."""
    if not isinstance(usage, dict):
        return NO_DETAILS
    prompt, completion = _table(usage, "prompt_tokens_details"), _table(usage, "completion_tokens_details")
    cost = usage.get("cost")
    believable = (
        isinstance(cost, (int, float))
        and not isinstance(cost, bool)
        and math.isfinite(cost)
        and 0 <= cost < MAX_COST_USD
    )
    return UsageDetails(
        cached_tokens=_first(
            _count(prompt.get("cached_tokens")),
            _count(usage.get("prompt_cache_hit_tokens")),
            _count(usage.get("cache_read_input_tokens")),
        ),
        cache_write_tokens=_first(
            _count(prompt.get("cache_write_tokens")), _count(usage.get("cache_creation_input_tokens"))
        ),
        reasoning_tokens=_count(completion.get("reasoning_tokens")),
        cost_usd=float(cost) if believable else None,  # type: ignore[arg-type]
        cost_source="usage.cost" if believable else None,
    )


@dataclass(frozen=True)
class RateLimits:
    """A provider's announced limits after one response; None where it said nothing."""

    limit_tokens: int | None = None
    remaining_tokens: int | None = None
    reset_tokens_s: float | None = None
    limit_requests: int | None = None
    remaining_requests: int | None = None
    reset_requests_s: float | None = None
    source: str = ""  # openai | anthropic | generic

    def columns(self) -> dict[str, Any]:
        """The calls-row columns (ratelimit_*; resets in ms)."""
        return {
            "ratelimit_limit_tokens": self.limit_tokens,
            "ratelimit_remaining_tokens": self.remaining_tokens,
            "ratelimit_reset_tokens_ms": _ms(self.reset_tokens_s),
            "ratelimit_limit_requests": self.limit_requests,
            "ratelimit_remaining_requests": self.remaining_requests,
            "ratelimit_reset_requests_ms": _ms(self.reset_requests_s),
        }


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


def reset_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds until a reset header's moment (see the module docstring for the forms); None when
    it cannot be read."""
    if value is None or not (text := value.strip()):
        return None
    now = time.time() if now is None else now
    seconds: float | None
    try:
        number = float(text)
    except ValueError:
        parts = _DURATION.findall(text)
        if parts and "".join(n + u for n, u in parts) == text.replace(" ", ""):
            seconds = sum(float(n) * {"h": 3600, "m": 60, "s": 1, "ms": 0.001}[u] for n, u in parts)
        else:
            try:
                seconds = datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() - now
            except ValueError:
                return None
    else:
        if not math.isfinite(number):
            return None
        seconds = number / 1000 - now if number > 1e11 else number - now if number > 1e9 else number
    return min(max(seconds, 0.0), MAX_RESET_S)


def _int_header(headers: Mapping[str, str], name: str) -> int | None:
    value = headers.get(name)
    try:
        number = int(float(value)) if value is not None else None
    except (ValueError, OverflowError):
        return None
    return number if number is not None and 0 <= number < MAX_COUNT else None


def rate_limits(headers: Mapping[str, str], now: float | None = None) -> RateLimits | None:
    """The limits a response's headers announce (names compared case-insensitively: pass httpx's
    Headers, or a dict with lower-case names); None when there are none."""
    if not any("ratelimit" in name.lower() for name in headers):  # every name read below holds it
        return None
    h = headers
    openai = RateLimits(
        _int_header(h, "x-ratelimit-limit-tokens"),
        _int_header(h, "x-ratelimit-remaining-tokens"),
        reset_seconds(h.get("x-ratelimit-reset-tokens"), now),
        _int_header(h, "x-ratelimit-limit-requests"),
        _int_header(h, "x-ratelimit-remaining-requests"),
        reset_seconds(h.get("x-ratelimit-reset-requests"), now),
        "openai",
    )
    tokens = "tokens" if h.get("anthropic-ratelimit-tokens-limit") is not None else "input-tokens"
    anthropic = RateLimits(
        _int_header(h, f"anthropic-ratelimit-{tokens}-limit"),
        _int_header(h, f"anthropic-ratelimit-{tokens}-remaining"),
        reset_seconds(h.get(f"anthropic-ratelimit-{tokens}-reset"), now),
        _int_header(h, "anthropic-ratelimit-requests-limit"),
        _int_header(h, "anthropic-ratelimit-requests-remaining"),
        reset_seconds(h.get("anthropic-ratelimit-requests-reset"), now),
        "anthropic",
    )
    generic = RateLimits(
        limit_requests=_int_header(h, "x-ratelimit-limit"),
        remaining_requests=_int_header(h, "x-ratelimit-remaining"),
        reset_requests_s=reset_seconds(h.get("x-ratelimit-reset"), now),
        source="generic",
    )
    for found in (openai, anthropic, generic):
        if any(v is not None for v in (found.limit_tokens, found.remaining_tokens, found.remaining_requests)):
            return found
    return None


def retry_delay(headers: Mapping[str, str], limits: RateLimits | None = None) -> float | None:
    """Seconds a rate-limited reply asks to wait: retry-after-ms, Retry-After (seconds), else the
    reset of the limit that is spent; None when the reply does not say (then: backoff)."""
    ms = headers.get("retry-after-ms")
    try:
        if ms is not None and math.isfinite(float(ms)):
            return min(max(float(ms) / 1000, 0.0), MAX_RESET_S)
    except ValueError:
        pass
    value = headers.get("retry-after")
    try:
        if value is not None and math.isfinite(float(value)):
            return min(max(float(value), 0.0), MAX_RESET_S)
    except ValueError:
        pass
    if limits is not None:
        spent = [
            reset
            for remaining, reset in (
                (limits.remaining_tokens, limits.reset_tokens_s),
                (limits.remaining_requests, limits.reset_requests_s),
            )
            if remaining == 0 and reset is not None
        ]
        if spent:
            return max(spent)
    return None


def is_quota_exhausted(http_status: int | None, error: object) -> bool:
    """True for HTTP 402, or an error (body text or error object) saying the quota is spent."""
    if http_status == 402:
        return True
    try:
        text = str(error).lower()
    except (ValueError, RecursionError):
        return False
    return any(marker in text for marker in _QUOTA_MARKERS)
