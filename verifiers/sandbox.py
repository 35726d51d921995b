"""Run a shell command in a throwaway sandbox: own process group, rlimits, scrubbed env, no network.

`Sandbox` is the seam (one method); `LocalSandbox` is the implementation used everywhere.
Output goes to a file outside the workspace, so a grandchild holding a pipe open cannot hang
the grader, and is capped when read back.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from verifiers.isolation import PidsCgroup, network_isolation_available

OUTPUT_CAP_BYTES = 64 * 1024
_MB = 1024 * 1024
# RLIMIT_AS caps virtual address space, not resident memory: V8 reserves ~10 GB up front and
# tsx's esbuild (a Go binary) ~40 GB, so their limits look large but still stop runaway growth.
DEFAULT_MEMORY_MB = {"python": 2048, "shell": 2048, "javascript": 16384, "typescript": 65536, "rust": 8192}
# Names passed through from the parent environment; everything else (keys, tokens, ...) is dropped.
_PASSTHROUGH = ("LANG", "LC_ALL", "TZ")
_LAUNCHER = Path(__file__).with_name("_launch.py")


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 60.0
    cpu_s: int | None = None          # defaults to 2x the timeout
    memory_mb: int = 4096             # RLIMIT_AS
    max_procs: int = 256              # pids cgroup (and RLIMIT_NPROC where it applies)
    file_size_mb: int = 256           # RLIMIT_FSIZE
    network: bool = False


@dataclass(frozen=True)
class RunResult:
    exit_status: int | None
    duration_ms: int
    output: str
    timed_out: bool = False
    start_error: str | None = None
    isolation: dict = field(default_factory=dict)


class Sandbox(Protocol):
    def run(self, command: str, cwd: Path, limits: Limits) -> RunResult: ...


def _tool_dirs() -> list[str]:
    """Directories the test commands need on PATH: this interpreter's bin, cargo's bin."""
    dirs = [str(Path(sys.executable).parent)]
    cargo = shutil.which("cargo")
    if cargo:
        dirs.append(str(Path(cargo).parent))
    return dirs


def _rustup_home() -> str | None:
    if os.environ.get("RUSTUP_HOME"):
        return os.environ["RUSTUP_HOME"]
    default = Path.home() / ".rustup"
    return str(default) if default.is_dir() else None


def scrubbed_env(home: Path, tmp: Path) -> dict[str, str]:
    """A minimal environment built from an allowlist: nothing secret-looking can leak in."""
    path = os.pathsep.join(dict.fromkeys(_tool_dirs() + os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)))
    env = {
        "PATH": path, "HOME": str(home), "TMPDIR": str(tmp), "TMP": str(tmp), "TEMP": str(tmp),
        "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # plugins of the host venv cost seconds per run
        "NO_COLOR": "1", "TERM": "dumb", "CARGO_HOME": str(home / ".cargo"),
        "CARGO_TERM_COLOR": "never", "NODE_OPTIONS": "", "npm_config_update_notifier": "false",
    }
    rustup = _rustup_home()
    if rustup:
        env["RUSTUP_HOME"] = rustup
    for name in _PASSTHROUGH:
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def _user_process_count() -> int:
    uid = os.getuid()
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += 1
            except OSError:
                pass
    return count


class LocalSandbox:
    """Subprocess sandbox on this machine. Records which isolation it actually got."""

    def run(self, command: str, cwd: Path, limits: Limits) -> RunResult:
        root = Path(tempfile.mkdtemp(prefix="qb-sbx-"))
        home, tmp = root / "home", root / "tmp"
        home.mkdir()
        tmp.mkdir()
        out_path = root / "output.log"
        cgroup = PidsCgroup(limits.max_procs)
        net_isolated = (not limits.network) and network_isolation_available()
        argv = ["bash", "-c", command]
        if net_isolated:
            argv = ["unshare", "-rn", "--"] + argv
        nproc = limits.max_procs if os.geteuid() != 0 else limits.max_procs * 4
        if os.geteuid() != 0:
            nproc += _user_process_count()
        cpu = limits.cpu_s or int(limits.timeout_s * 2) + 5
        spec = {
            "argv": argv, "env": scrubbed_env(home, tmp), "cgroup_procs": cgroup.procs_file,
            "rlimits": {
                "RLIMIT_CPU": cpu, "RLIMIT_AS": limits.memory_mb * _MB,
                "RLIMIT_FSIZE": limits.file_size_mb * _MB, "RLIMIT_NPROC": nproc, "RLIMIT_CORE": 0,
            },
        }
        isolation = {
            "network": "on" if net_isolated else "off",
            "pids_cgroup": "on" if cgroup.path else "off",
            "rlimits": "on",
        }
        started = time.monotonic()
        timed_out = False
        try:
            with open(out_path, "wb") as out:
                try:
                    proc = subprocess.Popen(
                        [sys.executable, "-I", str(_LAUNCHER), json.dumps(spec)],
                        cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                        start_new_session=True, env={"PATH": os.environ.get("PATH", "")},
                    )
                except OSError as exc:
                    return RunResult(None, 0, "", start_error=f"could not start sandbox: {exc}", isolation=isolation)
                try:
                    proc.wait(timeout=limits.timeout_s)
                except subprocess.TimeoutExpired:
                    timed_out = True
                    _kill_group(proc.pid)
                    cgroup.kill_all()
                    proc.wait()
                else:
                    _kill_group(proc.pid)  # stray background children
            duration_ms = int((time.monotonic() - started) * 1000)
            output = _read_capped(out_path)
            return RunResult(proc.returncode, duration_ms, output, timed_out=timed_out, isolation=isolation)
        finally:
            cgroup.remove()
            shutil.rmtree(root, ignore_errors=True)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _read_capped(path: Path, cap: int = OUTPUT_CAP_BYTES) -> str:
    size = path.stat().st_size
    with open(path, "rb") as fh:
        if size <= cap:
            data = fh.read()
            return data.decode("utf-8", "replace")
        head = fh.read(cap // 4)
        fh.seek(size - (cap - cap // 4))
        tail = fh.read()
    return (head.decode("utf-8", "replace") + f"\n[... {size - cap} bytes cut ...]\n" + tail.decode("utf-8", "replace"))


def limits_for(language: str, timeout_s: float, memory_mb: int | None = None) -> Limits:
    return Limits(timeout_s=timeout_s, memory_mb=memory_mb or DEFAULT_MEMORY_MB.get(language, 4096))
