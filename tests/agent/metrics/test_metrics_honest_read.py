"""Issue 13 on real ledgers, one per case: what the report *says* (the read, the decision rule,
the — cells, the published accounting), in text, markdown and JSON."""

from __future__ import annotations

import json
import re

import pytest

from agent.metrics import build_report, render_report

FREE = {"input_per_mtok": 0.0, "output_per_mtok": 0.0}


def report_of(ledger, run_ids, **kw):
    kw.setdefault("resamples", 2000)
    report = build_report(ledger, run_ids if isinstance(run_ids, list) else [run_ids], **kw)
    return report, render_report(report, "text"), render_report(report, "markdown")


def comparison(report):
    (c,) = report["runs"][0]["comparisons"]
    return c


def reads(report):
    return {arm["metrics"]["name"]: arm["read"] for arm in report["runs"][0]["arms"]}


def test_one_paired_task_is_no_win(build, ledger):
    run = build.run(["t1"])
    build.arm(run, "A", ["P"])
    build.arm(run, "B", ["RRR"])
    report, text, _ = report_of(ledger, run)
    c = comparison(report)
    assert c["verdict"]["winner"] is None and c["mcnemar"]["p_value"] == 1.0
    assert c["interval"]["hi"] - c["interval"]["lo"] > 1.0  # [-1.00, +0.59]: wide, never a point
    assert "no detectable difference at n=1 paired tasks" in text
    assert "wins" not in " ".join(reads(report).values())


def test_four_of_twenty_is_no_win_because_mcnemar_disagrees(build, ledger):
    # B better on 4 of 20 tasks: the score interval alone excludes 0, but exact McNemar p = 0.125
    tasks = [f"t{i:02d}" for i in range(20)]
    run = build.run(tasks)
    build.arm(run, "A", ["RRR"] * 4 + ["P"] * 8 + ["RRR"] * 8)
    build.arm(run, "B", ["P"] * 4 + ["P"] * 8 + ["RRR"] * 8)
    report, text, markdown = report_of(ledger, run)
    c = comparison(report)
    assert c["interval"]["lo"] > 0 and c["mcnemar"]["p_value"] == pytest.approx(0.125)
    assert c["verdict"]["winner"] is None
    assert set(c["verdict"]["reasons"]) == {"McNemar p ≥ 0.05", "fewer than 6 decided pairs"}
    assert all(r.startswith("no detectable difference in acceptance at n=20") for r in reads(report).values())
    for out in (text, markdown):
        assert "no detectable difference at n=20 paired tasks (B − A +20 pts" in out
        assert f"a 20-pt gap would need ~{c['tasks_needed']:,} tasks per arm" in out
        assert "decision rule: a side wins only when the 95% paired score interval (Tango) excludes 0" in out


def test_a_clear_gap_wins(build, ledger):
    tasks = [f"t{i:02d}" for i in range(30)]
    run = build.run(tasks)
    build.arm(run, "A", ["RRR"] * 12 + ["P"] * 10 + ["RRR"] * 8)
    build.arm(run, "B", ["P"] * 12 + ["P"] * 10 + ["RRR"] * 8)
    report, text, _ = report_of(ledger, run)
    c = comparison(report)
    assert c["verdict"]["winner"] == "B" and c["mcnemar"]["p_value"] < 0.001
    assert reads(report)["B"].startswith("wins on acceptance (+40 pts)")
    assert reads(report)["A"].startswith("loses 40 pts on acceptance")
    assert "B wins on acceptance by 40 pts" in text


def test_all_pairs_agree_is_not_certainty(build, ledger):
    tasks = [f"t{i}" for i in range(10)]
    run = build.run(tasks)
    plan = ["P"] * 6 + ["RRR"] * 4
    build.arm(run, "A", plan)
    build.arm(run, "B", plan)
    report, text, _ = report_of(ledger, run)
    c = comparison(report)
    assert c["interval"]["lo"] == pytest.approx(-0.2775, abs=1e-4) and c["interval"]["hi"] == pytest.approx(
        0.2775, abs=1e-4
    )
    assert "[-0.278, +0.278]" in text and "[+0.000, +0.000] (" not in text.split("second view")[0]
    assert "no gap was observed" in text


