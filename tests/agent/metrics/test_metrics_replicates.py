"""compare.py and replicates.py: paired arms, manifest refusal, seed 003's rotation and sessions."""

from __future__ import annotations

import pytest

from agent.metrics.compare import compare_arms
from agent.metrics.errors import ReportError
from agent.metrics.outcome import TaskOutcome
from agent.metrics.replicates import check_same_manifest, replicate_summary, schedule


def outcome(task_id, accepted, censored=False):
    return TaskOutcome(
        task_id,
        accepted,
        1 if accepted else None,
        "accepted" if accepted else ("censored" if censored else "reasoning"),
        not censored,
        1,
        10,
    )


def test_compare_excludes_tasks_censored_in_either_arm():
    a = [outcome("t1", True), outcome("t2", False), outcome("t3", False, censored=True), outcome("t4", False)]
    b = [outcome("t1", True), outcome("t2", True), outcome("t3", True), outcome("t4", False, censored=True)]
    c = compare_arms("A", a, "B", b, seed=1, resamples=1000)
    assert c.n_paired == 2 and c.excluded == ["t3", "t4"]
    assert c.bootstrap.gap == c.interval.gap == 0.5 and (c.mcnemar.only_a, c.mcnemar.only_b) == (0, 1)
    assert c.verdict.winner is None and "fewer than 6 decided pairs" in c.verdict.reasons


def test_compare_returns_none_when_nothing_pairs():
    assert compare_arms("A", [outcome("t1", False, True)], "B", [outcome("t1", True)], seed=1, resamples=10) is None


# seed 003 result 6: the champion's six runs over 56 tasks and their failure lists
SEED_003_FAILURES = [
    "Q03 Q05 Q25 Q45 Q50 Q51 Q52",
    "Q03 Q05 Q13 Q25 Q51 Q52",
    "Q03 Q05 Q13 Q25 Q51 Q52",
    "Q03 Q05 Q13 Q26 Q36 Q51",
    "Q01 Q03 Q05 Q13 Q25 Q46 Q49 Q51",
    "Q03 Q25 Q46 Q52",
]
TASKS = [f"Q{i:02d}" for i in range(1, 57)]


def seed_003_runs():
    runs = [
        {
            "id": f"r{i}",
            "created_utc": f"2026-11-0{i + 1}T09:00:00+00:00",
            "session_id": f"s{i}",
            "manifest_sha256": "m",
        }
        for i in range(6)
    ]
    outcomes = {
        f"r{i}": {"champion": [outcome(t, t not in failed.split()) for t in TASKS]}
        for i, failed in enumerate(SEED_003_FAILURES)
    }
    return runs, outcomes


def test_seed_003_rotation():
    runs, outcomes = seed_003_runs()
    arm = replicate_summary(runs, outcomes)["arms"]["champion"]
    assert arm["scores"] == [49, 50, 50, 50, 48, 52]
    assert (arm["median"], arm["range"]) == (50, 4)
    assert arm["failed_at_least_once"] == 13 and arm["failed_every_run"] == 1
    freq = {f["task_id"]: f["failed"] for f in arm["failure_frequency"]}
    assert freq["Q03"] == 6 and freq["Q51"] == freq["Q25"] == freq["Q05"] == 5
    assert freq["Q52"] == freq["Q13"] == 4 and freq["Q46"] == 2
    assert sum(v == 1 for v in freq.values()) == 6
    assert arm["failure_frequency"][0]["task_id"] == "Q03"
    assert arm["pass_at_k"]["1"]["value"] == pytest.approx(sum(arm["scores"]) / (6 * 56))
    assert arm["pass_at_k"]["6"]["value"] == pytest.approx(55 / 56)


def test_schedule_flags_sessions_and_days():
    # seed 003 result 5: r1 on another day, r2 and r3 back to back in one session
    runs = [
        {"id": "r1", "created_utc": "2026-11-01T09:00:00+00:00", "session_id": "a"},
        {"id": "r2", "created_utc": "2026-11-02T09:00:00+00:00", "session_id": "b"},
        {"id": "r3", "created_utc": "2026-11-02T10:00:00+00:00", "session_id": "b"},
    ]
    s = schedule(runs)
    assert (s["kind"], s["sessions"], s["days"]) == ("different days", 2, 2)
    one = schedule([dict(r, session_id="b", created_utc="2026-11-02T09:00:00+00:00") for r in runs])
    assert one["kind"] == "one session" and "back to back" in one["note"]
    same_day = [dict(r, session_id="b", created_utc="2026-11-02T09:00:00+00:00") for r in runs]
    restarted = schedule(same_day, {"r1": {"s1", "s2"}, "r2": {"s3", "s4"}, "r3": {"s5", "s6"}})
    assert restarted["kind"] == "servers restarted" and "freshly started" in restarted["note"]
    shared = schedule(same_day, {"r1": {"s1"}, "r2": {"s1"}, "r3": {"s5"}})  # one server kept between r1 and r2
    assert shared["kind"] == "one session"
    assert schedule(same_day, {"r1": {"s1"}, "r2": {"s2"}})["kind"] == "one session"  # r3's servers unknown


def test_manifest_mismatch_names_both_hashes_and_the_difference():
    a = {
        "id": "RUN_A",
        "manifest_sha256": "1" * 64,
        "config_json": '{"arms": {"B": {"model": "x"}}}',
        "harness_version": "0.1.0",
    }
    b = {
        "id": "RUN_B",
        "manifest_sha256": "2" * 64,
        "config_json": '{"arms": {"B": {"model": "y"}}}',
        "harness_version": "0.1.0",
    }
    tasks = [{"task_id": "t1", "files_sha256": "s"}]
    with pytest.raises(ReportError) as err:
        check_same_manifest([a, b], {"RUN_A": tasks, "RUN_B": tasks + [{"task_id": "t2", "files_sha256": "s"}]})
    message = str(err.value)
    assert "1" * 64 in message and "2" * 64 in message
    assert "config.arms.B.model: 'x' vs 'y'" in message and "1 only in the second" in message
    assert "\n" not in message
