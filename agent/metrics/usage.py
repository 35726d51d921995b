"""What the calls and grades of a run say about its accounting: how each arm's tokens were
counted (reported by the endpoint or estimated: QAP compares only under the same accounting),
how long each endpoint was busy (the union of its call intervals, so calls in parallel are not
counted twice) and how long the grader ran (grading compute belongs in the cost numerator). Pure functions over the sums the report reads
from the ledger (agent/ledger/report_reads.py).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agent.ledger.report_reads import USAGE_SOURCES

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
    sums = {source: int(tokens_by_source.get(source) or 0) for source in USAGE_SOURCES}
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


@dataclass
class Spans:
    """Call intervals as two int64 arrays of ms since the epoch (400k calls: 6 MB, not 45 MB of
    tuples)."""

    starts: np.ndarray
    ends: np.ndarray

    @classmethod
    def of(cls, starts: Sequence[int], latencies: Sequence[int]) -> Spans:
        lo = np.asarray(starts, dtype=np.int64)
        return cls(lo, lo + np.maximum(np.asarray(latencies, dtype=np.int64), 0))

    @classmethod
    def join(cls, parts: Iterable[Spans]) -> Spans:
        parts = list(parts)
        return cls(
            np.concatenate([p.starts for p in parts] or [np.empty(0, dtype=np.int64)]),
            np.concatenate([p.ends for p in parts] or [np.empty(0, dtype=np.int64)]),
        )


def union_ms(s: Spans) -> int:
    """Length of the union of the intervals, in ms: time during which at least one call ran.

    Taken in start order, an interval adds what lies past the furthest end before it (every
    point up to that end is covered: the interval reaching it started earlier)."""
    if not s.starts.size:
        return 0
    order = np.lexsort((s.ends, s.starts))
    starts, ends = s.starts[order], s.ends[order]
    reach = np.maximum.accumulate(ends)
    added = ends[1:] - np.maximum(starts[1:], reach[:-1])
    return int(ends[0] - starts[0] + np.maximum(added, 0).sum())


def spans_by_arm(by_arm: Mapping[str, tuple[Sequence[int], Sequence[int]]]) -> dict[str, Spans]:
    """Per arm that has timed calls, its call intervals (from report_reads.call_spans)."""
    return {arm: Spans.of(starts, latencies) for arm, (starts, latencies) in by_arm.items()}


def call_accounting(rows: Iterable[Mapping[str, Any]]) -> dict[str, Accounting]:
    """Per arm that has calls, its token accounting, from report_reads.spend_sums' rows (one per
    arm and lost flag, with `source_<usage source>` token sums)."""
    tokens: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        for source in USAGE_SOURCES:
            tokens[row["arm"]][source] += row[f"source_{source}"] or 0
    return {arm: accounting(by_source) for arm, by_source in tokens.items()}


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
