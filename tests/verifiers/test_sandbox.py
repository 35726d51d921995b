"""The sandbox: timeouts kill the group, no network, scrubbed env, fork bombs contained."""
import os
import socket
import threading
import time

import pytest

from verifiers.isolation import network_isolation_available
from verifiers.sandbox import Limits, LocalSandbox

sandbox = LocalSandbox()


def test_exit_status_and_output(tmp_path):
    result = sandbox.run("echo hello; exit 3", tmp_path, Limits(timeout_s=10))
    assert result.exit_status == 3
    assert "hello" in result.output
    assert not result.timed_out


def test_timeout_kills_the_process_group_within_two_seconds(tmp_path):
    started = time.monotonic()
    result = sandbox.run("sleep 60 & sleep 60; wait", tmp_path, Limits(timeout_s=2))
    assert result.timed_out
    assert time.monotonic() - started < 2 + 2


def test_background_child_that_escapes_with_setsid_is_killed(tmp_path):
    marker = tmp_path / "alive"
    result = sandbox.run(f"setsid bash -c 'sleep 3; touch {marker}' & sleep 30", tmp_path, Limits(timeout_s=1))
    assert result.timed_out
    if result.isolation["pids_cgroup"] == "off":
        pytest.skip("no pids cgroup here: escaped children are only killed through the process group")
    time.sleep(3.5)
    assert not marker.exists()


@pytest.mark.skipif(not network_isolation_available(), reason="unshare -rn is not permitted here")
def test_no_network_to_loopback(tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    threading.Thread(target=lambda: server.accept(), daemon=True).start()
    try:
        code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); print('CONNECTED')"
        result = sandbox.run(f'python -c "{code}"', tmp_path, Limits(timeout_s=20))
    finally:
        server.close()
    assert result.isolation["network"] == "on"
    assert result.exit_status != 0
    assert "CONNECTED" not in result.output


def test_network_off_is_recorded_when_unshare_is_not_permitted(tmp_path, monkeypatch):
    # Simulates a machine where unshare is refused; the grade must say isolation was off.
    monkeypatch.setenv("QUOTABENCH_NO_UNSHARE", "1")
    network_isolation_available.cache_clear()
    try:
        result = sandbox.run("true", tmp_path, Limits(timeout_s=10))
    finally:
        network_isolation_available.cache_clear()
    assert result.isolation["network"] == "off"
    assert result.exit_status == 0


def test_environment_is_scrubbed(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak-1234")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-should-not-leak")
    monkeypatch.setenv("MY_SECRET", "hush")
    result = sandbox.run("python -c 'import os; [print(k, v) for k, v in os.environ.items()]'", tmp_path, Limits(timeout_s=20))
    assert result.exit_status == 0
    names = [line.split(" ", 1)[0] for line in result.output.splitlines()]
    assert names, result.output
    assert not [n for n in names if any(word in n.upper() for word in ("KEY", "TOKEN", "SECRET"))]
    assert "should-not-leak" not in result.output and "hush" not in result.output
    env = dict(line.split(" ", 1) for line in result.output.splitlines() if " " in line)
    assert env["HOME"] != os.environ.get("HOME") and env["HOME"].startswith(env["TMPDIR"].rsplit("/", 1)[0])


def test_fork_bomb_is_contained(tmp_path):
    started = time.monotonic()
    result = sandbox.run(":(){ :|:& };:", tmp_path, Limits(timeout_s=5, max_procs=64))
    assert time.monotonic() - started < 30
    assert result.exit_status is not None or result.timed_out
    # The machine can still start processes afterwards.
    assert sandbox.run("echo alive", tmp_path, Limits(timeout_s=10)).output.strip() == "alive"


def test_file_size_limit(tmp_path):
    result = sandbox.run("head -c 5000000 /dev/zero > big.bin", tmp_path, Limits(timeout_s=10, file_size_mb=1))
    assert result.exit_status != 0
    assert (tmp_path / "big.bin").stat().st_size <= 1024 * 1024


def test_output_is_capped(tmp_path):
    result = sandbox.run("python -c \"print('x' * 500000)\"", tmp_path, Limits(timeout_s=10))
    assert len(result.output) < 100_000
    assert "bytes cut" in result.output


def test_cpu_limit(tmp_path):
    result = sandbox.run("python -c 'while True: pass'", tmp_path, Limits(timeout_s=20, cpu_s=1))
    assert not result.timed_out
    assert result.exit_status != 0
