"""A comparison that cannot be mixed up or overstated: the setup printed and hashed (different
setups are never one error bar), costs with intervals that an independent bootstrap reproduces,
verdicts that say what they rest on (exclusions, unequal budgets), and the two-level replicate
interval."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agent.metrics import build_report, render_report
from agent.metrics.determinism import two_level_ci
from agent.metrics.stats import paired_bootstrap

SEED = 20261130


def report_of(ledger, run_ids, **kw):
    kw.setdefault("resamples", 2000)
    report = build_report(ledger, run_ids if isinstance(run_ids, list) else [run_ids], **kw)
    return report, render_report(report, "text"), render_report(report, "markdown")


def _set(ledger, run, arm, **columns):
    ledger.db.execute(
        f"update arms set {', '.join(f'{k} = ?' for k in columns)} where run_id = ? and name = ?",
        [*columns.values(), run, arm],
    )
    ledger.db.conn.commit()


def test_every_format_opens_with_the_setup_per_arm(build, ledger):
    run = build.run(["t1", "t2"])
    build.arm(run, "A", ["P", "P"])
    build.arm(run, "B", ["P", "RP"])
    _set(ledger, run, "A", model="solver", model_reported="solver-v2", sampling_json=json.dumps({"temperature": 0.7}))
    report, text, markdown = report_of(ledger, run)
    setup = report["runs"][0]["arms"][0]["setup"]
    assert (setup["model_configured"], setup["model_reported"], setup["sampling"]) == (
        "solver",
        "solver-v2",
        {"temperature": 0.7},
    )
    assert setup["cap_tokens"] == 10**9 and setup["attempt_budget"]["per_task"] == 3
    assert set(setup["held_constants"]) >= {"harness_version", "python_version", "node_version"}
    for shown in (text, markdown):
        assert "model solver (endpoint reports solver-v2); temperature 0.7" in shown
        assert "budget per task: 3 attempts (3× one attempt's caps)" in shown
        assert f"setup {report['runs'][0]['setup']['sha256'][:16]}" in shown
        assert "run-to-run spread: unknown from one run" in shown and "--replicates 3" in shown


def test_a_forced_run_carries_its_banner_in_every_format(build, ledger):
    run = build.run(["t1"])
    build.arm(run, "A", ["P"])
    build.arm(run, "B", ["P"])
    checks = [{"check": "model", "status": "differs", "observed": "reports solver-v2-preview", "invalidating": True}]
    ledger.insert(
        "preflights",
        {
            "id": "01PREFLIGHT0000000000000000",
            "run_id": run,
            "arm": "A",
            "created_utc": "2026-11-30T10:00:00.000+00:00",
            "verdict": "invalidating",
            "forced": 1,
            "checks_json": json.dumps(checks),
        },
    )
    report, text, markdown = report_of(ledger, run)
    assert report["runs"][0]["preflight"]["forced_past"] == ["A"]
    banner = "FORCED past an invalidating preflight on arm A (model!: reports solver-v2-preview)"
    assert banner in text and banner in markdown
    assert json.loads(render_report(report, "json"))["runs"][0]["preflight"]["forced_past"] == ["A"]


def test_runs_of_one_manifest_with_other_setups_are_never_one_error_bar(build, ledger):
    runs = []
    for i, (model, cap) in enumerate([("solver", 10**9), ("solver", 10**9), ("wrong", 50_000)]):
        run = build.run(["t1", "t2", "t3"], created=f"2026-11-30T1{i}:00:00.000+00:00")
        build.arm(run, "A", ["P", "R", "P"])
        build.arm(run, "B", ["P", "P", "R"])
        _set(ledger, run, "B", model=model, cap_tokens=cap)
        runs.append(run)
    report, text, _ = report_of(ledger, runs)
    groups = report["setup_groups"]
    assert [len(g["run_ids"]) for g in groups] == [2, 1]
    assert {"arm B model_configured: 'solver' vs 'wrong'", "arm B cap_tokens: 1000000000 vs 50000"} <= set(
        groups[1]["differences"]
    )
    assert report["replicates"] is None and report["replicate_statistics"] is None  # not pooled
    assert groups[0]["replicate_statistics"]["n_runs"] == 2 and groups[1]["replicate_statistics"] is None
    assert "setup 2 of 2" in text and "not replicates of the others" in text and "arm B cap_tokens" in text


def _independent_cpsp(cost_a, solved_a, cost_b, solved_b, seed, resamples):
    """A reference the report must match: plain numpy, the same draws as the acceptance bootstrap."""
    n = len(cost_a)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n), dtype=np.int32)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = cost_a[idx].sum(1) / solved_a[idx].sum(1)
        b = cost_b[idx].sum(1) / solved_b[idx].sum(1)
        ratio = b / a
    q = lambda v: np.quantile(np.where(np.isfinite(v), v, np.inf), [0.025, 0.975], method="lower")  # noqa: E731
    return q(a), q(b), q(ratio)


def test_cost_intervals_match_an_independent_bootstrap(build, ledger):
    tasks = [f"t{i}" for i in range(30)]
    run = build.run(tasks)
    plan_a = ["P" if i % 3 else "RP" for i in range(30)]
    plan_b = ["P" if i % 2 else "RRR" for i in range(30)]
    build.arm(run, "A", plan_a, tokens=1000)
    build.arm(run, "B", plan_b, tokens=700)
    report, text, _ = report_of(ledger, run, resamples=4000)
    section = report["runs"][0]
    arms = {a["metrics"]["name"]: a for a in section["arms"]}
    price = (0.8 * 1.0 + 0.2 * 2.0) / 1e6  # TOKEN_PRICE per token at prompt_share 0.8
    grading = {name: arms[name]["cost"]["grading"] for name in "AB"}
    attempts_a = np.array([len(p) for p in plan_a], dtype=float)
    attempts_b = np.array([len(p) for p in plan_b], dtype=float)
    cost_a = attempts_a * 1000 * price + grading["A"] * attempts_a / attempts_a.sum()
    cost_b = attempts_b * 700 * price + grading["B"] * attempts_b / attempts_b.sum()
    solved_a = np.array([p.endswith("P") for p in plan_a], dtype=float)
    solved_b = np.array([p.endswith("P") for p in plan_b], dtype=float)
    qa, qb, qr = _independent_cpsp(cost_a, solved_a, cost_b, solved_b, SEED, 4000)
    assert arms["A"]["cost"]["cpsp_ci"]["lo"] == pytest.approx(qa[0]) and arms["A"]["cost"]["cpsp_ci"][
        "hi"
    ] == pytest.approx(qa[1])
    assert arms["B"]["cost"]["cpsp_ci"]["lo"] == pytest.approx(qb[0]) and arms["B"]["cost"]["cpsp_ci"][
        "hi"
    ] == pytest.approx(qb[1])
    ratio = section["comparisons"][0]["cost_ratio"]
    assert (ratio["lo"], ratio["hi"]) == (pytest.approx(qr[0]), pytest.approx(qr[1]))
    tokens_a = attempts_a * 1000
    rng = np.random.default_rng(SEED)
    idx = rng.integers(0, 30, size=(4000, 30), dtype=np.int32)
    qap = np.quantile(tokens_a[idx].sum(1) / solved_a[idx].sum(1), [0.025, 0.975], method="lower")
    assert (arms["A"]["metrics"]["qap_ci"]["lo"], arms["A"]["metrics"]["qap_ci"]["hi"]) == (
        pytest.approx(qap[0]),
        pytest.approx(qap[1]),
    )
    # the acceptance bootstrap shares these draws, and equals the standalone one
    a = [int(p.endswith("P")) for p in plan_a]
    b = [int(p.endswith("P")) for p in plan_b]
    alone = paired_bootstrap(a, b, seed=SEED, resamples=4000)
    shared = section["comparisons"][0]["bootstrap"]
    assert (shared["lo"], shared["hi"], shared["p_positive"]) == (alone.lo, alone.hi, alone.p_positive)
    assert "CPSP (cost per solved task) ratio B / A:" in text and "95% CI" in text


def test_cheaper_only_when_the_ratio_interval_excludes_one(build, ledger):
    run = build.run(["t1", "t2", "t3", "t4"])
    build.arm(run, "A", ["P", "P", "P", "P"], tokens=1000)
    build.arm(run, "B", ["P", "P", "P", "P"], tokens=900)
    report, _, _ = report_of(ledger, run)
    reads = {a["metrics"]["name"]: a["read"] for a in report["runs"][0]["arms"]}
    assert "cheaper per solved task" in reads["B"] and "dearer per solved task" in reads["A"]  # 0.9 on every task
    noisy = build.run(["u1", "u2", "u3", "u4"], created="2026-11-30T12:00:00.000+00:00")
    build.arm(noisy, "A", ["P", "RP", "P", "RRP"], tokens=1000)
    build.arm(noisy, "B", ["RRP", "P", "RP", "P"], tokens=1000)
    report, _, _ = report_of(ledger, noisy)
    reads = {a["metrics"]["name"]: a["read"] for a in report["runs"][0]["arms"]}
    assert "no detectable cost difference at n=4" in reads["A"] and "cheaper" not in reads["B"]


def test_a_censored_arm_is_never_named_a_plain_winner(build, ledger):
    tasks = [f"t{i}" for i in range(12)]
    run = build.run(tasks)
    build.arm(run, "A", ["P"] * 12)
    build.arm(run, "B", ["R"] * 8 + ["C"] * 4, censored=True, unfinished=tasks[8:])
    report, text, _ = report_of(ledger, run)
    verdict = report["runs"][0]["comparisons"][0]["verdict"]
    assert verdict["winner"] == "A"  # the rule still decides on what both finished ...
    assert (
        "wins" not in verdict["text"]
        and "A ahead on acceptance by 100 pts on the 8 tasks both finished" in verdict["text"]
    )
    assert "4 excluded: B censored (cap hit)" in verdict["text"] and "not a win over the whole suite" in verdict["text"]
    assert "4 excluded: B censored (cap hit)" in verdict["short"]


def test_unequal_budgets_are_stated_in_the_budget_line_the_header_and_the_verdict(build, ledger):
    run = build.run(["t1", "t2"])
    build.arm(run, "direct", ["R", "R"], max_attempts=1)
    build.arm(run, "par2", ["P", "P"], max_attempts=1)
    _set(ledger, run, "par2", strategy="parallel@2", select_rule="visible")
    report, text, _ = report_of(ledger, run)
    assert "UNEQUAL per-task budgets — direct 1 attempt (1× one attempt's caps); par2 2 candidates" in text
    assert "acceptance within each arm's budget" in text
    assert report["runs"][0]["comparisons"][0]["verdict"]["text"].endswith(
        "unequal budgets: direct 1× one attempt's caps, par2 2× one attempt's caps"
    )


def test_the_replicate_interval_resamples_sessions_and_contains_the_scores():
    # three replicates of a coin on three tasks: 1.00, 0.33, 0.00 (the README's example)
    matrix = np.array([[1, 1, 1], [1, 0, 0], [0, 0, 0]], dtype=float)
    lo, hi = two_level_ci(matrix, seed=SEED, resamples=20_000)
    assert lo <= 0.0 and hi >= 1.0  # every replicate score inside
    tasks_only = np.quantile(
        [matrix[:, np.random.default_rng(i).integers(0, 3, 3)].mean() for i in range(2000)], [0.025, 0.975]
    )
    assert hi - lo >= tasks_only[1] - tasks_only[0]
    same = np.tile([1.0, 0.0, 1.0, 1.0], (4, 1))  # replicates agree: only the tasks vary
    lo2, hi2 = two_level_ci(same, seed=SEED, resamples=5000)
    assert lo2 < 0.75 < hi2


def test_a_cost_difference_inside_the_margin_is_the_same_cost(build, ledger):
    """A CPSP ratio of 0.998 on every task excludes 1 yet is no cheaper endpoint: within the
    run's cost_margin (default ±5%) the read says the same cost; a narrower margin lets it count."""
    run = build.run(["t1", "t2", "t3", "t4"])
    build.arm(run, "A", ["P", "P", "P", "P"], tokens=1000)
    build.arm(run, "B", ["P", "P", "P", "P"], tokens=998)
    report, text, markdown = report_of(ledger, run)
    ratio = report["runs"][0]["comparisons"][0]["cost_ratio"]
    assert ratio["hi"] < 1 and ratio["margin"] == 0.05
    reads = {a["metrics"]["name"]: a["read"] for a in report["runs"][0]["arms"]}
    assert "the same cost per solved task within ±5%" in reads["A"] and "cheaper" not in reads["B"]
    for shown in (text, markdown):
        assert "the same cost within ±5% (cost_margin)" in shown and "B cheaper" not in shown

    narrow = build.run(["u1", "u2", "u3", "u4"], config={"toml": "[run]\ncost_margin = 0.001\n"})
    build.arm(narrow, "A", ["P", "P", "P", "P"], tokens=1000)
    build.arm(narrow, "B", ["P", "P", "P", "P"], tokens=998)
    report, text, _ = report_of(ledger, narrow)
    reads = {a["metrics"]["name"]: a["read"] for a in report["runs"][0]["arms"]}
    assert "cheaper per solved task" in reads["B"] and "dearer per solved task" in reads["A"]
    assert "B cheaper beyond the ±0.1% margin" in text