def _assert_dash_cells(text: str, arm: str) -> None:
    row = next(line for line in text.splitlines() if line.startswith(f"{arm}  "))
    cells = [cell for cell in row.split("  ") if cell.strip()]
    # arm, acceptance, QAP, retry tax, censored, CPSP, first-try share, read
    assert cells[1].strip().startswith("not comparable (")
    assert [cells[2].strip(), cells[3].strip(), cells[5].strip(), cells[6].strip()] == ["—"] * 4


@pytest.mark.parametrize(
    "state, censored, why",
    [
        ("censored", True, "cap hit: 2 of 6 tasks unfinished"),
        ("stopped", False, "arm stopped: 2 of 6 tasks unfinished"),
        ("aborted", False, "run aborted: 2 of 6 tasks unfinished"),
    ],
)
def test_not_comparable_arms_show_dashes_everywhere(build, ledger, state, censored, why):
    tasks = [f"t{i}" for i in range(6)]
    run = build.run(tasks)
    build.arm(run, "A", ["P", "RP", "P", "RRR", "", ""], censored=censored, state=state, unfinished=["t4", "t5"])
    build.arm(run, "B", ["P", "P", "RP", "P", "P", "P"])
    report, text, markdown = report_of(ledger, run)
    a = report["runs"][0]["arms"][0]
    assert a["comparable"] is False and a["not_comparable"] == why and a["read"] == f"not comparable ({why})"
    m = a["metrics"]
    assert (m["qap"], m["retry_tax"], m["first_try_share"], a["cost"]["cpsp"]) == (None, None, None, None)
    assert (m["decided"], m["acceptance"]) == (4, 0.75)
    assert json.loads(render_report(report, "json"))["runs"][0]["arms"][0]["comparable"] is False
    _assert_dash_cells(text, "A")
    md_row = next(line for line in markdown.splitlines() if line.startswith("| A |"))
    cells = [c.strip() for c in md_row.strip("|").split("|")]
    assert [cells[i] for i in (2, 3, 5, 6)] == ["—"] * 4
    assert cells[1] == "not comparable (0.75 [0.30, 0.95] n=4 of 6 finished)"
    assert comparison(report)["n_paired"] == 4 and len(comparison(report)["excluded"]) == 2


def test_aborted_attempts_are_left_out_of_pairing(build, ledger):
    # t2: A's only attempt was aborted (a lost call), so the task never got its budget on A
    run = build.run(["t1", "t2", "t3"])
    build.arm(run, "A", ["P", "A", "R"], state="finished")
    build.arm(run, "B", ["P", "P", "P"])
    report, text, _ = report_of(ledger, run)
    assert comparison(report)["excluded"] == ["t2"] and comparison(report)["n_paired"] == 2
    assert report["runs"][0]["arms"][0]["comparable"] is False
    assert "run did not finish: 1 of 3 tasks unfinished" in text


def test_live_and_report_count_a_censored_arm_the_same_way(build, ledger):
    # issue 13: live "0.00 [0.00, 0.39] n=6", report "0.00 [0.00, 0.24] n=12" for one arm
    tasks = [f"t{i:02d}" for i in range(12)]
    run = build.run(tasks)
    build.arm(run, "A", ["RRR"] * 6 + [""] * 6, censored=True)
    build.arm(run, "B", ["P"] * 12)
    report, text, _ = report_of(ledger, run)
    m = report["runs"][0]["arms"][0]["metrics"]
    assert (m["acceptance"], m["decided"]) == (0.0, 6)
    assert "not comparable (0.00 [0.00, 0.39] n=6 of 12 finished)" in text


