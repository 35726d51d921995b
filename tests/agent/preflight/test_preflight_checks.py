"""Preflight's conclusions from observations: each rule, without a server (agent/preflight/checks.py and server_checks.py)."""

from __future__ import annotations

import json
from pathlib import Path

from agent.config import ArmConfig, LlamaCppSettings
from agent.endpoints.llamacpp import configured_flags, server_command
from agent.preflight import recorded_differences
from agent.preflight.checks import (
    Observed,
    Outcome,
    context_check,
    model_check,
    same_model,
    tools_check,
    usage_check,
)
from agent.preflight.server_checks import effective_flags, flags_check, gguf_check, slots_check, slots_verdict

OK = Outcome("ok", model="m", usage="reported", prompt_tokens=10, tool_calls=1)
OVERFLOW = Outcome("context_overflow", "maximum context length is 2000 tokens")


def arm(**kw) -> ArmConfig:
    return ArmConfig(name="A", model=kw.pop("model", "m"), base_url="http://x/v1", **kw)


def test_a_dated_snapshot_is_the_same_model_and_a_sibling_is_not():
    assert same_model("gpt-4.1-mini", "gpt-4.1-mini")
    assert same_model("gpt-4.1-mini", "gpt-4.1-mini-2025-04-14")
    assert same_model("qwen3-coder", "qwen3-coder-v1.5")
    assert not same_model("gpt-4.1-mini", "gpt-4.1-mini-high")  # a sibling, not a snapshot
    assert not same_model("qwen3.6-35b-a3b-mtp", "qwen3.6-35b-a3b-mtp@iq3_s")  # seed 003's fuzzy match
    assert not same_model("gpt-4.1", "gpt-4o")


def test_model_check_outcomes():
    assert model_check(arm(), "m", Observed(reply=OK)).status == "ok"
    other = model_check(arm(), "m", Observed(reply=Outcome("ok", model="gpt-4o")))
    assert (other.status, other.invalidating) == ("differs", True) and "gpt-4o" in other.observed
    unknown_model = Outcome("http_4xx", "HTTP 404: model 'm' does not exist")
    assert model_check(arm(), "m", Observed(reply=unknown_model)).invalidating
    not_found = Outcome("http_4xx", "HTTP 400: The model `m` is not available for your account")
    assert model_check(arm(), "m", Observed(reply=not_found)).invalidating
    a_parameter = Outcome("http_4xx", "HTTP 400: Unsupported parameter: 'max_tokens' is not supported with this model.")
    mentions = model_check(arm(), "m", Observed(reply=a_parameter))
    assert (mentions.status, mentions.invalidating) == ("unknown", False) and "max_tokens" in mentions.observed
    down = model_check(arm(), "m", Observed(reply=Outcome("connect_error", "refused")))  # nothing at base_url
    assert (down.status, down.invalidating) == ("differs", True) and "base_url" in down.fix
    garbage = model_check(arm(), "m", Observed(reply=Outcome("malformed_json", "choices is str")))
    assert (garbage.status, garbage.invalidating) == ("differs", True) and "chat completions" in garbage.fix
    busy = model_check(arm(), "m", Observed(reply=Outcome("http_5xx", "HTTP 503")))  # may pass: not a verdict
    assert (busy.status, busy.invalidating) == ("unknown", False)
    e500 = Outcome("http_5xx", "HTTP 500: boom")
    dead = model_check(arm(), "m", Observed(reply=e500, need_probe=e500, tools=[("auto", e500)]))
    assert (dead.status, dead.invalidating) == (
        "differs",
        True,
    ) and "3 of 3 probes failed (HTTP 500: boom)" in dead.observed
    empty = Outcome("empty_response", "HTTP 200 without choices")
    assert model_check(arm(), "m", Observed(reply=empty, need_probe=empty)).invalidating
    silent = model_check(arm(), "m", Observed(reply=Outcome("read_timeout", "no reply in 60 s")))  # probing stops
    assert silent.invalidating and "1 of 1 probe failed" in silent.observed
    one_ok = model_check(arm(), "m", Observed(reply=e500, need_probe=OK, tools=[("auto", e500)]))
    assert not one_ok.invalidating  # it answered once: the run may go
    limited = model_check(arm(), "m", Observed(reply=e500, need_probe=Outcome("http_429", "HTTP 429: slow down")))
    assert not limited.invalidating  # a rate limit is not a dead endpoint
    unlisted = model_check(arm(), "m", Observed(reply=OK, listed=["a", "b"]))
    assert unlisted.status == "ok" and "does not list it" in unlisted.observed
    gguf = model_check(arm(), "m", Observed(reply=OK, listed=["/models/x.gguf"]), gguf_path="/models/y.gguf")
    assert gguf.invalidating and "/models/x.gguf" in gguf.observed


