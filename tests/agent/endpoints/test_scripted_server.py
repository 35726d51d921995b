"""The scripted OpenAI-compatible server: wire format, usage reports, errors, the CLI, and
each scripted model, over HTTP (with the real ChatClient) and as pure scripts on every task."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from agent import QuotabenchError
from agent.endpoints.endpoint import ChatClient, EndpointSettings
from agent.endpoints.scripted_http import FINGERPRINT
from agent.endpoints.scripted_models import (
    SCRIPTS,
    TaskFiles,
    first_source_file,
    solver,
    truncate_mid_line,
    unparseable,
    wrong,
)
from agent.endpoints.scripted_server import ScriptedServer, default_suites
from agent.endpoints.tokens import estimate_messages_tokens, estimate_reply_tokens
from agent.run.text_protocol import parse_actions
from verifiers.mechanics import grammar_for, parses_clean
from verifiers.tasks import load_suite

ROOT = Path(__file__).resolve().parents[3]
SMOKE = ROOT / "fixtures" / "smoke"
TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}}
    for n in ("list_files", "read_file", "write_file", "edit_file", "run_tests", "finish")
]
ALL_TASKS = [TaskFiles.from_task(t) for suite in default_suites() for t in load_suite(suite).tasks]


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def server():
    with ScriptedServer([SMOKE]) as s:
        yield s


def first_user(task_id: str) -> dict:
    return {"role": "user", "content": f"Implement the feature described below.\n\nTask id: {task_id}\n"}


async def drive(
    server: ScriptedServer, model: str, task_id: str, *, native: bool, stream: bool = True, max_turns: int = 6
) -> list[list[tuple[str, object]]]:
    """Play the conversation the agent loop would, returning each turn's actions."""
    client = ChatClient(EndpointSettings(server.base_url, model, stream=stream))
    messages, turns = [{"role": "system", "content": "You are a coding agent."}, first_user(task_id)], []
    try:
        for _ in range(max_turns):
            result = await client.complete(messages, TOOLS if native else None)
            if native:
                actions = [(c.name, c.arguments) for c in result.tool_calls]
                messages.append(
                    {
                        "role": "assistant",
                        "content": result.text or None,
                        "tool_calls": [
                            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                            for c in result.tool_calls
                        ],
                    }
                )
                messages += [{"role": "tool", "tool_call_id": c.id, "content": "done"} for c in result.tool_calls]
            else:
                actions = [(a.tool, a.error or a.arguments) for a in parse_actions(result.text)]
                messages += [
                    {"role": "assistant", "content": result.text},
                    {"role": "user", "content": "Results:\ndone"},
                ]
            turns.append(actions)
            if any(name == "finish" for name, _ in actions):
                break
    finally:
        await client.aclose()
    return turns


@pytest.mark.anyio
@pytest.mark.parametrize("native, stream", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("task_id", ["py-word-count", "rs-saturating-sum"])
async def test_solver_plays_list_write_reference_test_finish(server, native, stream, task_id):
    turns = await drive(server, "solver", task_id, native=native, stream=stream)
    assert [[name for name, _ in turn] for turn in turns] == [["list_files"], ["write_file"], ["run_tests"], ["finish"]]
    written = turns[1][0][1]
    args = json.loads(written) if native else written
    task = server.tasks[task_id]
    assert args == {"path": next(iter(task.reference)), "content": next(iter(task.reference.values()))}


@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: t.id)
def test_scripts_on_every_fixture_task(task):
    # solver: writes exactly the reference, all in one turn
    assert [a.tool for a in solver(task, 0).actions] == ["list_files"]
    assert {a.arguments["path"]: a.arguments["content"] for a in solver(task, 1).actions} == task.reference
    assert [a.tool for a in solver(task, 2).actions + solver(task, 3).actions] == ["run_tests", "finish"]
    # wrong: the negative patch, or a harmless comment on the first source file; never the reference
    writes = {a.arguments["path"]: a.arguments["content"] for a in wrong(task, 0).actions}
    assert writes and writes != task.reference
    if task.negative:
        assert writes == task.negative
    else:
        ((path, content),) = writes.items()
        assert path == first_source_file(task) and content.startswith(task.workspace[path].rstrip("\n"))
        assert content.endswith("reviewed\n") and parses_clean(content.encode(), grammar_for(path))
    assert [a.tool for a in wrong(task, 1).actions] == ["finish"]
    # unparseable: the first reference file cut mid-line, so it no longer parses
    (write,) = unparseable(task, 0).actions
    path, reference = sorted(task.reference.items())[0]
    cut = write.arguments["content"]
    assert write.arguments["path"] == path and reference.startswith(cut) and not cut.endswith("\n")
    assert 0 < len(cut) < len(reference)
    if grammar_for(path):
        assert parses_clean(reference.encode(), grammar_for(path))
        assert not parses_clean(cut.encode(), grammar_for(path))


