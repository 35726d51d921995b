"""The ledger's row builders write real rows into a migrated SQLite file: every column they name
exists, and what is written reads back; the named reads answer as the per-row reads they replace."""

from __future__ import annotations

import pytest

from agent.endpoints.endpoint import CallTry, ToolCallRequest
from agent.ledger import Ledger, new_id, rows
from agent.ledger import attempt_rows as ar
from agent.ledger.live_reads import task_attempts_in_full
from agent.ledger.ops import Insert, InsertAll, Update
from agent.ledger.recovery import arm_tokens_used, recover
from verifiers.grading import GradeResult


def _try(retry_index: int, prompt: int, completion: int) -> CallTry:
    return CallTry(
        retry_index=retry_index,
        started_utc="2026-12-02T00:00:00.000+00:00",
        latency_ms=12,
        status="ok",
        http_status=200,
        prompt_tokens=prompt,
        completion_tokens=completion,
        usage_source="reported",
        model_reported="m",
        system_fingerprint=None,
        finish_reason="tool_calls",
        error=None,
        text="hello",
        tool_calls=(ToolCallRequest("c1", "read_file", '{"path": "a.py"}'),),
    )


def _run(ledger: Ledger) -> tuple[str, list[str], dict[str, str]]:
    """A run of two arms with two attempts each on one task, written through the builders only."""
    run_id = new_id()
    arm_ids = {"A": new_id(), "B": new_id()}
    ops = [
        rows.run_opened(run_id, manifest_sha256="m", config_json="{}"),
        InsertAll("tasks", [{"run_id": run_id, "task_id": "t1", "position": 0}]),
        *(rows.arm_opened(arm_ids[n], run_id, n, kind="llamacpp", cap_tokens=1000) for n in arm_ids),
    ]
    ledger.batch(ops)
    attempt_ids = []
    for name, arm_id in arm_ids.items():
        for no in (1, 2):
            key = ar.AttemptKey(new_id(), run_id, arm_id, name, "t1", no)
            attempt_ids.append(key.id)
            call = new_id()
            ledger.batch(
                [
                    ar.attempt_started(key, "attempt", None),
                    ar.call_in_flight(key, call, 1, 500, "attempt"),
                    ar.tool_call(key.id, "c1", 1, "read_file", "{}", True, "text", "a.py"),
                    ar.tool_call(key.id, "c2", 1, "run_tests", "{}", False, "boom", None),
                ]
            )
            ledger.batch(
                [
                    ar.call_finished(
                        key,
                        call,
                        _try(0, 100, 10),
                        turn=1,
                        reserved=500,
                        server_session_id=None,
                        stage="attempt",
                        in_flight_row=True,
                    ),
                    ar.call_finished(
                        key,
                        new_id(),
                        _try(1, 50, 5),
                        turn=1,
                        reserved=500,
                        server_session_id=None,
                        stage="attempt",
                        in_flight_row=False,
                    ),
                    ar.attempt_update(
                        key.id, prompt_tokens=150, completion_tokens=15, total_tokens=165, status="ended"
                    ),
                ]
            )
            grade = GradeResult("pass" if no == 2 else "fail", 0, 30, 3, 0, "ok", {"sandbox": "bwrap"})
            ledger.batch([ar.grade_row(key.id, grade, []), ar.attempt_classed(key.id, "accepted", no == 2)])
    return run_id, attempt_ids, arm_ids


def test_every_builder_writes_columns_the_schema_has_and_they_read_back(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    run_id, attempt_ids, arm_ids = _run(ledger)
    ledger.batch(
        [
            rows.arm_censored(arm_ids["A"], "cap reached", "cap"),
            rows.arm_finished(arm_ids["B"], "finished", ["t1"], 330, 48, 0),
            rows.submission(run_id, "A", "t1", strategy="parallel", candidates=2, submitted_attempt_id=attempt_ids[1]),
            rows.submitted(attempt_ids[1], True),
            rows.run_ended(run_id, "finished", 0.5),
        ]
    )
    preflight = new_id()
    ledger.batch(
        [
            rows.preflight_started(preflight, run_id, "A", "http://127.0.0.1:1", "m", forced=False),
            ar.preflight_call(run_id, "A", preflight, "tools", None, _try(0, 7, 3)),
            rows.preflight_ended(preflight, "ok", "[]", prompt_tokens=7, completion_tokens=3, calls=1, duration_ms=5),
        ]
    )
    assert ledger.query("select verdict, calls from preflights where id = ?", [preflight]) == [
        {"verdict": "ok", "calls": 1}
    ]
    skip = ar.AttemptKey(new_id(), run_id, arm_ids["B"], "B", "t1", 3)
    ledger.batch(ar.environment_skip(skip, "runtime_missing", "environment", "no cargo"))
    assert ledger.run(run_id)["status"] == "finished"
    arms = {a["name"]: a for a in ledger.arms(run_id)}
    assert (arms["A"]["censored"], arms["A"]["censored_by"], arms["B"]["unfinished_json"]) == (1, "cap", '["t1"]')
    first = ledger.calls(attempt_ids[0])
    assert [(c["status"], c["prompt_tokens"], c["retry_index"]) for c in first] == [("ok", 100, 0), ("ok", 50, 1)]
    assert [t["ok"] for t in ledger.tool_calls(attempt_ids[0])] == [1, 0]
    assert ledger.grade(skip.id)["environment"] == "no cargo"
    classes = {a["id"]: (a["failure_class"], a["accepted"], a["status"]) for a in ledger.attempts(run_id)}
    assert classes[attempt_ids[1]] == ("accepted", 1, "done") and classes[skip.id] == ("environment", 0, "done")
    assert ledger.query("select submitted from attempts where id = ?", [attempt_ids[1]])[0]["submitted"] == 1


def test_an_update_of_a_missing_row_fails_unless_it_may_be_missing(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    ledger.batch([ar.call_lost("NEVER-WRITTEN", 10)])  # a call a kill left without a row
    with pytest.raises(LookupError, match="no attempts row"):
        ledger.batch([ar.attempt_update("NEVER-WRITTEN", calls=1)])
    with pytest.raises(TypeError, match="not a ledger write"):
        ledger.batch([("insert", "runs", {"id": "R"})])  # type: ignore[list-item]
    assert isinstance(rows.run_update("R", status="x"), Update) and isinstance(rows.run_opened("R"), Insert)


def test_the_live_modal_read_matches_reading_attempt_by_attempt(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    run_id, attempt_ids, _ = _run(ledger)
    got = task_attempts_in_full(ledger, run_id, "t1")
    assert sorted(r["id"] for r in got) == sorted(attempt_ids)
    for row in got:
        assert row["tools"] == ledger.tool_calls(row["id"]) and row["grade"] == ledger.grade(row["id"])
    assert task_attempts_in_full(ledger, run_id, "no-such-task") == []


def test_resume_reads_each_arms_tokens_in_one_query_as_the_per_arm_sums(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    run_id, _, arm_ids = _run(ledger)
    recover(ledger, run_id)  # totals become the calls' sums
    used = arm_tokens_used(ledger, run_id)
    for arm_id in arm_ids.values():
        expected = ledger.query("select sum(total_tokens) n from attempts where arm_id = ?", [arm_id])[0]["n"]
        assert used[arm_id] == expected == 2 * 165