def test_price_table_budget_and_grading_are_published(build, ledger):
    run = build.run(["t1", "t2", "t3", "t4"])
    build.arm(run, "A", ["P", "RP", "RRR", "P"], price={"input_per_mtok": 3.0, "output_per_mtok": 15.0}, tokens=10_000)
    build.arm(run, "B", ["P", "P", "P", "RRR"], price={"gpu_hour": 1.6, "utilization": 0.5}, busy_ms=900_000)
    build.grades(run, "A", 36_000)  # 7 graded attempts × 36 s = 252 CPU s
    build.grades(run, "B", 36_000)
    report, text, _ = report_of(ledger, run, grading_cpu_hour=0.10)
    a = report["runs"][0]["arms"][0]["cost"]
    assert a["grading_cpu_s"] == pytest.approx(252) and a["grading"] == pytest.approx(252 / 3600 * 0.10)
    tokens = 7 * (8000 * 3.0 + 2000 * 15.0) / 1e6
    assert a["model"] == pytest.approx(tokens) and a["total"] == pytest.approx(tokens + a["grading"])
    assert a["cpsp"] == pytest.approx(a["total"] / 3)
    assert "attempt budget: 3 attempts (3× one attempt's caps) per task on every arm" in text
    assert "prices: A $3 in / $15 out per million tokens; B $1.6 per GPU-hour (utilization 50% as configured)" in text
    assert "grading compute: $0.1 per CPU-hour" in text
    assert "+ grading $0.0070 (252.0 CPU s at $0.1/CPU-hour)" in text
    assert report["runs"][0]["published"]["max_attempts"] == {"A": 3, "B": 3}


def test_different_attempt_budgets_are_stated(build, ledger):
    run = build.run(["t1"])
    build.arm(run, "A", ["P"], max_attempts=1)
    build.arm(run, "B", ["P"], max_attempts=5)
    _, text, _ = report_of(ledger, run)
    assert (
        "UNEQUAL per-task budgets — A 1 attempt (1× one attempt's caps); B 5 attempts (5× one attempt's caps)" in text
    )
    assert "acceptance within each arm's budget [95% CI]" in text


def test_mixed_accounting_marks_qap(build, ledger):
    run = build.run(["t1", "t2"])
    build.arm(run, "A", ["P", "RP"])
    build.arm(run, "B", ["P", "P"])
    build.calls(run, "A", [("2026-11-30T10:00:00.000+00:00", 1000)] * 3, usage_source="reported")
    build.calls(run, "B", [("2026-11-30T10:00:00.000+00:00", 1000)] * 3, usage_source="estimated")
    report, text, _ = report_of(ledger, run)
    pub = report["runs"][0]["published"]
    assert pub["same_accounting"] is False
    assert pub["accounting"]["A"]["share_reported"] == 1.0 and pub["accounting"]["B"]["share_reported"] == 0.0
    assert "token accounting: A 100% reported, 0% estimated; B 0% reported, 100% estimated" in text
    assert "† QAP not comparable between arms" in text
    row = next(line for line in text.splitlines() if line.startswith("A  "))
    assert "n=2 †" in row
    assert "quota per patch" not in " ".join(reads(report).values())
    assert comparison(report)["qap_same_accounting"] is False


def test_concurrency_4_self_hosted_busy_is_the_union_of_calls(build, ledger):
    # four calls of 10 minutes at once, twice: 80 call-minutes, 20 busy minutes, in a 60-minute run
    run = build.run(["t1", "t2"])
    build.arm(run, "G", ["P", "P"], price={"gpu_hour": 1.2}, busy_ms=80 * 60_000)
    starts = ["2026-11-30T10:00:00.000+00:00", "2026-11-30T10:30:00.000+00:00"]
    build.calls(run, "G", [(s, 600_000) for s in starts for _ in range(4)])
    report, text, _ = report_of(ledger, run)
    arm = report["runs"][0]["arms"][0]
    assert arm["metrics"]["busy_ms"] == 20 * 60_000 and arm["metrics"]["busy_source"] == "calls"
    assert arm["cost"]["utilization"] == pytest.approx(20 / 60)  # not clamped at 1.0 (80 / 60)
    assert arm["cost"]["total"] == pytest.approx(1.2)  # the machine for the hour, once
    assert "endpoint busy 20.0 min (union of call intervals)" in text


