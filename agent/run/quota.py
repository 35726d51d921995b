"""Per-arm token quota with reservation: a call reserves its worst case before it is sent, so
no call can overrun the cap.

Before a call the engine reserves prompt estimate + max_tokens; a call that cannot be reserved
censors the arm. On completion the reservation is released and the real usage charged.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from enum import StrEnum

from agent import QuotabenchError
from agent.config import MAX_CAP_TOKENS


class CensoredBy(StrEnum):
    """What ended an arm as censored (arms.censored_by)."""

    CAP = "cap"  # its token cap in quotabench could not cover the next call
    PROVIDER_QUOTA = "provider_quota"  # the provider's own quota or credits are spent: resumes after a top-up


class QuotaExhausted(QuotabenchError):
    """The arm's cap cannot cover the next call: the arm is censored (seed 002)."""


@dataclass
class Quota:
    cap: int
    used: int = 0
    reservations: dict[int, int] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=itertools.count, repr=False)

    @property
    def reserved(self) -> int:
        return sum(self.reservations.values())

    @property
    def share(self) -> float:
        return (self.used + self.reserved) / self.cap if self.cap else 1.0

    def reserve(self, tokens: int) -> int:
        if self.used + self.reserved + tokens > self.cap:
            raise QuotaExhausted(
                f"cap {self.cap} tokens: {self.used} used + {self.reserved} reserved + {tokens} for the next call exceeds it"
            )
        handle = next(self._ids)
        self.reservations[handle] = tokens
        return handle

    def settle(self, handle: int, actual: int) -> None:
        self.reservations.pop(handle, None)
        self.used += max(0, actual)

    def raise_cap(self, new_cap: int) -> None:
        if new_cap > MAX_CAP_TOKENS:
            raise QuotabenchError(
                f"new cap {new_cap} is above the largest cap, {MAX_CAP_TOKENS} — type a smaller number"
            )
        if new_cap <= self.cap:
            raise QuotabenchError(f"new cap {new_cap} is not above the current cap {self.cap} — type a larger number")
        self.cap = new_cap