def test_context_check_rules():
    limit = arm(context_tokens=4096)
    fits = Observed(need=1500, near=(3900, OK), over=(5120, OVERFLOW), ratio=1.0)
    assert context_check(limit, fits).status == "ok"
    smaller = Observed(need=1500, near=(3900, OVERFLOW), need_probe=OK, ratio=1.0)
    check = context_check(limit, smaller)
    assert (check.status, check.invalidating) == ("differs", False) and "holds what the suite needs" in check.observed
    too_small = Observed(need=1500, near=(3900, OVERFLOW), need_probe=OVERFLOW, ratio=1.0)
    assert context_check(limit, too_small).invalidating
    larger = Observed(need=1500, near=(3900, OK), over=(5120, OK), ratio=1.0)
    assert context_check(limit, larger).status == "differs" and not context_check(limit, larger).invalidating
    not_as_overflow = Observed(need=1500, near=(3900, OK), over=(5120, Outcome("http_5xx", "boom")), ratio=1.0)
    assert "harness error" in context_check(limit, not_as_overflow).fix
    configured_too_small = arm(context_tokens=1024)
    assert context_check(configured_too_small, Observed(need=1500, ratio=1.0)).invalidating
    unknown = context_check(arm(), Observed(need=1500, need_probe=OK, ratio=None))
    assert unknown.status == "unknown" and "holds" in unknown.observed and "estimated" in unknown.observed


def test_usage_and_tools_checks():
    assert usage_check(arm(stream=False), Observed()).status == "ok"
    estimated = Outcome("ok", model="m", usage="estimated")
    assert usage_check(arm(), Observed(reply=estimated)).status == "differs"
    assert tools_check(arm(protocol="text"), Observed()).status == "ok"
    none = Outcome("ok", tool_calls=0)
    first = tools_check(arm(), Observed(tools=[("auto (not sent)", OK)]))
    assert first.status == "ok"
    later = tools_check(arm(), Observed(tools=[("auto (not sent)", none), ("required", OK)]))
    assert (later.status, later.invalidating) == ("differs", False) and "required" in later.fix
    never = tools_check(arm(), Observed(tools=[("auto (not sent)", none), ("required", none), ("function x", none)]))
    assert never.invalidating and "protocol" in never.fix
    unreachable = tools_check(arm(), Observed(tools=[("auto (not sent)", Outcome("connect_error", "down"))]))
    assert (unreachable.status, unreachable.invalidating) == ("unknown", False)


def test_the_tools_advice_only_when_the_tool_request_itself_was_refused():
    key = Outcome("http_4xx", "HTTP 401: invalid api key")
    tried = [("auto (not sent)", key), ("required", key)]
    refused = tools_check(arm(), Observed(reply=key, tools=tried))  # the plain probe failed too
    assert (refused.status, refused.invalidating) == ("unknown", False) and "invalid api key" in refused.observed
    assert "protocol" not in refused.fix
    auth = tools_check(arm(), Observed(reply=OK, tools=tried))  # 401/403/404 refuse the caller, not tools
    assert not auth.invalidating and "protocol" not in auth.fix
    small = [("auto (not sent)", OVERFLOW), ("required", OVERFLOW)]
    overflow = tools_check(arm(), Observed(reply=OK, tools=small))
    assert overflow.status == "unknown" and "context" in overflow.fix and "protocol" not in overflow.fix
    param = Outcome("http_4xx", "HTTP 400: tools are not supported by this model")
    rejected = tools_check(arm(), Observed(reply=OK, tools=[("auto (not sent)", param), ("required", param)]))
    assert rejected.invalidating and "protocol" in rejected.fix  # the tool request itself refused


