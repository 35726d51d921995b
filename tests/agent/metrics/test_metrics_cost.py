"""cost.py: price tables, CPSP and break-even, checked against seed 000's worked pilot."""

from __future__ import annotations

import json

import pytest

from agent.metrics.cost import arm_cost, break_even_utilization, token_attempt_cost
from agent.metrics.errors import PriceError
from agent.metrics.price import parse_price

RUN = {"id": "r", "created_utc": "2026-10-27T10:00:00+00:00", "finished_utc": "2026-10-27T12:00:00+00:00"}


def attempts(n, prompt=0, completion=0, duration_ms=1000):
    rows = [
        {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "duration_ms": duration_ms, "ended_utc": None}
        for _ in range(n)
    ]
    rows[0].update(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)
    return rows


def arm(name, price, busy_ms=None):
    return {"name": name, "price_json": json.dumps(price) if price is not None else None, "busy_ms": busy_ms}


@pytest.mark.parametrize("price", [None, {}, {"input_per_mtok": 0.15}])
def test_missing_price_names_the_arm(price):
    with pytest.raises(PriceError, match="arm B"):
        arm_cost(arm("B", price), RUN, attempts(1), solved=1)


@pytest.mark.parametrize(
    "price",
    [
        {"gpu_hour": -1},
        {"gpu_hour": 1.6, "utilization": 0},
        {"gpu_hour": 1.6, "utilization": 1.5},
        {"input_per_mtok": "x", "output_per_mtok": 1},
    ],
)
def test_bad_price_values_are_errors(price):
    with pytest.raises(PriceError, match="arm A"):
        parse_price("A", json.dumps(price))


def test_token_cost_charges_unsplit_retry_tokens_at_input_rate():
    price = parse_price("A", json.dumps({"input_per_mtok": 1.0, "output_per_mtok": 4.0}))
    row = {"prompt_tokens": 1_000_000, "completion_tokens": 500_000, "total_tokens": 2_000_000}
    assert token_attempt_cost(price, row) == pytest.approx(1.0 + 2.0 + 0.5)


def seed_000_arms(utilization):
    # seed 000's pilot: open-27b self-hosted at $1.60/h, 57 solved; hosted 540,118 in / 121,455 out, 62 solved
    busy_ms = 4_563_900
    gpu = arm_cost(
        arm("open", {"gpu_hour": 1.60, "utilization": utilization}, busy_ms),
        RUN,
        attempts(120, duration_ms=38_000),
        solved=57,
    )
    hosted = arm_cost(
        arm("hosted", {"input_per_mtok": 3.0, "output_per_mtok": 15.0}), RUN, attempts(120, 540_118, 121_455), solved=62
    )
    return gpu, hosted


def test_seed_000_cost_table():
    gpu, hosted = seed_000_arms(0.55)
    assert round(gpu.per_attempt, 4) == 0.0307 and round(gpu.cpsp, 4) == 0.0647
    assert round(hosted.per_attempt, 4) == 0.0287 and round(hosted.cpsp, 4) == 0.0555
    assert round(gpu.cpsp / hosted.cpsp - 1, 2) == 0.17  # "17% more expensive per solved problem"
    assert gpu.utilization_source == "configured"


def test_seed_000_break_even_and_90_percent():
    gpu, hosted = seed_000_arms(0.55)
    assert round(break_even_utilization(gpu, hosted), 2) == 0.64  # "about 64%"
    gpu90, _ = seed_000_arms(0.90)
    assert round(1 - gpu90.cpsp / hosted.cpsp, 2) == 0.29  # "at 90%, it was 29% cheaper"
    at_break_even, _ = seed_000_arms(break_even_utilization(gpu, hosted))
    assert at_break_even.cpsp == pytest.approx(hosted.cpsp)


def test_utilization_is_measured_when_absent():
    cost = arm_cost(arm("G", {"gpu_hour": 2.0}, busy_ms=3_600_000), RUN, attempts(4), solved=2)
    assert cost.utilization == pytest.approx(0.5) and cost.utilization_source == "measured"
    assert cost.total == pytest.approx(4.0)  # one busy hour at 50% pays for two hours
    assert cost.cpsp == pytest.approx(2.0) and cost.per_attempt == pytest.approx(1.0)


def test_no_solved_task_has_no_cpsp():
    cost = arm_cost(arm("A", {"input_per_mtok": 1, "output_per_mtok": 1}), RUN, attempts(2, 10, 10), solved=0)
    assert cost.cpsp is None and cost.total > 0