def test_truncate_mid_line_without_brackets():
    assert truncate_mid_line("a = 1\nbbbbbb = 2\n") == "a = 1\nbbbbb"


@pytest.mark.anyio
async def test_malformed_model_natively_and_in_text(server):
    native = await drive(server, "malformed", "py-word-count", native=True)
    bad_json, unknown, missing = native[0]
    with pytest.raises(ValueError):
        json.loads(bad_json[1])
    assert unknown[0] == "delete_file" and missing == ("read_file", "{}")
    assert [name for name, _ in native[1]] == ["finish"]
    text = await drive(server, "malformed", "py-word-count", native=False)
    edit, unknown, read = text[0]
    assert edit[0] == "edit_file" and "OLD" in edit[1]  # the parser's error for a body without markers
    assert unknown[0] == "delete_file"  # `name key=value` is an action: an unknown one
    assert read == ("read_file", {})
    assert "delete_file" in server.requests[-1]["messages"][2]["content"]


@pytest.mark.anyio
async def test_never_finish_and_chatty(server):
    never = await drive(server, "never-finish", "py-word-count", native=True, max_turns=5)
    assert never == [[("list_files", "{}")]] * 5
    late = SCRIPTS["never-finish"](server.tasks["py-word-count"], 500)
    assert [a.tool for a in late.actions] == ["list_files"]
    for native in (True, False):
        chatty = await drive(server, "chatty", "py-word-count", native=native, max_turns=3)
        assert chatty == [[], [], []]


@pytest.mark.anyio
async def test_wrong_in_text_protocol_writes_the_negative_patch(server):
    turns = await drive(server, "wrong", "rs-saturating-sum", native=False)
    assert turns[0] == [
        ("write_file", {"path": "src/lib.rs", "content": server.tasks["rs-saturating-sum"].negative["src/lib.rs"]})
    ]
    assert turns[1] == [("finish", {})]


