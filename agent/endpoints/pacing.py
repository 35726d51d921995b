"""Pacing calls under a provider's announced rate limits: a client-side token bucket.

Each response's rate-limit headers (agent/endpoints/provider.py) set the bucket: `remaining`
tokens now, refilling at (limit - remaining) / reset seconds (back to `limit` at the reset; a
provider that gives no reset refills `limit` per minute). That is the `steady` model; some
providers refill nothing until the reset and then all of it (a fixed window), and the steady
model sends calls into a window they do not fit. The pacer learns which: a 429 for the limit on
a call it let go with the limits known means the budget comes back at the reset, and from then
on (`fixed`) `remaining` stands until the reset and `limit` is there after it; a call served
that relied on the refill makes it `steady`. A call may go when the bucket holds
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
from dataclasses import replace

import anyio

from agent.endpoints.provider import RateLimits

MAX_WAIT_S = 120.0  # one call never waits longer for the provider's limit (then it is sent anyway)
ROUNDS = 3  # recomputed after each wait: answers that arrived meanwhile may free room
UNKNOWN, STEADY, FIXED = "unknown", "steady", "fixed"
RECHECK_S = 0.5  # fixed window, past its reset and still short: answers in flight will say more
SAME_WINDOW_S = 0.25  # two resets this close (as read off the headers): one window
DEFAULT_WINDOW_S = 60.0  # a provider that states no reset: a per-minute limit


def _rate(limit: int, remaining: int, reset_s: float | None) -> float:
    if reset_s and reset_s > 0 and limit > remaining:
        return (limit - remaining) / reset_s
    return limit / DEFAULT_WINDOW_S


def _wait(
    window: str, limit: int, remaining: int, reset_s: float | None, out: float, need: float, elapsed: float
) -> float:
    """Seconds until `need` fits a bucket last seen at `remaining` of `limit`, `elapsed` ago,
    with `out` spent by calls not yet answered."""
    need = min(need, limit)  # a call larger than the limit goes when the bucket is full
    if window == FIXED:
        reset = DEFAULT_WINDOW_S if reset_s is None else max(0.0, reset_s)  # 0: the window is over now
        if elapsed < reset:
            # the reset is the provider's clock read off a header: a little late beats a 429
            return 0.0 if remaining - out >= need else reset - elapsed + 0.05 + 0.02 * reset
        return 0.0 if limit - out >= need else RECHECK_S
    rate = _rate(limit, remaining, reset_s)
    level = min(limit, remaining + rate * elapsed) - out
    return (need - level) / rate if level < need and rate > 0 else 0.0


def _lowest(a: RateLimits, b: RateLimits) -> RateLimits:
    """b, with the lower of each remaining count."""

    def low(x: int | None, y: int | None) -> int | None:
        return y if x is None else x if y is None else min(x, y)

    return replace(
        b,
        remaining_tokens=low(a.remaining_tokens, b.remaining_tokens),
        remaining_requests=low(a.remaining_requests, b.remaining_requests),
    )


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
        self.window = UNKNOWN  # steady until a call relying on the refill says which (answered)
        self._probe: anyio.Event | None = None  # set when that call is answered
        self._probe_ticket: int | None = None

    def wait_needed(self, tokens: int, now: float | None = None) -> float:
        """Seconds until a call spending `tokens` fits under the announced limits (0: now)."""
        now = self._clock() if now is None else now
        return self._wait_as(FIXED if self.window == FIXED else STEADY, tokens, now)

    def _wait_as(self, window: str, tokens: int, now: float) -> float:
        lim = self.limits
        if lim is None:
            return 0.0
        elapsed, wait = now - self._at, 0.0
        if lim.limit_tokens and lim.remaining_tokens is not None:
            out = self._tokens_out
            wait = _wait(window, lim.limit_tokens, lim.remaining_tokens, lim.reset_tokens_s, out, tokens, elapsed)
        if lim.limit_requests and lim.remaining_requests is not None:
            out = self._requests_out
            wait = max(
                wait, _wait(window, lim.limit_requests, lim.remaining_requests, lim.reset_requests_s, out, 1, elapsed)
            )
        return min(wait, MAX_WAIT_S)

    def _relies_on_refill(self, tokens: int) -> bool:
        """The call fits only if the bucket refilled since it was last seen (steady, not fixed)."""
        return self.window == UNKNOWN and self._wait_as(FIXED, tokens, self._clock()) > 0

    async def admit(self, tokens: int, deadline: float | None = None) -> float:
        """Wait until a call spending `tokens` fits (never past `deadline`, time.monotonic), count
        it as sent, and return the seconds waited. Pair with `done`, and with `answered`.

        Until the refill is known, one call at a time may rely on it: the others that would
        wait for its answer (a fixed window then costs one 429, not one per call in flight)."""
        async with self._lock:  # one waiter at a time: calls leave in the order they asked
            started = self._clock()
            for _ in range(ROUNDS):
                if self._probe is not None and self._relies_on_refill(tokens):
                    limit = MAX_WAIT_S if deadline is None else max(0.0, deadline - time.monotonic())
                    with anyio.move_on_after(limit):
                        await self._probe.wait()
                wait = self.wait_needed(tokens)
                if deadline is not None:
                    wait = min(wait, max(0.0, deadline - time.monotonic()))
                if wait <= 0:
                    break
                await self._sleep(wait)
            probe = self._probe is None and self._relies_on_refill(tokens)
            self._tokens_out += tokens
            self._requests_out += 1
            self.sent += 1
            if probe:
                self._probe, self._probe_ticket = anyio.Event(), self.sent
            return max(0.0, self._clock() - started)

    def done(self, tokens: int, ticket: int | None = None) -> None:
        """A call admitted with `tokens` was answered (or failed, or was cancelled: the calls
        waiting on it as the refill's test go on)."""
        self._tokens_out = max(0, self._tokens_out - tokens)
        self._requests_out = max(0, self._requests_out - 1)
        if ticket is not None and ticket == self._probe_ticket:
            self._release()

    def _release(self) -> None:
        if self._probe is not None:
            self._probe.set()
        self._probe, self._probe_ticket = None, None

    def answered(self, ticket: int, status: str) -> None:
        """A paced call's outcome, before its headers are observed. A 429 for the limit on a call
        let go with the limits known: the steady model said it fit, so the provider refills at
        its reset (a fixed window). The call that relied on the refill, served: it is steady."""
        if status == "http_429" and self.limits is not None:
            self.window = FIXED
        if ticket == self._probe_ticket:
            if status == "ok" and self.window == UNKNOWN:
                self.window = STEADY
            self._release()

    def observe(self, limits: RateLimits | None, ticket: int | None = None) -> None:
        """What a response's headers announced (None: nothing; the last announcement stands).
        `ticket`: the call's `sent` number at its admission. Headers of a call sent before one
        whose headers were already taken are older than them: they lack that call's charge, which
        `done` has already taken off the calls out, so they would overstate the bucket. In a fixed
        window that order does not hold (calls sent in one order may reach the provider in the
        other): of one window's counts the lowest stands, and a later window's replaces them."""
        if limits is None:
            return
        now = self._clock()
        last = self.limits
        if self.window == FIXED and last is not None:
            end, last_end = self._window_end(limits, now), self._window_end(last, self._at)
            if end is not None and last_end is not None and end < last_end + SAME_WINDOW_S:
                if end > last_end - SAME_WINDOW_S:  # the same window: the lower counts
                    self.limits, self._at = _lowest(last, limits), now
                return  # else a reply of a window already over
        elif ticket is not None and ticket < self._seen:
            return
        if ticket is not None:
            self._seen = max(self._seen, ticket)
        self.limits, self._at = limits, now

    @staticmethod
    def _window_end(limits: RateLimits, at: float) -> float | None:
        reset = limits.reset_tokens_s if limits.reset_tokens_s is not None else limits.reset_requests_s
        return None if reset is None else at + reset
