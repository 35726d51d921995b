"""read.py: the practical read follows the numbers, and a censored arm is never ranked."""

from __future__ import annotations

from agent.metrics.arm import ArmMetrics, Spread
from agent.metrics.compare import Comparison, decide
from agent.metrics.cost import ArmCost
from agent.metrics.outcome import ArmFigures
from agent.metrics.read import practical_read
from agent.metrics.stats import mcnemar_exact, tango_interval


def metrics(name, accepted=20, retry_tax=0.2, qap=5000.0, censored=False, flatter=None, visible_n=0):
    figures = ArmFigures(
        name=name,
        n_tasks=40,
        decided=39 if censored else 40,
        accepted=accepted,
        acceptance=accepted / 40,
        acceptance_ci=(0.0, 1.0),
        comparable=not censored,
        not_comparable="cap hit: 1 of 40 tasks unfinished" if censored else None,
        unfinished=["t1"] if censored else [],
        pending=0,
        total_tokens=100_000,
        wasted_tokens=int(100_000 * retry_tax),
        qap=qap,
        retry_tax=retry_tax,
        first_try=accepted,
        first_try_share=1.0,
        cap_hit=censored,
    )
    return ArmMetrics(
        figures=figures,
        cap_tokens=None,
        state="censored" if censored else "finished",
        max_attempts=3,
        n_attempts=60,
        tokens_per_attempt=Spread(1, 1, 1, 60),
        wall_ms=0,
        busy_ms=None,
        busy_source=None,
        calls=0,
        transport_retries=0,
        malformed_tool_calls=0,
        visible_pass_n=visible_n,
        visible_flatter_rate=flatter,
    )


def comparison(only_a, only_b, n=40):
    """B − A over n paired tasks with the given discordant counts."""
    a = [1] * only_a + [0] * only_b + [0] * (n - only_a - only_b)
    b = [0] * only_a + [1] * only_b + [0] * (n - only_a - only_b)
    mc = mcnemar_exact(a, b)
    iv = tango_interval(mc.only_a, mc.only_b, n)
    return Comparison("A", "B", n, [], sum(a), sum(b), iv, mc, None, 300, decide("A", "B", iv, mc, 300))


def cost(name, cpsp):
    return ArmCost(arm=name, kind="tokens", total=1.0, n_attempts=60, per_attempt=0.1, solved=20, cpsp=cpsp)


def test_seed_002_reads():
    a, b = metrics("A", accepted=28, retry_tax=0.44), metrics("B", accepted=25, retry_tax=0.12)
    gap = comparison(only_a=9, only_b=1)  # A better on 9 tasks, B on 1: p = 0.021, CI excludes 0
    assert gap.verdict.winner == "A"
    assert practical_read(a, None, b, None, gap).startswith("wins on acceptance (+20 pts); eats quota on retries")
    assert practical_read(b, None, a, None, gap).startswith("loses 20 pts on acceptance; little spent on retries")


def test_gap_inside_noise_is_a_tie_and_cost_decides():
    a, b = metrics("A"), metrics("B")
    gap = comparison(only_a=1, only_b=3)
    assert (
        practical_read(a, cost("A", 0.05), b, cost("B", 0.03), gap)
        == "no detectable difference in acceptance at n=40; dearer per solved task"
    )


def test_qap_is_only_compared_under_the_same_accounting():
    a, b = metrics("A", qap=3000.0), metrics("B", qap=9000.0)
    gap = comparison(only_a=1, only_b=1)
    assert "less quota per patch" in practical_read(a, None, b, None, gap)
    assert "quota per patch" not in practical_read(a, None, b, None, gap, same_accounting=False)


def test_censored_arm_is_only_not_comparable():
    a, c = metrics("A"), metrics("C", censored=True)
    assert practical_read(c, None, a, None, None) == "not comparable (cap hit: 1 of 40 tasks unfinished)"
    assert "acceptance" not in practical_read(a, None, c, None, comparison(0, 12))


def test_visible_flattery_and_nothing_solved():
    assert practical_read(metrics("A", flatter=0.4, visible_n=10), None) == "visible tests flatter it"
    assert practical_read(metrics("A", accepted=0, qap=None), None).startswith("solved nothing")