def test_streamed_wire_format_and_reported_usage(server):
    body = {
        "model": "solver",
        "messages": [first_user("py-word-count")],
        "tools": TOOLS,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    with httpx.stream("POST", f"{server.base_url}/chat/completions", json=body) as response:
        assert response.headers["content-type"] == "text/event-stream"
        lines = [line for line in response.iter_lines() if line]
    assert all(line.startswith("data: ") for line in lines) and lines[-1] == "data: [DONE]"
    chunks = [json.loads(line[6:]) for line in lines[:-1]]
    assert all(c["model"] == "solver" and c["system_fingerprint"] == FINGERPRINT for c in chunks)
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert chunks[-1]["choices"] == [] and chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    usage = chunks[-1]["usage"]
    assert usage["prompt_tokens"] == estimate_messages_tokens(body["messages"], TOOLS)
    assert usage["completion_tokens"] == estimate_reply_tokens(
        "Let me look at the workspace first.", [("list_files", "{}")]
    )
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert list(server.usage_log) == [(usage["prompt_tokens"], usage["completion_tokens"])]
    assert list(server.requests) == [body] and server.served == 1


def test_stream_without_include_usage_reports_nothing(server):
    body = {"model": "solver", "messages": [first_user("py-word-count")], "stream": True}
    with httpx.stream("POST", f"{server.base_url}/chat/completions", json=body) as response:
        chunks = [json.loads(line[6:]) for line in response.iter_lines() if line and line != "data: [DONE]"]
    assert all("usage" not in c for c in chunks) and not server.usage_log


def test_whole_response_format(server):
    body = {"model": "solver", "messages": [first_user("py-word-count"), {"role": "assistant", "content": "x"}]}
    data = httpx.post(f"{server.base_url}/chat/completions", json=body).json()
    assert data["object"] == "chat.completion" and data["system_fingerprint"] == FINGERPRINT
    (choice,) = data["choices"]
    assert choice["finish_reason"] == "stop" and "tool_calls" not in choice["message"]
    assert parse_actions(choice["message"]["content"])[0].tool == "write_file"
    assert list(server.usage_log) == [(data["usage"]["prompt_tokens"], data["usage"]["completion_tokens"])]


def test_models_and_request_errors(server):
    models = httpx.get(f"{server.base_url}/models").json()
    assert [m["id"] for m in models["data"]] == sorted(SCRIPTS) and models["object"] == "list"
    url = f"{server.base_url}/chat/completions"
    unknown_model = httpx.post(url, json={"model": "gpt-9", "messages": [first_user("py-word-count")]})
    assert unknown_model.status_code == 404 and "solver" in unknown_model.json()["error"]["message"]
    no_task_line = httpx.post(url, json={"model": "solver", "messages": [{"role": "user", "content": "hi"}]})
    assert no_task_line.status_code == 400 and "Task id" in no_task_line.json()["error"]["message"]
    unknown_task = httpx.post(url, json={"model": "solver", "messages": [first_user("py-nope")]})
    assert unknown_task.status_code == 400 and "py-nope" in unknown_task.json()["error"]["message"]
    assert httpx.get(f"{server.base_url}/nowhere").status_code == 404
    assert not server.usage_log


def test_injected_faults_are_one_per_request_and_validated(server):
    server.inject("500", "overflow")
    url, body = f"{server.base_url}/chat/completions", {"model": "solver", "messages": [first_user("py-word-count")]}
    assert [httpx.post(url, json=body).status_code for _ in range(3)] == [500, 400, 200]
    server.inject("429:7")
    limited = httpx.post(url, json=body)
    assert limited.status_code == 429 and limited.headers["retry-after"] == "7"
    with pytest.raises(QuotabenchError, match="unknown fault 'teapot' — use one of 429, 500"):
        server.inject("teapot")


def test_default_suites_cover_the_fixtures():
    server = ScriptedServer()
    assert {"py-word-count", "rs-saturating-sum"} <= set(server.tasks)
    with pytest.raises(QuotabenchError, match="not a folder"):
        ScriptedServer([ROOT / "fixtures" / "no-such-suite"])


def test_cli_serves_in_the_foreground():
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent.endpoints.scripted_server", "--port", "0", "--suite", str(SMOKE)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        base_url = line.split()[3]
        assert (
            base_url.startswith("http://127.0.0.1:")
            and base_url.endswith("/v1")
            and f"{len(load_suite(SMOKE).tasks)} tasks" in line
        )
        assert [m["id"] for m in httpx.get(f"{base_url}/models").json()["data"]] == sorted(SCRIPTS)
    finally:
        proc.terminate()
        proc.wait(timeout=5)


# -- misreport switches and session seeds (issue 17) ------------------------------------------------


def _post(server: ScriptedServer, body: dict) -> httpx.Response:
    return httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=10)


def test_misreport_switches_each_change_what_the_server_says_or_does():
    body = {"model": "solver", "messages": [first_user("py-word-count")], "tools": TOOLS}
    with ScriptedServer([SMOKE], report_model="gpt-4o") as s:
        assert _post(s, body).json()["model"] == "gpt-4o"
    with ScriptedServer([SMOKE], tool_calls=False) as s:
        message = _post(s, body).json()["choices"][0]["message"]
        assert "tool_calls" not in message and parse_actions(message["content"])[0].tool == "list_files"
    with ScriptedServer([SMOKE], context_limit=50) as s:
        refused = _post(s, body)
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "context_length_exceeded"
        assert "maximum context length is 50 tokens" in refused.json()["error"]["message"]
    with ScriptedServer([SMOKE], stream_usage=False) as s:
        streamed = {**body, "stream": True, "stream_options": {"include_usage": True}}
        with httpx.stream("POST", f"{s.base_url}/chat/completions", json=streamed) as response:
            chunks = [json.loads(line[6:]) for line in response.iter_lines() if line and line != "data: [DONE]"]
        assert chunks and all("usage" not in c for c in chunks)
        assert "usage" in _post(s, body).json()  # not streamed: still reported


