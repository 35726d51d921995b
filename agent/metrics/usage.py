"""What the calls and grades of a run say about its accounting: how each arm's tokens were
counted (reported by the endpoint or estimated: QAP compares only under the same accounting),
how long each endpoint was busy (the union of its call intervals, so calls in parallel are not
counted twice) and how long the grader ran (grading compute belongs in the cost numerator). Pure functions over sums and rows the report streams from the ledger.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

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


def accounting(tokens_by_source: Mapping[str, int]) -> Accounting:
    """From each usage source's token total (summed over an arm's calls, e.g. in SQL): the arm's
    kind is the one holding >= 95% of them."""
    sums = {source: int(tokens_by_source.get(source) or 0) for source in ("reported", "estimated", "reserved")}
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


@dataclass
class Spans:
    """Call intervals as two float arrays, seconds since the epoch (400k calls: 6 MB, not 45 MB
    of tuples)."""

    starts: np.ndarray
    ends: np.ndarray

    @classmethod
    def join(cls, parts: Iterable[Spans]) -> Spans:
        parts = list(parts)
        return cls(
            np.concatenate([p.starts for p in parts] or [np.empty(0)]),
            np.concatenate([p.ends for p in parts] or [np.empty(0)]),
        )


def call_usage(rows: Iterable[tuple[Any, ...]]) -> tuple[dict[str, Spans], dict[str, Accounting]]:
    """Per arm that has calls, its call intervals and its token accounting, in one pass over
    (arm, started_utc, latency_ms, usage_source, prompt_tokens, completion_tokens) rows streamed
    from the ledger. A call counts in the intervals when it has a start time and a latency."""
    per_arm: dict[str, tuple[list[str], list[int], dict[str, int]]] = {}
    for arm, start, latency, source, prompt, completion in rows:  # 400k rows at 100k attempts: kept lean
        acc = per_arm.get(arm)
        if acc is None:
            acc = per_arm[arm] = ([], [], defaultdict(int))
        if start and latency is not None:
            acc[0].append(start)
            acc[1].append(latency)
        acc[2][source] += (prompt or 0) + (completion or 0)
    spans, usage = {}, {}
    for arm, (starts, latencies, tokens) in per_arm.items():
        lo = np.array([_epoch_s(s) for s in starts], dtype=np.float64)
        spans[arm] = Spans(lo, lo + np.array(latencies, dtype=np.float64) / 1000)
        usage[arm] = accounting(tokens)
    return spans, usage


def union_ms(s: Spans) -> int:
    """Length of the union of the intervals, in ms: time during which at least one call ran."""
    order = np.lexsort((s.ends, s.starts))
    total, end = 0.0, None
    start = None
    for lo, hi in zip(s.starts[order].tolist(), s.ends[order].tolist()):
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


def grading(runs: int, total_ms: int | None, cpu_hour: float) -> Grading:
    """Grader time of one arm from its number of grades and their summed duration_ms; a grade's
    wall time is read as one core busy for that long."""
    return Grading(runs, (total_ms or 0) / 1000, cpu_hour)
