"""read.py: the practical read follows the numbers, and a censored arm is never ranked."""
from __future__ import annotations

from agent.metrics.arm import ArmMetrics, Spread
from agent.metrics.compare import Comparison
from agent.metrics.cost import ArmCost
from agent.metrics.read import practical_read
from agent.metrics.stats import McNemar, PairedGap


def metrics(name, accepted=20, retry_tax=0.2, qap=5000.0, censored=False, flatter=None, visible_n=0):
    return ArmMetrics(
        name=name, n_tasks=40, accepted=accepted, acceptance=accepted / 40, acceptance_ci=(0.0, 1.0),
        total_tokens=100_000, qap=qap, wasted_tokens=int(100_000 * retry_tax), retry_tax=retry_tax,
        first_try=accepted, first_try_share=1.0, censored=censored, cap_hit=censored, cap_tokens=None,
        unfinished=["t1"] if censored else [], n_attempts=60, tokens_per_attempt=Spread(1, 1, 1, 60),
        wall_ms=0, busy_ms=None, calls=0, transport_retries=0, malformed_tool_calls=0,
        visible_pass_n=visible_n, visible_flatter_rate=flatter)


def comparison(gap, lo, hi):
    return Comparison("A", "B", 40, [], 20, 25, PairedGap(gap, lo, hi, 0.9, 40, 1, 100), McNemar(1, 6, 0.1), 300)


def cost(name, cpsp):
    return ArmCost(arm=name, kind="tokens", total=1.0, n_attempts=60, per_attempt=0.1, solved=20, cpsp=cpsp)


def test_seed_002_reads():
    a, b = metrics("A", accepted=28, retry_tax=0.44), metrics("B", accepted=25, retry_tax=0.12)
    gap = comparison(-0.08, -0.12, -0.02)
    assert practical_read(a, None, b, None, gap).startswith("wins on acceptance (+8 pts); eats quota on retries")
    assert practical_read(b, None, a, None, gap).startswith("loses 8 pts on acceptance; little spent on retries")


def test_gap_inside_noise_is_a_tie_and_cost_decides():
    a, b = metrics("A"), metrics("B")
    gap = comparison(0.05, -0.05, 0.15)
    assert practical_read(a, cost("A", 0.05), b, cost("B", 0.03), gap) == \
        "acceptance tied within noise; dearer per solved task"


def test_censored_arm_is_only_not_comparable():
    a, c = metrics("A"), metrics("C", censored=True)
    assert practical_read(c, None, a, None, None).startswith("censored: not comparable (cap hit, 1 of 40")
    assert "acceptance" not in practical_read(a, None, c, None, comparison(0.1, 0.05, 0.2))


def test_visible_flattery_and_nothing_solved():
    assert practical_read(metrics("A", flatter=0.4, visible_n=10), None) == "visible tests flatter it"
    assert practical_read(metrics("A", accepted=0, qap=None), None).startswith("solved nothing")