@pytest.mark.anyio
async def test_serial_slots_queue_concurrent_requests():
    import anyio

    body = {"model": "solver", "messages": [first_user("py-word-count")]}
    for slots, peak in ((1, 1), (None, 2)):
        with ScriptedServer([SMOKE], slots=slots, delay_s=0.2) as s:
            async with httpx.AsyncClient(timeout=10) as http, anyio.create_task_group() as tg:
                for _ in range(2):
                    tg.start_soon(functools.partial(http.post, f"{s.base_url}/chat/completions", json=body))
            assert s.peak_concurrency == peak


def test_a_session_seed_repeats_within_a_session_and_varies_after_a_restart():
    body = {"model": "coin", "messages": [first_user("py-word-count")], "tools": TOOLS}
    seeds, replies = {}, {}
    for seed in (1, 2, 3):
        with ScriptedServer([SMOKE], session_seed=seed) as s:
            first, again = (_post(s, body).json()["choices"][0]["message"] for _ in range(2))
            assert first["content"] == again["content"]  # deterministic within the session
            assert [c["function"] for c in first["tool_calls"]] == [c["function"] for c in again["tool_calls"]]
            replies[seed] = first["content"]
            seeds[seed] = s.session_seed
    assert seeds == {1: 1, 2: 2, 3: 3} and len(set(replies.values())) > 1  # a new session, another wording
    with ScriptedServer([SMOKE], session_seed="random") as s:
        drawn = s.session_seed
        s.stop()
        s.start()
        assert s.session_seed != drawn  # "random": a new seed at every start
    with ScriptedServer([SMOKE]) as s:  # no seed: the canonical replies
        assert _post(s, body).json()["choices"][0]["message"]["content"] == "Let me look at the workspace first."


def test_coin_solves_or_answers_wrong_by_the_session_seed():
    from agent.endpoints.scripted_models import coin, coin_accepts, play

    task = next(t for t in ALL_TASKS if t.id == "py-word-count")
    for seed in range(8):
        writes = play("coin", task, 1, seed).actions
        expected = (solver if coin_accepts(seed, task.id) else wrong)(task, 1).actions
        assert writes == expected
    assert {coin_accepts(s, "py-word-count") for s in range(16)} == {True, False}
    assert coin(task, 1) == play("coin", task, 1)  # seed None = seed 0's toss, canonical text


def test_a_preflight_probe_gets_a_short_reply_and_never_a_fault(server):
    server.inject("500")
    probe = {
        "model": "solver",
        "messages": [{"role": "user", "content": "quotabench preflight: reply OK"}],
        "tools": TOOLS,
        "tool_choice": {"type": "function", "function": {"name": "write_file"}},
    }
    reply = _post(server, probe).json()
    assert reply["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "write_file"
    untooled = {k: v for k, v in probe.items() if k != "tools"}
    assert _post(server, untooled).json()["choices"][0]["message"]["content"] == "OK"
    assert (
        _post(server, {"model": "solver", "messages": [first_user("py-word-count")]}).status_code == 500
    )  # the task got it
    assert not server.usage_log and len(server.probe_log) == 2
    assert len(server.probes) == 2 and len(server.requests) == 1


def test_cli_takes_the_misreport_switches():
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agent.endpoints.scripted_server",
            "--port",
            "0",
            "--suite",
            str(SMOKE),
            "--report-model",
            "other",
            "--no-tool-calls",
            "--slots",
            "1",
            "--session-seed",
            "7",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert "session seed 7" in line
        base_url = line.split()[3]
        body = {"model": "solver", "messages": [first_user("py-word-count")], "tools": TOOLS}
        reply = httpx.post(f"{base_url}/chat/completions", json=body, timeout=10).json()
        assert reply["model"] == "other" and "tool_calls" not in reply["choices"][0]["message"]
    finally:
        proc.terminate()
        proc.wait(timeout=5)
    bad = subprocess.run(
        [sys.executable, "-m", "agent.endpoints.scripted_server", "--session-seed", "x"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert bad.returncode == 2 and "'x' is not an integer or 'random'" in bad.stderr