def test_a_shared_server_is_billed_once_and_split_by_busy_time(build, ledger):
    # `quotabench demo`: two arms on one llama.cpp server, $0.10 an hour, a 60-minute run
    url = "http://127.0.0.1:8123/v1"
    run = build.run(["t1", "t2"])
    build.arm(run, "A", ["P", "R"], price={"gpu_hour": 0.10}, endpoint_url=url, busy_ms=1)
    build.arm(run, "B", ["P", "P"], price={"gpu_hour": 0.10}, endpoint_url=url, busy_ms=1)
    build.calls(run, "A", [("2026-11-30T10:00:00.000+00:00", 10 * 60_000)])
    build.calls(run, "B", [("2026-11-30T10:10:00.000+00:00", 30 * 60_000)])
    report, text, _ = report_of(ledger, run)
    a, b = (arm["cost"] for arm in report["runs"][0]["arms"])
    assert a["total"] + b["total"] == pytest.approx(0.10)  # not 2 × $0.10
    assert (a["machine_share"], b["machine_share"]) == (pytest.approx(0.25), pytest.approx(0.75))
    assert a["utilization"] == b["utilization"] == pytest.approx(40 / 60)
    assert list(a["shared_with"]) == ["B"] and report["runs"][0]["published"]["shared_servers"][0]["arms"] == ["A", "B"]
    assert f"shares {url} with B: 25% of the machine's $0.10" in text
    assert "billed once and split between them by busy time" in text


def test_shared_server_with_different_prices_is_reported_without_cost_saying_why(build, ledger):
    url = "http://127.0.0.1:8123/v1"
    run = build.run(["t1"])
    build.arm(run, "A", ["P"], price={"gpu_hour": 0.10}, endpoint_url=url, busy_ms=1000)
    build.arm(run, "B", ["P"], price={"gpu_hour": 0.20}, endpoint_url=url, busy_ms=1000)
    report = build_report(ledger, [run], resamples=100)
    assert report["with_cost"] is False and all(a["cost"] is None for a in report["runs"][0]["arms"])
    assert re.search("share the server .* give them the same price table", report["cost_left_out"])
    assert "cost columns left out" in render_report(report, "text")


def test_replicates_leave_a_censored_run_out_of_the_spread(build, ledger):
    tasks = [f"t{i}" for i in range(8)]
    runs = []
    plans_b = [["P"] * 6 + ["RRR"] * 2, ["P"] * 5 + ["RRR"] * 3, ["P"] * 2 + [""] * 6]  # run 3: B censored
    for i, plan_b in enumerate(plans_b):
        run = build.run(tasks, created=f"2026-11-0{i + 1}T09:00:00.000+00:00", session=f"s{i}")
        build.arm(run, "A", ["P"] * 4 + ["RRR"] * 4)
        build.arm(run, "B", plan_b, censored=i == 2)
        runs.append(run)
    report, text, _ = report_of(ledger, runs)
    rep = report["replicates"]
    b = rep["arms"]["B"]
    assert b["scores"] == [6, 5] and (b["median"], b["range"]) == (5.5, 1)  # not "median 5, range 4"
    assert b["left_out"] == [{"run_id": runs[2], "why": "cap hit: 6 of 8 tasks unfinished"}]
    assert rep["arms"]["A"]["scores"] == [4, 4, 4]
    assert rep["pass_at_k"]["k"] == 2 and rep["pass_at_k"]["n_tasks"] == 8  # same k, same tasks, both arms
    pk = b["pass_at_k"]["2"]
    assert pk["value"] == pytest.approx(6 / 8) and pk["lo"] <= pk["value"] <= pk["hi"]
    assert rep["arms"]["A"]["pass_at_k"]["1"]["value"] == pytest.approx(0.5)
    assert f"B: run {runs[2]} left out of the spread and pass@k — cap hit" in text
    assert "pass@2 0.75 [" in text and "over the same 8 tasks for every arm" in text
