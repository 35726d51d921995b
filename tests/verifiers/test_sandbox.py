"""The sandbox, both implementations: limits, kills, a scrubbed environment, no network, a
private tree with protected files, and (bwrap) nothing of the host but the runtimes."""

import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid

import pytest

from verifiers.isolation import bwrap_status, network_isolation_available
from verifiers.sandbox import Limits, SandboxUnavailable
from verifiers.sandboxes import make_sandbox

needs_bwrap = pytest.mark.skipif(not bwrap_status().usable, reason=f"bubblewrap unavailable: {bwrap_status().problem}")
KINDS = [pytest.param("bwrap", marks=needs_bwrap), "fallback"]


@pytest.fixture(params=KINDS)
def sandbox(request):
    return make_sandbox(request.param)


@pytest.fixture
def bwrap():
    if not bwrap_status().usable:
        pytest.skip(f"bubblewrap unavailable: {bwrap_status().problem}")
    return make_sandbox("bwrap")


@pytest.fixture
def tree(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text("print('from a')\n")
    (src / "b.txt").write_text("keep me\n")
    return src


def _alive(marker: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    if marker.encode() in fh.read():
                        pids.append(int(entry))
            except OSError:
                pass
    return pids


def _gone(marker: str, within_s: float = 5.0) -> list[int]:
    """The processes still carrying `marker` once a SIGKILL has had time to land (a loaded
    machine delivers it late; a daemon nobody killed is still there after `within_s`)."""
    deadline = time.monotonic() + within_s
    while (alive := _alive(marker)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return alive


def test_exit_status_and_output(sandbox, tree):
    result = sandbox.run("cat a.py; echo hello; exit 3", tree, Limits(timeout_s=10))
    assert result.exit_status == 3
    assert "from a" in result.output and "hello" in result.output
    assert not result.timed_out
    assert result.isolation["sandbox"] == sandbox.name


def test_the_host_tree_is_never_written(sandbox, tree):
    before = {p.name: p.read_bytes() for p in tree.iterdir()}
    result = sandbox.run("echo changed > a.py; rm b.txt; echo new > c.txt; ls", tree, Limits(timeout_s=10))
    assert result.exit_status == 0 and "c.txt" in result.output
    assert {p.name: p.read_bytes() for p in tree.iterdir()} == before


def test_timeout_kills_everything_within_two_seconds(sandbox, tree):
    marker = f"qb-timeout-{uuid.uuid4().hex[:8]}"
    started = time.monotonic()
    result = sandbox.run(f"(exec -a {marker} sleep 60) & exec -a {marker} sleep 60", tree, Limits(timeout_s=2))
    assert result.timed_out
    assert time.monotonic() - started < 2 + 2
    assert _gone(marker) == []


def test_a_setsid_daemon_does_not_outlive_the_command(sandbox, tree):
    marker = f"qb-daemon-{uuid.uuid4().hex[:8]}"
    result = sandbox.run(
        f"setsid bash -c 'exec -a {marker} sleep 30' </dev/null >/dev/null 2>&1 & echo started",
        tree,
        Limits(timeout_s=10),
    )
    assert result.exit_status == 0 and "started" in result.output
    assert _gone(marker) == []


def test_a_daemon_dies_without_cgroups_too(tree, monkeypatch):
    # Any non-root user has no pids cgroup: the fallback still finds the daemon by its marker.
    monkeypatch.setenv("QUOTABENCH_NO_CGROUP", "1")
    marker = f"qb-nocg-{uuid.uuid4().hex[:8]}"
    result = make_sandbox("fallback").run(
        f"setsid bash -c 'exec -a {marker} sleep 30' </dev/null >/dev/null 2>&1 &", tree, Limits(timeout_s=10)
    )
    assert result.isolation["pids_cgroup"] == "off"
    assert _gone(marker) == []


def test_no_network_to_loopback(sandbox, tree):
    if sandbox.name == "fallback" and os.geteuid() != 0 and not network_isolation_available():
        pytest.skip("unshare -n is not permitted here")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    accepted = []
    threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True).start()
    try:
        code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); print('CONNECTED')"
        result = sandbox.run(f'python -c "{code}"', tree, Limits(timeout_s=20))
    finally:
        server.close()
    assert result.isolation["network"] == "isolated"
    assert result.exit_status != 0 and "CONNECTED" not in result.output and not accepted


def test_no_host_unix_socket(bwrap, tree, tmp_path):
    path = tmp_path / "host.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    server.settimeout(5)
    try:
        code = f"import socket; s = socket.socket(socket.AF_UNIX); s.connect({str(path)!r}); print('CONNECTED')"
        result = bwrap.run(f'python -c "{code}"', tree, Limits(timeout_s=20))
        server.settimeout(0.2)
        with pytest.raises(socket.timeout):
            server.accept()
    finally:
        server.close()
    assert "CONNECTED" not in result.output


def test_environment_is_scrubbed(sandbox, tree, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak-1234")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-should-not-leak")
    monkeypatch.setenv("MY_SECRET", "hush")
    result = sandbox.run(
        "python -c 'import os; [print(k, v) for k, v in os.environ.items()]'", tree, Limits(timeout_s=20)
    )
    assert result.exit_status == 0
    names = [line.split(" ", 1)[0] for line in result.output.splitlines()]
    assert names, result.output
    assert not [n for n in names if any(word in n.upper() for word in ("KEY", "TOKEN", "SECRET"))]
    assert "should-not-leak" not in result.output and "hush" not in result.output
    env = dict(line.split(" ", 1) for line in result.output.splitlines() if " " in line)
    assert env["HOME"] != os.environ.get("HOME")


def test_fork_bomb_is_contained(sandbox, tree):
    started = time.monotonic()
    result = sandbox.run(":(){ :|:& };:", tree, Limits(timeout_s=5, max_procs=64))
    assert time.monotonic() - started < 30
    assert result.exit_status is not None or result.timed_out
    assert sandbox.run("echo alive", tree, Limits(timeout_s=10)).output.strip() == "alive"


def test_file_size_limit(sandbox, tree):
    result = sandbox.run(
        "head -c 5000000 /dev/zero > big.bin; ls -l big.bin", tree, Limits(timeout_s=10, file_size_mb=1)
    )
    assert " 1048576 " in result.output
    assert not (tree / "big.bin").exists()


def test_total_writes_are_bounded(bwrap, tree):
    # Six 100 MB files against a 200 MB disk: the tmpfs fills, the host disk never sees them.
    script = "for i in 1 2 3 4 5 6; do head -c 100000000 /dev/zero > f$i || echo FULL; done; du -sm . | cut -f1"
    result = bwrap.run(script, tree, Limits(timeout_s=30, disk_mb=200))
    assert "FULL" in result.output
    assert int(result.output.strip().splitlines()[-1]) <= 200


def test_output_is_capped(sandbox, tree):
    result = sandbox.run("python -c \"print('x' * 500000)\"", tree, Limits(timeout_s=10))
    assert len(result.output) < 100_000
    assert "bytes cut" in result.output


def test_cpu_limit(sandbox, tree):
    result = sandbox.run("python -c 'while True: pass'", tree, Limits(timeout_s=20, cpu_s=1))
    assert not result.timed_out
    assert result.exit_status != 0


def test_protected_files_win_and_cannot_be_changed(bwrap, tree, tmp_path):
    hidden = tmp_path / "hidden"
    (hidden / "tests").mkdir(parents=True)
    (hidden / "tests" / "check.sh").write_text("echo REAL CHECK\n")
    (tree / "tests").mkdir()
    (tree / "tests" / "check.sh").write_text("echo FORGED CHECK\n")  # the model's copy loses
    (tree / "tests" / "mine.sh").write_text("echo mine\n")
    script = (
        "bash tests/check.sh; bash tests/mine.sh; echo x > tests/check.sh || echo NO-WRITE; "
        "rm -f tests/check.sh || echo NO-RM; mv tests/check.sh t.sh || echo NO-MV; bash tests/check.sh"
    )
    result = bwrap.run(script, tree, Limits(timeout_s=10), protected=hidden)
    assert result.output.count("REAL CHECK") == 2 and "FORGED" not in result.output
    assert "mine" in result.output
    assert all(word in result.output for word in ("NO-WRITE", "NO-RM", "NO-MV"))
    assert (hidden / "tests" / "check.sh").read_text() == "echo REAL CHECK\n"


def test_unprivileged_without_capabilities(bwrap, tree):
    result = bwrap.run("id -u; grep CapEff /proc/self/status; cat /proc/self/uid_map", tree, Limits(timeout_s=10))
    uid, cap, *uid_map = result.output.split("\n")
    assert int(uid) != 0
    assert cap.split()[-1] == "0000000000000000"
    mapped = uid_map[0].split()
    if mapped[0] != "0" or mapped[2] != "4294967295":  # a user namespace: the inside uid is never host root
        assert mapped[1] != "0"


def test_nothing_of_the_host_but_runtimes(bwrap, tree, tmp_path):
    secret = tmp_path / "ledger.sqlite"
    secret.write_text("SECRET-LEDGER")
    script = textwrap.dedent(f"""
        cat /etc/shadow 2>/dev/null && echo READ-SHADOW
        cat {secret} 2>/dev/null
        ls /sys/fs/cgroup 2>/dev/null && echo SEES-SYS
        ls {os.path.expanduser("~")}/.ssh 2>/dev/null && echo SEES-HOME
        ls /run 2>/dev/null && echo SEES-RUN
        echo procs $(ls /proc | grep -c '^[0-9]')
        cat /proc/1/environ 2>/dev/null | tr '\\0' '\\n' | grep -i key
        python -c 'import sys; print("python ok")'
        """)
    result = bwrap.run(script, tree, Limits(timeout_s=20))
    out = result.output
    assert "python ok" in out
    for leak in ("READ-SHADOW", "SECRET-LEDGER", "SEES-SYS", "SEES-HOME", "SEES-RUN"):
        assert leak not in out
    assert int(out.split("procs ")[1].split()[0]) < 10


def test_killing_the_harness_kills_the_sandbox(bwrap, tmp_path):
    # The sandbox of a quotabench process that dies (kill -9) must die with it.
    marker = f"qb-orphan-{uuid.uuid4().hex[:8]}"
    src = tmp_path / "src"
    src.mkdir()
    code = textwrap.dedent(f"""
        from pathlib import Path
        from verifiers.sandbox import Limits
        from verifiers.sandboxes import make_sandbox
        make_sandbox("bwrap").run("setsid bash -c 'exec -a {marker} sleep 60' & exec -a {marker} sleep 60",
                                  Path({str(src)!r}), Limits(timeout_s=120))
        """)
    harness = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + 20
    while not _alive(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive(marker), "the sandboxed command never started"
    harness.kill()
    harness.wait()
    deadline = time.monotonic() + 5
    while _alive(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(marker) == []


def test_missing_command_is_a_clear_exit_127(sandbox, tree):
    result = sandbox.run("no-such-runner --test", tree, Limits(timeout_s=10))
    assert result.exit_status == 127
    assert "no-such-runner: command not found" in result.output


def test_require_refuses_the_fallback(monkeypatch):
    monkeypatch.setenv("QUOTABENCH_NO_BWRAP", "1")
    bwrap_status.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="disabled by QUOTABENCH_NO_BWRAP"):
            make_sandbox(require=True)
        fallback = make_sandbox()
    finally:
        bwrap_status.cache_clear()
    assert fallback.name == "fallback"


def test_a_python_installed_under_tmp_runs_inside_the_sandbox_s_own_tmp(bwrap, tmp_path):
    # A venv under /tmp (a CI runner's, a wheel check's) is bound on top of the sandbox's
    # private /tmp, not hidden by it: graded python tasks ran with no python at all before.
    import site

    from tests.conftest import ROOT

    assert str(tmp_path).startswith("/tmp/")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    pth = next((venv / "lib").glob("python3*/site-packages")) / "quotabench.pth"
    pth.write_text(f"{site.getsitepackages()[0]}\n{ROOT}\n")
    src = tmp_path / "src"
    src.mkdir(mode=0o755)
    (src / "a.py").write_text("import sys; print(sys.prefix)\n")
    tmp_path.chmod(0o755)
    code = (
        "import pathlib; from verifiers.sandbox import Limits; from verifiers.sandboxes import make_sandbox; "
        f"r = make_sandbox('bwrap').run('python3 a.py && ls /tmp', pathlib.Path({str(src)!r}), Limits()); "
        "print(r.exit_status); print(r.output)"
    )
    done = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, cwd=ROOT)
    status, *output = done.stdout.splitlines()
    assert status == "0", done.stdout + done.stderr
    assert str(venv) in output  # its own prefix: the venv under /tmp, seen read-only