def test_two_calls_at_once_queue_or_overlap():
    assert slots_verdict([(200, 205, 410), (210, 200, 405), (190, 200, 390)]) == "queues"
    assert slots_verdict([(200, 205, 230), (210, 200, 260), (200, 200, 210)]) == "overlaps"
    assert slots_verdict([(200, 205, 410), (210, 200, 405), (200, 200, 230)]) == "queues"  # one disturbed pair
    assert slots_verdict([(200, 205, 290), (210, 200, 280), (200, 200, 285)]) is None  # in between: unclear
    assert slots_verdict([(3, 4, 9)]) is None  # too fast to tell
    assert slots_verdict([]) is None
    serial = [(200, 205, 410), (210, 200, 405), (190, 200, 390)]
    queued = slots_check(arm(max_concurrency=2), Observed(pairs=serial))
    assert queued.status == "differs" and "max_concurrency = 1" in queued.fix
    assert slots_check(arm(), Observed(pairs=serial)).status == "ok"


def test_gguf_hash_and_server_flags():
    sha = "a" * 64
    assert gguf_check({"gguf_sha256": sha}, None).status == "ok"
    assert gguf_check({"gguf_sha256": sha}, sha).status == "ok"
    assert gguf_check({"gguf_sha256": sha}, "b" * 64).invalidating
    settings = LlamaCppSettings(model_path="m.gguf", n_ctx=2048, extra_args=("--n_ctx", "1024"))
    argv = server_command(Path("m.gguf"), 1234, settings)
    assert effective_flags(argv)["--n_ctx"] == "1024"  # the last occurrence wins
    overridden = flags_check(configured_flags("m.gguf", settings), argv)
    assert overridden.status == "differs" and "--n_ctx 1024" in overridden.observed
    clean = LlamaCppSettings(model_path="m.gguf", n_ctx=2048)
    assert flags_check(configured_flags("m.gguf", clean), server_command(Path("m.gguf"), 1, clean)).status == "ok"
    assert flags_check(configured_flags("m.gguf", clean), None).status == "unknown"


def test_a_llama_server_listed_under_its_alias_is_the_configured_file():
    import anyio

    from agent.endpoints.endpoint import ChatClient, EndpointSettings
    from agent.preflight.run import checks_for
    from agent.run.arms import ArmRuntime
    from agent.run.quota import Quota

    settings = LlamaCppSettings(model_path="m.gguf", extra_args=("--model_alias", "local"))
    cfg = ArmConfig(name="A", kind="llamacpp", llamacpp=settings)
    argv = server_command(Path("/x/m.gguf"), 1, settings)
    client = ChatClient(EndpointSettings("http://127.0.0.1:9/v1", "local"))
    runtime = ArmRuntime(cfg, client, Quota(10), constants={"gguf_path": "/x/m.gguf", "server_args": argv[3:]})
    checks = {c.name: c for c in checks_for(runtime, Observed(reply=OK, listed=["local"]))}
    assert checks["model"].status == "ok"
    other = {c.name: c for c in checks_for(runtime, Observed(reply=OK, listed=["/x/other.gguf"]))}
    assert other["model"].invalidating
    anyio.run(client.aclose)


def test_after_a_refused_live_run_every_difference_is_one_line_marked_when_it_invalidates():
    checks = [
        model_check(arm(), "m", Observed(reply=Outcome("ok", model="gpt-4o"))),
        model_check(arm(), "m", Observed(reply=OK)),
    ]
    rows = [{"arm": "A", "checks_json": json.dumps([c.to_dict() for c in checks])}, {"arm": "B", "checks_json": None}]
    assert recorded_differences(rows) == [f"preflight arm A model differs!: {checks[0].observed} — {checks[0].fix}"]
    assert recorded_differences([]) == ["preflight: no check differed"]
