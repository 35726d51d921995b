"""Busy time as the union of call intervals, against a brute-force count of covered
milliseconds; token accounting and spend from the ledger's per-arm sums."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agent.metrics.billing import spends_of
from agent.metrics.usage import Spans, call_accounting, union_ms

intervals = st.lists(st.tuples(st.integers(0, 400), st.integers(0, 60)), max_size=40)


@given(intervals)
@settings(max_examples=300, deadline=None)
def test_union_is_the_count_of_covered_milliseconds(calls: list[tuple[int, int]]) -> None:
    covered = {ms for start, latency in calls for ms in range(start, start + latency)}
    assert union_ms(Spans.of([s for s, _ in calls], [lat for _, lat in calls])) == len(covered)


@given(intervals, intervals)
@settings(max_examples=100, deadline=None)
def test_joined_arms_count_their_overlap_once(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> None:
    covered = {ms for start, latency in a + b for ms in range(start, start + latency)}
    spans = [Spans.of([s for s, _ in c], [lat for _, lat in c]) for c in (a, b)]
    assert union_ms(Spans.join(spans)) == len(covered)


def test_a_negative_latency_covers_nothing() -> None:
    assert union_ms(Spans.of([10, 20], [-5, 3])) == 3
    assert union_ms(Spans.join([])) == 0


def _row(arm: str, lost: int, **sums: float) -> dict[str, float | str | int]:
    zero = dict.fromkeys(
        (
            "prompt completion cached cache_write reasoning priced_prompt priced_completion priced_cached "
            "priced_cache_write reported_usd reported_calls priced_calls detailed paced_ms"
        ).split(),
        0,
    )
    sources = {"source_reported": 0, "source_estimated": 0, "source_reserved": 0}
    return {"arm": arm, "lost": lost} | zero | sources | sums


def test_lost_attempts_calls_are_billed_but_not_the_models() -> None:
    rows = [
        _row("A", 0, prompt=100, completion=10, reported_usd=0.25, source_reported=110),
        _row("A", 1, prompt=40, completion=0, reported_usd=0.5, source_reserved=40),
        _row("B", 1, prompt=7, source_estimated=7),  # only lost calls: billed, no model spend
    ]
    billed, model = spends_of(rows)
    assert (billed["A"].prompt, billed["A"].completion, billed["A"].reported_usd) == (140, 10, 0.75)
    assert (model["A"].prompt, model["A"].reported_usd) == (100, 0.25)
    assert billed["B"].prompt == 7 and "B" not in model
    usage = call_accounting(rows)
    assert (usage["A"].reported, usage["A"].reserved, usage["A"].kind) == (110, 40, "mixed")
    assert (usage["B"].estimated, usage["B"].kind) == (7, "estimated")
