"""How a hosted provider bills and limits, played by the scripted server (`provider=`) so tests
and demos meet what real endpoints do: a prompt cache, reasoning tokens, a reported cost, a
tokens-per-minute limit announced in headers and enforced, and a quota that runs out.

  cache           a request whose messages start with a conversation seen before reports that
                  prefix as usage.prompt_tokens_details.cached_tokens (so an agent loop's cached
                  share rises turn by turn); the rest is written to the cache (cache_write_tokens)
  reasoning       tokens of hidden reasoning per reply: added to completion_tokens, reported as
                  completion_tokens_details.reasoning_tokens
  price           $ per million tokens (input, cached_input, cache_write, output): usage.cost
  tpm             a tokens-per-minute limit over `window_s` (60): a request is admitted when the
                  bucket holds its prompt plus max_tokens, charged that, refunded what it did not
                  use; x-ratelimit-*-tokens and -requests headers on every reply, HTTP 429
                  rate_limit_exceeded (with retry-after-ms) when it does not fit
  refill          "steady" (the bucket refills continuously) or "fixed" (nothing comes back until
                  the window ends, then all of it; the headers' reset is the window's end)
  quota_tokens    after that many tokens are spent in all, every request gets HTTP 429
                  insufficient_quota (`quota_status=402`: HTTP 402, credits exhausted);
                  `top_up(tokens)` raises it again

Counters for tests: `rate_limited` (429s for the limit), `quota_refused` (quota replies),
`spent` (tokens billed), `billed` (one usage dict per reply as sent).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from agent.endpoints.tokens import estimate_messages_tokens

INSUFFICIENT_QUOTA = {
    "message": "You exceeded your current quota, please check your plan and billing details.",
    "type": "insufficient_quota",
    "param": None,
    "code": "insufficient_quota",
}
NO_CREDITS = {"message": "Insufficient credits. Add more using https://example.invalid/credits", "code": 402}


@dataclass
class ProviderModel:
    cache: bool = False
    reasoning: int = 0
    price: dict[str, float] = field(default_factory=dict)  # input, cached_input, cache_write, output ($/Mtok)
    tpm: int | None = None
    rpm: int | None = None
    window_s: float = 60.0
    quota_tokens: int | None = None
    quota_status: int = 429
    refill: str = "steady"  # or "fixed"

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: dict[str, int] = {}  # hash of a message prefix -> its prompt tokens
        self._tokens = float(self.tpm or 0)
        self._requests = float(self.rpm or 0)
        self._at = time.monotonic()
        self._window_end = self._at + self.window_s  # refill = "fixed"
        self.rate_limited = 0
        self.quota_refused = 0
        self.spent = 0
        self.billed: list[dict[str, Any]] = []

    def top_up(self, tokens: int) -> None:
        with self._lock:
            self.quota_tokens = (self.quota_tokens or 0) + tokens

    # -- the bucket ---------------------------------------------------------------------------
    def _refill(self) -> None:
        now = time.monotonic()
        elapsed, self._at = now - self._at, now
        if self.refill == "fixed":
            if now >= self._window_end:
                self._tokens, self._requests = float(self.tpm or 0), float(self.rpm or 0)
                self._window_end = now + self.window_s
            return
        if self.tpm:
            self._tokens = min(float(self.tpm), self._tokens + self.tpm / self.window_s * elapsed)
        if self.rpm:
            self._requests = min(float(self.rpm), self._requests + self.rpm / self.window_s * elapsed)

    def headers(self) -> dict[str, str]:
        """The x-ratelimit-* headers as OpenAI sends them (resets as durations: "12.5s")."""
        with self._lock:
            return self._headers()

    def _headers(self) -> dict[str, str]:
        self._refill()
        out: dict[str, str] = {}
        window_left = max(0.0, self._window_end - time.monotonic())
        if self.tpm:
            reset = window_left if self.refill == "fixed" else (self.tpm - self._tokens) / (self.tpm / self.window_s)
            out |= {
                "x-ratelimit-limit-tokens": str(self.tpm),
                "x-ratelimit-remaining-tokens": str(int(self._tokens)),
                "x-ratelimit-reset-tokens": f"{reset:.3f}s",
            }
        if self.rpm:
            reset = window_left if self.refill == "fixed" else (self.rpm - self._requests) / (self.rpm / self.window_s)
            out |= {
                "x-ratelimit-limit-requests": str(self.rpm),
                "x-ratelimit-remaining-requests": str(int(self._requests)),
                "x-ratelimit-reset-requests": f"{reset:.3f}s",
            }
        return out

    def admit(self, body: dict[str, Any], prompt: int) -> tuple[int, dict[str, Any], dict[str, str]] | None:
        """None when the request may go (then it is charged prompt + max_tokens), else the
        (status, error body, headers) to answer."""
        charge = prompt + int(body.get("max_tokens") or 0)
        with self._lock:
            if self.quota_tokens is not None and self.spent >= self.quota_tokens:
                self.quota_refused += 1
                error = INSUFFICIENT_QUOTA if self.quota_status == 429 else NO_CREDITS
                return self.quota_status, {"error": error}, self._headers()
            self._refill()
            short_tokens = self.tpm is not None and self._tokens < min(charge, self.tpm)
            short_requests = self.rpm is not None and self._requests < 1
            if short_tokens or short_requests:
                self.rate_limited += 1
                wait = 0.0
                if self.refill == "fixed":
                    wait = self._window_end - time.monotonic()
                elif short_tokens and self.tpm:
                    wait = (min(charge, self.tpm) - self._tokens) / (self.tpm / self.window_s)
                if short_requests and self.rpm and self.refill != "fixed":
                    wait = max(wait, (1 - self._requests) / (self.rpm / self.window_s))
                error = {
                    "message": f"Rate limit reached for tokens per min (TPM): Limit {self.tpm}, "
                    f"Used {self.tpm and int(self.tpm - self._tokens)}, Requested {charge}.",
                    "type": "tokens",
                    "param": None,
                    "code": "rate_limit_exceeded",
                }
                return 429, {"error": error}, self._headers() | {"retry-after-ms": str(max(1, round(wait * 1000)))}
            if self.tpm:
                self._tokens -= min(charge, self._tokens)
            if self.rpm:
                self._requests -= 1
            return None

    # -- the bill -----------------------------------------------------------------------------
    def _prefix_keys(self, body: dict[str, Any]) -> list[str]:
        digest = hashlib.sha256(json.dumps(body.get("tools"), sort_keys=True).encode())
        keys = []
        for message in body.get("messages") or []:
            digest.update(json.dumps(message, sort_keys=True).encode())
            keys.append(digest.copy().hexdigest())
        return keys

    def bill(self, body: dict[str, Any], usage: dict[str, Any]) -> dict[str, Any]:
        """The usage of a reply as this provider reports it, with its cost; the bucket gets back
        what the reply did not use of max_tokens."""
        prompt, completion = usage["prompt_tokens"], usage["completion_tokens"] + self.reasoning
        cached = 0
        messages = body.get("messages") or []
        keys = self._prefix_keys(body)
        with self._lock:
            if self.cache:
                cached = min(prompt, max((self._seen.get(k, 0) for k in keys), default=0))
                for i, key in enumerate(keys):
                    self._seen.setdefault(key, estimate_messages_tokens(messages[: i + 1], body.get("tools")))
            written = prompt - cached if self.cache else 0
            cost = (
                (prompt - cached - written) * self.price.get("input", 0.0)
                + cached * self.price.get("cached_input", self.price.get("input", 0.0))
                + written * self.price.get("cache_write", self.price.get("input", 0.0))
                + completion * self.price.get("output", 0.0)
            ) / 1e6
            billed: dict[str, Any] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
            if self.cache:
                billed["prompt_tokens_details"] = {"cached_tokens": cached, "cache_write_tokens": written}
            if self.reasoning:
                billed["completion_tokens_details"] = {"reasoning_tokens": self.reasoning}
            if self.price:
                billed["cost"] = cost
            self.spent += prompt + completion
            if self.tpm:
                unused = int(body.get("max_tokens") or 0) - completion
                self._tokens = min(float(self.tpm), self._tokens + max(0, unused))
            self.billed.append(billed)
            return billed
