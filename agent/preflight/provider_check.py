"""Preflight's line on what the endpoint tells about its bill and quota: which usage details it
reports (cached, cache-write and reasoning tokens, its own cost) and the rate limits its headers
announced. Informational: no answer here invalidates a run (a missing detail is priced from
the table, missing headers mean no pacing)."""

from __future__ import annotations

from agent.endpoints.provider import RateLimits
from agent.preflight.checks import Check, Observed

DETAIL_WORDS = {
    "cached": "cached tokens",
    "cache_write": "cache-write tokens",
    "reasoning": "reasoning tokens",
    "cost": "cost (usage.cost)",
}


def limits_text(limits: RateLimits | None) -> str:
    """ "limits 40,000 tok (38,000 left, reset 12 s), 500 req (499 left)" or "no rate-limit headers"."""
    if limits is None:
        return "no rate-limit headers"
    parts = []
    for unit, limit, remaining, reset in (
        ("tok", limits.limit_tokens, limits.remaining_tokens, limits.reset_tokens_s),
        ("req", limits.limit_requests, limits.remaining_requests, limits.reset_requests_s),
    ):
        if limit is None and remaining is None:
            continue
        left = [
            f"{remaining:,} left" if remaining is not None else "",
            f"reset {reset:.0f} s" if reset is not None else "",
        ]
        detail = ", ".join(p for p in left if p)
        parts.append(f"{'?' if limit is None else f'{limit:,}'} {unit}" + (f" ({detail})" if detail else ""))
    return f"rate limits ({limits.source} headers): " + ", ".join(parts)


def provider_check(obs: Observed) -> Check:
    expected = "usage details and rate limits, if any"
    if obs.reply is None or not obs.reply.ok:
        return Check("provider", "unknown", expected, "no reply to read them from")
    reported = [DETAIL_WORDS[d] for d in DETAIL_WORDS if d in obs.provides]
    missing = [DETAIL_WORDS[d] for d in DETAIL_WORDS if d not in obs.provides]
    seen = "reports " + (", ".join(reported) if reported else "no usage details")
    if missing and reported:
        seen += f" (not {', '.join(missing)})"
    return Check("provider", "ok", expected, f"{seen}; {limits_text(obs.limits)}")
