"""No model or endpoint output ends a run: every hostile payload of issue 12, sent by a real
loopback server, ends only its own attempt (mechanics or harness_error) while a healthy arm
beside it solves its task; token counts stay non-negative and bounded; deadlines hold."""

from __future__ import annotations

import json

import pytest

from agent.endpoints.response import MAX_USAGE
from agent.endpoints.scripted_server import ScriptedServer
from agent.ledger import Ledger
from tests.conftest import FIXTURES
from tests.support.engine_helpers import arm_toml, run_sync, write_config
from tests.support.hostile_server import (
    BODY_PAYLOADS,
    RAW_PAYLOADS,
    TEXT_PAYLOADS,
    TOOL_PAYLOADS,
    USAGE_PAYLOADS,
    HostileServer,
)

TASK = "py-word-count"


@pytest.fixture(scope="module")
def servers():
    with HostileServer() as hostile, ScriptedServer([FIXTURES / "smoke"]) as healthy:
        yield hostile, healthy


def _run(tmp_path, hostile, healthy, names, *, protocol="tools", limits=None, arm_extra="", preflight="force"):
    arms = [arm_toml("healthy", "solver", base_url=healthy.base_url)]
    arms += [
        arm_toml(name, name, base_url=hostile.base_url, protocol=protocol, extra=arm_extra + "stream = false\n")
        for name in names
    ]
    # preflight forced: its probes meet the hostile payloads too, and the run goes on whatever they find
    cfg = write_config(tmp_path, arms, tasks=[TASK], max_attempts=1, run_extra=f'preflight = "{preflight}"\n')
    text = cfg.read_text()
    for key, value in (limits or {}).items():
        text = text.replace(f"{key} = ", f"{key} = {value}\n# was ", 1)
    cfg.write_text(text)
    _, run_id, events = run_sync(cfg, tmp_path / "l.sqlite")
    ledger = Ledger(tmp_path / "l.sqlite")
    attempts = ledger.attempts(run_id)
    assert ledger.run(run_id)["status"] == "finished"
    healthy_rows = [a for a in attempts if a["arm"] == "healthy"]
    assert [a["failure_class"] for a in healthy_rows] == ["accepted"]  # the paired healthy arm goes on
    calls = ledger.query("select prompt_tokens p, completion_tokens c from calls where run_id = ?", [run_id])
    assert all(0 <= c["p"] < MAX_USAGE and 0 <= c["c"] < MAX_USAGE for c in calls)
    for arm in ledger.arms(run_id):
        assert arm["state"] == "finished" and 0 <= arm["tokens_used"] < MAX_USAGE * 100
        assert json.loads(arm["unfinished_json"]) == []
    size = sum(f.stat().st_size for f in tmp_path.glob("l.sqlite*"))
    assert size < 8 * 1024 * 1024, size  # huge payloads are not stored whole
    by_arm = {a["arm"]: a for a in attempts if a["arm"] != "healthy"}
    assert set(by_arm) == set(names)
    for name, row in by_arm.items():
        assert row["failure_class"] in ("mechanics", "harness_error"), (name, row["failure_class"], row["end_detail"])
        assert row["status"] == "done"
    return ledger, run_id, by_arm


@pytest.mark.slow
def test_hostile_tool_calls_are_refused_calls_the_model_sees(tmp_path, servers):
    ledger, _, by_arm = _run(tmp_path, *servers, list(TOOL_PAYLOADS))
    for name, row in by_arm.items():
        assert (row["end_reason"], row["failure_class"]) == ("finished", "mechanics"), name
        assert row["malformed_tool_calls"] == 1, name
        refused = ledger.query("select tool, error from tool_calls where attempt_id = ? and ok = 0", [row["id"]])
        assert len(refused) == 1 and refused[0]["error"].startswith("error: "), name
    assert "NUL" in ledger.query("select error from tool_calls where tool_calls.error like '%NUL%'")[0]["error"]


@pytest.mark.slow
def test_hostile_text_protocol_actions_are_refused_calls_too(tmp_path, servers):
    names = list(TEXT_PAYLOADS)
    ledger, _, by_arm = _run(tmp_path, *servers, names, protocol="text")
    for name, row in by_arm.items():
        assert (row["end_reason"], row["failure_class"]) == ("finished", "mechanics"), name
        if name != "text_fences":
            assert row["malformed_tool_calls"] == 1, name


