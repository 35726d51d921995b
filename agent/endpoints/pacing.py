"""Pacing calls under a provider's announced rate limits: a client-side token bucket.

Each response's rate-limit headers (agent/endpoints/provider.py) set the bucket: `remaining`
tokens now, refilling at (limit - remaining) / reset seconds (back to `limit` at the reset; a
provider that gives no reset refills `limit` per minute). A call may go when the bucket holds
what it can spend (its prompt estimate plus max_tokens, as providers count a request against a
tokens-per-minute limit) on top of what calls already sent but not yet answered hold; else it
waits the time the refill needs. Requests are paced the same way, one per call. Before any
header arrives, or for a provider that sends none, nothing waits.

Waiting happens before a try starts, so it is never part of the try's latency; `admit` returns
how long it waited, which the ledger records per call (calls.paced_ms).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import anyio

from agent.endpoints.provider import RateLimits

MAX_WAIT_S = 120.0  # one call never waits longer for the provider's limit (then it is sent anyway)
ROUNDS = 3  # recomputed after each wait: answers that arrived meanwhile may free room


def _rate(limit: int, remaining: int, reset_s: float | None) -> float:
    if reset_s and reset_s > 0 and limit > remaining:
        return (limit - remaining) / reset_s
    return limit / 60.0


class Pacer:
    """One endpoint's bucket (one per ChatClient: its slots share it)."""

    def __init__(
        self,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._sleep, self._clock = sleep, clock
        self._lock = anyio.Lock(fast_acquire=True)  # uncontended: taken without a trip round the event loop
        self.limits: RateLimits | None = None
        self._at = 0.0
        self._tokens_out = 0  # sent and not yet answered
        self._requests_out = 0
        self.sent = 0  # calls admitted so far: the ticket of the last one
        self._seen = 0  # the ticket of the call whose headers set `limits`

    def _tokens_level(self, now: float) -> tuple[float, float] | None:
        lim = self.limits
        if lim is None or lim.limit_tokens is None or lim.remaining_tokens is None or not lim.limit_tokens:
            return None
        rate = _rate(lim.limit_tokens, lim.remaining_tokens, lim.reset_tokens_s)
        level = min(lim.limit_tokens, lim.remaining_tokens + rate * (now - self._at))
        return level - self._tokens_out, rate

    def _requests_level(self, now: float) -> tuple[float, float] | None:
        lim = self.limits
        if lim is None or lim.limit_requests is None or lim.remaining_requests is None or not lim.limit_requests:
            return None
        rate = _rate(lim.limit_requests, lim.remaining_requests, lim.reset_requests_s)
        level = min(lim.limit_requests, lim.remaining_requests + rate * (now - self._at))
        return level - self._requests_out, rate

    def wait_needed(self, tokens: int, now: float | None = None) -> float:
        """Seconds until a call spending `tokens` fits under the announced limits (0: now)."""
        now = self._clock() if now is None else now
        wait = 0.0
        lim = self.limits
        tokens_level = self._tokens_level(now)
        if tokens_level is not None and lim is not None and lim.limit_tokens:
            level, rate = tokens_level
            need = min(tokens, lim.limit_tokens)  # a call larger than the limit goes when the bucket is full
            if level < need and rate > 0:
                wait = max(wait, (need - level) / rate)
        requests_level = self._requests_level(now)
        if requests_level is not None:
            level, rate = requests_level
            if level < 1 and rate > 0:
                wait = max(wait, (1 - level) / rate)
        return min(wait, MAX_WAIT_S)

    async def admit(self, tokens: int, deadline: float | None = None) -> float:
        """Wait until a call spending `tokens` fits (never past `deadline`, time.monotonic), count
        it as sent, and return the seconds waited. Pair with `done`."""
        async with self._lock:  # one waiter at a time: calls leave in the order they asked
            started = self._clock()
            for _ in range(ROUNDS):
                wait = self.wait_needed(tokens)
                if deadline is not None:
                    wait = min(wait, max(0.0, deadline - time.monotonic()))
                if wait <= 0:
                    break
                await self._sleep(wait)
            self._tokens_out += tokens
            self._requests_out += 1
            self.sent += 1
            return max(0.0, self._clock() - started)

    def done(self, tokens: int) -> None:
        """A call admitted with `tokens` was answered (or failed)."""
        self._tokens_out = max(0, self._tokens_out - tokens)
        self._requests_out = max(0, self._requests_out - 1)

    def observe(self, limits: RateLimits | None, ticket: int | None = None) -> None:
        """What a response's headers announced (None: nothing; the last announcement stands).
        `ticket`: the call's `sent` number at its admission. Headers of a call sent before one
        whose headers were already taken are older than them: they lack that call's charge, which
        `done` has already taken off the calls out, so they would overstate the bucket."""
        if limits is None or (ticket is not None and ticket < self._seen):
            return
        if ticket is not None:
            self._seen = ticket
        self.limits, self._at = limits, self._clock()
