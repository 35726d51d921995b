"""The run engine end to end against real scripted HTTP servers on loopback."""

import json
from collections import Counter

import pytest

from agent import events as ev
from agent.endpoints.scripted_server import ScriptedServer
from agent.ledger import Ledger
from agent.manifest import RUNTIME_VERSIONS, runtime_versions
from tests.conftest import FIXTURES
from tests.support.engine_helpers import arm_toml, run_sync, write_config

SMOKE = ["js-clamp-range", "py-word-count", "rs-saturating-sum"]


@pytest.fixture
def servers():
    a, b = ScriptedServer([FIXTURES / "smoke"]).start(), ScriptedServer([FIXTURES / "smoke"]).start()
    yield a, b
    a.stop()
    b.stop()


def test_paired_smoke_run_tokens_match_the_server_call_by_call(tmp_path, servers):
    a, b = servers
    cfg = write_config(
        tmp_path,
        [arm_toml("A", "solver", base_url=a.base_url), arm_toml("B", "wrong", base_url=b.base_url, protocol="text")],
    )
    engine, run_id, events = run_sync(cfg, tmp_path / "l.sqlite")
    ledger = Ledger(tmp_path / "l.sqlite")
    assert ledger.run(run_id)["status"] == "finished"
    for arm, server in (("A", a), ("B", b)):
        calls = ledger.query(
            "select prompt_tokens, completion_tokens, usage_source from calls where arm = ? and status = 'ok' "
            "and kind = 'attempt' order by rowid",
            [arm],
        )
        assert Counter((c["prompt_tokens"], c["completion_tokens"]) for c in calls) == Counter(server.usage_log)
        assert {c["usage_source"] for c in calls} == {"reported"}
        attempts_total = ledger.query("select sum(total_tokens) n from attempts where arm = ?", [arm])[0]["n"]
        assert attempts_total == sum(p + c for p, c in server.usage_log)
        assert (
            ledger.query("select tokens_used from arms where name = ? and run_id = ?", [arm, run_id])[0]["tokens_used"]
            == attempts_total
        )
    accepted = {(r["arm"], r["task_id"]) for r in ledger.attempts(run_id) if r["accepted"]}
    assert accepted == {("A", t) for t in SMOKE}
    b_classes = {r["failure_class"] for r in ledger.attempts(run_id) if r["arm"] == "B"}
    assert b_classes == {"reasoning"}
    assert all(r["attempt_no"] == 1 for r in ledger.attempts(run_id) if r["arm"] == "A")
    assert len([r for r in ledger.attempts(run_id) if r["arm"] == "B"]) == 2 * len(SMOKE)
    grades = ledger.query(
        "select g.verdict, g.isolation_json from grades g join attempts a on a.id = g.attempt_id where a.run_id = ?",
        [run_id],
    )
    assert len(grades) == 3 + 6
    # every native tool row joins to the call that asked for it; text-protocol actions have no call id
    tools = ledger.query(
        "select a.arm, t.call_id, t.tool from tool_calls t join attempts a on a.id = t.attempt_id where a.run_id = ?",
        [run_id],
    )
    asked = {
        (c["arm"], tc["id"], tc["name"])
        for c in ledger.query("select arm, tool_calls_json from calls where run_id = ?", [run_id])
        for tc in json.loads(c["tool_calls_json"] or "[]")
    }
    assert {r["arm"] for r in tools} == {"A", "B"}
    assert all((r["arm"], r["call_id"], r["tool"]) in asked for r in tools if r["arm"] == "A")
    assert all(r["call_id"] is None for r in tools if r["arm"] == "B")
    # both arms ran the same task order in the same window
    started = [(e.arm, e.task_id) for e in events if isinstance(e, ev.AttemptStarted)]
    assert [t for arm, t in started if arm == "A"] == SMOKE
    assert [t for arm, t in dict.fromkeys(started) if arm == "B"] == SMOKE


def test_server_self_description_is_recorded(tmp_path, servers):
    a, _ = servers
    cfg = write_config(tmp_path, [arm_toml("A", "solver", base_url=a.base_url)], tasks=["py-word-count"])
    _, run_id, _ = run_sync(cfg, tmp_path / "l.sqlite")
    arm = Ledger(tmp_path / "l.sqlite").arms(run_id)[0]
    assert arm["model_reported"] == "solver" and arm["system_fingerprint"] == "fp_scripted_1"
    assert "solver" in arm["models_listed_json"]
    run = Ledger(tmp_path / "l.sqlite").run(run_id)
    assert run["python_version"] and run["isolation_network"] in ("on", "off") and run["manifest_sha256"]
    assert {key: run[key] for key in RUNTIME_VERSIONS} == runtime_versions()  # asked while the run started


def test_low_cap_censors_one_arm_and_lists_untouched_tasks(tmp_path):
    cfg = write_config(tmp_path, [arm_toml("A", "solver", cap=2_500), arm_toml("B", "solver")])
    engine, run_id, events = run_sync(cfg, tmp_path / "l.sqlite")
    ledger = Ledger(tmp_path / "l.sqlite")
    arms = {a["name"]: a for a in ledger.arms(run_id)}
    assert arms["A"]["censored"] == 1 and arms["A"]["state"] == "censored"
    import json

    unfinished = json.loads(arms["A"]["unfinished_json"])
    assert unfinished and unfinished == [t for t in SMOKE if t in unfinished]
    assert SMOKE[-1] in unfinished
    assert arms["A"]["tokens_used"] <= 2_500
    assert arms["B"]["censored"] == 0 and arms["B"]["state"] == "finished"
    assert {r["task_id"] for r in ledger.attempts(run_id) if r["arm"] == "B" and r["accepted"]} == set(SMOKE)
    changed = [e for e in events if isinstance(e, ev.ArmStateChanged) and e.arm == "A"]
    assert changed[-1].state == "censored" and changed[-1].unfinished == tuple(unfinished)


