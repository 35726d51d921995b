"""build_report / render_report end to end on small real ledgers."""

from __future__ import annotations

import json

import pytest

from agent.metrics import ReportError, build_report, render_report

PLAN_A = ["P", "RP", "RRR", "P", "MMM", "P", "RRP", "T"]
PLAN_B = ["P", "P", "P", "RP", "P", "R", "P", "P"]
TASKS = [f"t{i}" for i in range(8)]


@pytest.fixture
def two_arm_run(build):
    run = build.run(TASKS)
    build.arm(run, "A", PLAN_A, price={"gpu_hour": 1.6, "utilization": 0.5}, busy_ms=1_800_000)
    build.arm(run, "B", PLAN_B)
    return run


def test_report_numbers(ledger, two_arm_run):
    report = build_report(ledger, [two_arm_run], resamples=2000)
    (section,) = report["runs"]
    a, b = (arm["metrics"] for arm in section["arms"])
    assert (a["accepted"], b["accepted"]) == (5, 7)
    (c,) = section["comparisons"]
    assert (c["first"], c["second"], c["n_paired"]) == ("A", "B", 8)
    assert c["bootstrap"]["gap"] == pytest.approx(0.25)
    assert c["bootstrap"]["seed"] == 20261130
    assert c["break_even"]["self_hosted"] == "A" and c["break_even"]["priced"] == "B"
    assert section["arms"][0]["cost"]["total"] == pytest.approx(1.6)
    assert report["replicates"] is None
    json.dumps(report)


def test_text_markdown_json_share_content(ledger, two_arm_run):
    report = build_report(ledger, [two_arm_run[:8]], resamples=500)
    text = render_report(report, "text")
    markdown = render_report(report, "markdown")
    assert json.loads(render_report(report, "json")) == json.loads(json.dumps(report))
    for out in (text, markdown):
        assert "0.62 [0.31, 0.86] n=8" in out  # A: 5 of 8, Wilson
        assert "seed 20261130" in out and "McNemar exact" in out and "break-even utilization" in out
    assert "| arm | acceptance within 3 attempts [95% CI] |" in markdown
    assert "\x1b[" not in text


def test_every_decision_cell_carries_its_n(ledger, two_arm_run):
    text = render_report(build_report(ledger, [two_arm_run], resamples=200), "text")
    rows = [line for line in text.splitlines() if line.startswith(("A  ", "B  "))]
    assert len(rows) == 2
    for row in rows:
        assert row.count("n=") >= 4 and "of " in row


def test_a_run_without_a_price_is_reported_without_cost_columns_saying_so(build, ledger):
    run = build.run(TASKS)
    build.arm(run, "A", PLAN_A)
    build.arm(run, "B", PLAN_B, price=None)
    report = build_report(ledger, [run], resamples=100)
    assert report["with_cost"] is False and report["cost_left_out"].startswith(f"run {run}: arm B: no price — add")
    assert all(a["cost"] is None for a in report["runs"][0]["arms"])
    for fmt in ("text", "markdown"):
        text = render_report(report, fmt)
        table = text.split("cost columns left out")[0]  # the setup and the decision table
        assert "CPSP" not in table and "no price" not in table
        assert "cost columns left out (CPSP, $/task, $/solved, the cost lines): run " in text
        assert "grading compute: not priced" in text
    asked = build_report(ledger, [run], with_cost=False, resamples=100)
    assert asked["cost_left_out"] == "asked for with --no-cost" and "asked for with --no-cost" in render_report(
        asked, "text"
    )
    priced = build_report(ledger, [build_priced(build, ledger)], resamples=100)
    assert priced["with_cost"] and priced["cost_left_out"] is None and "CPSP" in render_report(priced, "text")


def build_priced(build, ledger) -> str:
    run = build.run(TASKS)
    build.arm(run, "A", PLAN_A)
    build.arm(run, "B", PLAN_B)
    return run


def test_censored_arm_is_not_comparable(build, ledger):
    run = build.run(TASKS)
    build.arm(run, "A", PLAN_A[:6] + ["", ""], censored=True)
    build.arm(run, "B", PLAN_B)
    report = build_report(ledger, [run], resamples=200)
    arm_a = report["runs"][0]["arms"][0]
    assert arm_a["read"] == "not comparable (cap hit: 2 of 8 tasks unfinished)"
    assert report["runs"][0]["comparisons"][0]["n_paired"] == 6
    assert "not comparable (0.67 [0.30, 0.90] n=6 of 8 finished)" in render_report(report, "text")


def test_replicates_across_runs(build, ledger):
    runs = []
    for day, session in (("01", "s1"), ("02", "s2"), ("02", "s2")):
        run = build.run(TASKS, created=f"2026-11-{day}T09:00:00.000+00:00", session=session)
        build.arm(run, "A", PLAN_A)
        build.arm(run, "B", PLAN_B)
        runs.append(run)
    report = build_report(ledger, runs, resamples=100)
    rep = report["replicates"]
    assert rep["n_runs"] == 3 and rep["schedule"]["kind"] == "different days"
    assert rep["arms"]["A"]["scores"] == [5, 5, 5]
    text = render_report(report, "text")
    assert "Replicates: 3 runs" in text and "seed 003 result 6" in text


def test_runs_with_different_manifests_are_refused(build, ledger):
    r1 = build.run(TASKS, manifest="1" * 64, config={"temperature": 0})
    r2 = build.run(TASKS, manifest="2" * 64, config={"temperature": 0.2})
    for run in (r1, r2):
        build.arm(run, "A", PLAN_A)
    with pytest.raises(ReportError, match="config.temperature: 0 vs 0.2"):
        build_report(ledger, [r1, r2])


def test_unknown_run_and_format(ledger, two_arm_run):
    with pytest.raises(ReportError, match="no run"):
        build_report(ledger, ["ZZZZ"])
    with pytest.raises(ReportError, match="text, markdown, json"):
        render_report(build_report(ledger, [], resamples=50), "html")


def test_cli_grading_price_option(build, ledger, tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    run = build.run(TASKS)
    build.arm(run, "A", PLAN_A)
    build.arm(run, "B", PLAN_B)
    build.grades(run, "A", 3_600_000)
    root = Path(__file__).resolve().parents[3]

    def report(*args):
        return subprocess.run(
            [sys.executable, "-m", "tuiapp.cli", "report", "--db", str(ledger.path), *args],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=root,
        )

    done = report("--grading-cpu-hour", "0.2", "--json")
    assert done.returncode == 0, done.stderr
    cost = json.loads(done.stdout)["runs"][0]["arms"][0]["cost"]
    assert cost["grading_cpu_hour"] == 0.2 and cost["grading"] == pytest.approx(15 * 0.2)  # 15 graded attempts
    assert "grading compute: $0.05 per CPU-hour" in report().stdout  # the stated default
    bad = report("--grading-cpu-hour", "-1")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "grading CPU price -1.0 is not a number >= 0" in bad.stderr