@pytest.mark.slow
def test_bodies_of_the_wrong_shape_are_malformed_tries_then_harness_error(tmp_path, servers):
    names = list(BODY_PAYLOADS) + ["deep_body", "huge_body", "list_body"]
    ledger, _, by_arm = _run(tmp_path, *servers, names)
    for name, row in by_arm.items():
        assert (row["end_reason"], row["failure_class"]) == ("harness_error", "harness_error"), name
        statuses = [c["status"] for c in ledger.calls(row["id"])]
        assert statuses == ["malformed_json"] * 3, (name, statuses)  # retried like a malformed try
    errors = " ".join(c["error"] for c in ledger.calls(by_arm["huge_body"]["id"]))
    assert "bytes" in errors
    assert max(len(c["error"]) for c in ledger.query("select error from calls where error is not null")) <= 300


@pytest.mark.slow
def test_unbelievable_usage_is_estimated_never_negative_or_huge(tmp_path, servers):
    names = list(USAGE_PAYLOADS) + ["not_utf8"]
    ledger, _, by_arm = _run(tmp_path, *servers, names)
    for name in USAGE_PAYLOADS:
        row = by_arm[name]
        assert (row["end_reason"], row["failure_class"]) == ("finished", "mechanics"), name
        first = ledger.calls(row["id"])[0]
        assert first["status"] == "ok" and first["usage_source"] == "estimated", name
        assert 0 < first["prompt_tokens"] < 100_000, name
        assert row["total_tokens"] >= 0


@pytest.mark.slow
def test_a_trickling_endpoint_cannot_hold_an_attempt_past_its_limit(tmp_path, servers):
    # without preflight: its probes would wait out their own deadline first (test_preflight bounds that)
    ledger, _, by_arm = _run(
        tmp_path,
        *servers,
        ["trickle"],
        limits={"attempt_timeout_s": 10},
        arm_extra="request_timeout_s = 3\n",
        preflight="off",
    )
    row = by_arm["trickle"]
    assert row["end_reason"] == "time_limit", row["end_detail"]
    assert row["duration_ms"] < 12_000  # ended within its 10 s limit
    assert all(c["status"] == "read_timeout" for c in ledger.calls(row["id"]))


@pytest.mark.slow
def test_forty_run_tests_in_one_turn_stop_at_the_attempt_limit(tmp_path, servers):
    ledger, _, by_arm = _run(tmp_path, *servers, ["many_calls"], limits={"attempt_timeout_s": 5})
    row = by_arm["many_calls"]
    assert row["end_reason"] == "time_limit"
    assert row["duration_ms"] < 8_000  # not 65 s past the limit
    results = [t["result"] for t in ledger.tool_calls(row["id"])]
    assert len(results) < 40


def test_bounded_reads_and_shape_checks_in_isolation():
    from agent.endpoints.response import Reply, TryFailed, checked_usage, json_object

    assert json_object('{"a":' * 5_000 + "1" + "}" * 5_000) is None
    assert checked_usage({"prompt_tokens": -1, "completion_tokens": 1}) is None
    assert checked_usage({"prompt_tokens": 10**30}) is None
    assert checked_usage({"prompt_tokens": True, "completion_tokens": 0}) is None
    assert checked_usage({"prompt_tokens": 12, "completion_tokens": None}) == (12, 0)
    for body in BODY_PAYLOADS.values():
        with pytest.raises(TryFailed) as caught:
            reply = Reply()
            reply.absorb(body)
            if not reply.saw_choices:
                raise TryFailed("malformed_json", "no choices")
        assert caught.value.status == "malformed_json"
    assert set(RAW_PAYLOADS) >= {"deep_body", "huge_body"}


@pytest.mark.anyio
async def test_the_attempt_deadline_bounds_a_trickling_try_even_without_retries():
    import time

    from agent.endpoints.endpoint import ChatClient, DeadlinePassed, EndpointSettings

    with HostileServer() as server:
        client = ChatClient(EndpointSettings(server.base_url, "trickle", request_timeout_s=3, max_retries=0))
        started = time.monotonic()
        try:
            with pytest.raises(DeadlinePassed) as caught:
                await client.complete([{"role": "user", "content": "hi"}], deadline=started + 2.0)
        finally:
            await client.aclose()
    assert time.monotonic() - started < 3.5
    assert [t.status for t in caught.value.tries] == ["read_timeout"]