def test_transport_faults_are_rows_and_exhaustion_is_harness_error(tmp_path):
    server = ScriptedServer([FIXTURES / "smoke"]).start()
    try:
        server.inject("500", "cut", "429:0")  # the first call of the run retries three times, then succeeds
        cfg = write_config(
            tmp_path,
            [arm_toml("A", "solver", base_url=server.base_url, max_retries=3)],
            tasks=["py-word-count"],
            max_attempts=1,
        )
        _, run_id, _ = run_sync(cfg, tmp_path / "l.sqlite")
        ledger = Ledger(tmp_path / "l.sqlite")
        statuses = [
            r["status"]
            for r in ledger.query(
                "select status from calls where run_id = ? and kind = 'attempt' order by rowid", [run_id]
            )
        ]
        assert statuses[:4] == ["http_5xx", "stream_cut", "http_429", "ok"]
        attempt = ledger.attempts(run_id)[0]
        assert attempt["transport_retries"] == 3 and attempt["accepted"] == 1
        cut = ledger.query("select * from calls where status = 'stream_cut'")[0]
        assert cut["usage_source"] == "estimated" and cut["prompt_tokens"] > 0

        server.inject(*["500"] * 10)
        cfg2 = write_config(
            tmp_path,
            [arm_toml("A", "solver", base_url=server.base_url, max_retries=2)],
            tasks=["py-word-count"],
            max_attempts=1,
        )
        _, run2, _ = run_sync(cfg2, tmp_path / "l.sqlite")
        attempt = ledger.attempts(run2)[0]
        assert attempt["end_reason"] == "harness_error" and attempt["failure_class"] == "harness_error"
        assert attempt["verdict"] is None and attempt["calls"] == 3
    finally:
        server.stop()


@pytest.mark.parametrize(
    "model,protocol,end_reason,failure_class",
    [
        ("solver", "text", "finished", "accepted"),
        ("malformed", "tools", "finished", "mechanics"),
        ("malformed", "text", "finished", "mechanics"),
        ("unparseable", "tools", "finished", "mechanics"),
        ("never-finish", "tools", "turn_limit", "mechanics"),
        ("chatty", "tools", "turn_limit", "mechanics"),
    ],
)
def test_scripted_behaviours_are_classified(tmp_path, model, protocol, end_reason, failure_class):
    cfg = write_config(
        tmp_path, [arm_toml("A", model, protocol=protocol)], tasks=["py-word-count"], max_attempts=1, max_turns=4
    )
    _, run_id, _ = run_sync(cfg, tmp_path / "l.sqlite")
    ledger = Ledger(tmp_path / "l.sqlite")
    attempt = ledger.attempts(run_id)[0]
    assert (attempt["end_reason"], attempt["failure_class"]) == (end_reason, failure_class)
    if model == "malformed":
        assert attempt["malformed_tool_calls"] >= 3
        errors = ledger.query("select error from tool_calls where attempt_id = ? and ok = 0", [attempt["id"]])
        assert len(errors) == attempt["malformed_tool_calls"]
    if model == "unparseable":
        findings = ledger.grade(attempt["id"])["mechanics_json"]
        assert "syntax_error" in findings or "missing_node" in findings


def test_retry_budget_parity_is_enforced(tmp_path):
    from agent.config import ConfigError, load_config

    cfg = write_config(tmp_path, [arm_toml("A", "solver", extra="max_attempts = 3\n"), arm_toml("B", "solver")])
    with pytest.raises(ConfigError, match="retry-budget parity"):
        load_config(cfg)


def test_token_time_and_context_limits_end_attempts_with_their_reason(tmp_path):
    server = ScriptedServer([FIXTURES / "smoke"], delay_s=0.3).start()
    try:

        def one(name, model, run_extra="", limits=None):
            cfg = write_config(
                tmp_path / name,
                [arm_toml("A", model, base_url=server.base_url)],
                tasks=["py-word-count"],
                max_attempts=1,
                max_turns=30,
            )
            text = cfg.read_text()
            for key, value in (limits or {}).items():
                text = text.replace(f"{key} = ", f"{key} = {value}\n# was ", 1)
            cfg.write_text(text)
            _, run_id, _ = run_sync(cfg, tmp_path / name / "l.sqlite")
            return Ledger(tmp_path / name / "l.sqlite").attempts(run_id)[0]

        (tmp_path / "t").mkdir()
        (tmp_path / "w").mkdir()
        (tmp_path / "c").mkdir()
        assert one("t", "never-finish", limits={"max_tokens_per_attempt": 1500})["end_reason"] == "token_limit"
        assert one("w", "never-finish", limits={"attempt_timeout_s": 1})["end_reason"] == "time_limit"
        server.inject("overflow")
        attempt = one("c", "solver")
        assert attempt["end_reason"] == "context_overflow"
        assert attempt["failure_class"] in ("mechanics", "reasoning")  # graded on what is on disk
    finally:
        server.stop()
