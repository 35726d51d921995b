"""What the calls and grades of a run say about its accounting: how each arm's tokens were
counted (reported by the endpoint or estimated: seed 002 compares QAP only under the same
accounting), how long each endpoint was busy (the union of its call intervals, so calls in
parallel are not counted twice) and how long the grader ran (seed 000: grading compute belongs
in the cost numerator). Pure functions over ledger rows.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Iterable

# Token counts per calls.usage_source: "reported" by the endpoint, "estimated" by our tokenizer,
# "reserved" for a call lost in flight (charged at its reservation), "none" for a failed try.
SAME_KIND_SHARE = 0.95


@dataclass(frozen=True)
class Accounting:
    """How one arm's call tokens were counted."""
    reported: int
    estimated: int
    reserved: int
    kind: str  # reported | estimated | mixed | unknown (no calls recorded)

    @property
    def total(self) -> int:
        return self.reported + self.estimated + self.reserved

    @property
    def share_reported(self) -> float | None:
        return self.reported / self.total if self.total else None


def accounting(calls: Iterable[dict]) -> Accounting:
    """Sum each usage source's tokens; the arm's kind is the one holding >= 95% of them."""
    sums = {"reported": 0, "estimated": 0, "reserved": 0}
    for call in calls:
        source = call.get("usage_source")
        if source in sums:
            sums[source] += (call.get("prompt_tokens") or 0) + (call.get("completion_tokens") or 0)
    total = sum(sums.values())
    if not total:
        kind = "unknown"
    elif sums["reported"] >= SAME_KIND_SHARE * total:
        kind = "reported"
    elif sums["estimated"] + sums["reserved"] >= SAME_KIND_SHARE * total:
        kind = "estimated"
    else:
        kind = "mixed"
    return Accounting(sums["reported"], sums["estimated"], sums["reserved"], kind)


def same_accounting(kinds: Iterable[str]) -> bool:
    """True unless two arms' tokens were counted differently (unknown never disagrees)."""
    known = {k for k in kinds if k != "unknown"}
    return len(known) <= 1 and "mixed" not in known


def _epoch_s(utc: str) -> float:
    return datetime.fromisoformat(utc).timestamp()


def intervals(calls: Iterable[dict]) -> list[tuple[float, float]]:
    """(start, end) in seconds of every call with a start time and a latency."""
    out = []
    for call in calls:
        start, latency = call.get("started_utc"), call.get("latency_ms")
        if start and latency is not None:
            t = _epoch_s(start)
            out.append((t, t + latency / 1000))
    return out


def union_ms(spans: Iterable[tuple[float, float]]) -> int:
    """Length of the union of intervals, in ms: time during which at least one call ran."""
    total, end = 0.0, None
    start = None
    for lo, hi in sorted(spans):
        if end is None or lo > end:
            if end is not None:
                total += end - start
            start, end = lo, hi
        else:
            end = max(end, hi)
    if end is not None:
        total += end - start
    return round(total * 1000)


@dataclass(frozen=True)
class Grading:
    """The grader's compute for one arm: hidden-test runs (grades.duration_ms) at a CPU price."""
    runs: int
    cpu_s: float
    cpu_hour: float

    @property
    def cost(self) -> float:
        return self.cpu_s / 3600 * self.cpu_hour


def grading(grade_durations_ms: Iterable[int | None], cpu_hour: float) -> Grading:
    """Grader time of one arm; a grade's wall time is read as one core busy for that long."""
    durations = [d or 0 for d in grade_durations_ms]
    return Grading(len(durations), sum(durations) / 1000, cpu_hour)
