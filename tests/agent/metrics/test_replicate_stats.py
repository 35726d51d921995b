"""replicate_stats.py over a real ledger: a censored replicate is listed and left out of the spread,
and a ledger without request hashes says so instead of guessing (issue 17)."""

from __future__ import annotations

from agent.metrics.report import build_report, render_report


def test_a_censored_replicate_is_listed_and_left_out_of_the_spread(ledger, build):
    tasks = ["t1", "t2", "t3"]
    runs = []
    for i, (plan_a, censored) in enumerate(
        [(["P", "R", "P"], False), (["P", "C", ""], True), (["P", "P", "R"], False)]
    ):
        run = build.run(tasks, created=f"2026-11-30T1{i}:00:00.000+00:00", session=f"s{i}")
        build.arm(run, "A", plan_a, censored=censored, unfinished=["t2", "t3"] if censored else None)
        build.arm(run, "B", ["P", "P", "P"])
        runs.append(run)
    report = build_report(ledger, runs, with_cost=False, resamples=1000)
    a = report["replicate_statistics"]["arms"]["A"]
    assert a["error_bar"]["replicates"] == [1, 3]
    assert a["error_bar"]["left_out"] == [{"run_id": runs[1], "replicate": 2}]
    assert a["error_bar"]["acceptance"] == [2 / 3, 2 / 3] and a["error_bar"]["range"] == 0
    assert [r["task_id"] for r in a["rotation"]["rotating"]] == ["t2", "t3"]
    assert a["sessions_known"] is None  # these rows carry no request hashes
    text = render_report(report, "text")
    assert f"A: replicate 2 (run {runs[1]}) censored — not comparable, left out" in text
    assert "A: no calls with a request hash" in text
    markdown = render_report(report, "markdown")
    assert "| arm | model | replicates |" in markdown


def test_one_run_has_no_replicate_statistics(ledger, build):
    run = build.run(["t1"])
    build.arm(run, "A", ["P"])
    assert build_report(ledger, [run], with_cost=False)["replicate_statistics"] is None
