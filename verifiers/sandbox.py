"""Run a shell command that executes model-written code, in a sandbox.

`Sandbox` is the seam: `run(command, source, limits, protected)` runs `command` in a private,
writable copy of the folder `source`, with the files of `protected` (the hidden tests) placed
on top read-only, and returns a `RunResult`. The host folders themselves are never written.

This module holds the seam and what its implementations share (limits, the result, the
harness channel, the environment); verifiers/sandboxes.py picks one of them by name.
"""

from __future__ import annotations

import os
import shlex
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from verifiers import VerifierError

_MB = 1024 * 1024
# RLIMIT_AS caps virtual address space, not resident memory: V8 reserves ~10 GB up front and
# tsx's esbuild (a Go binary) ~40 GB, so their limits look large but still stop runaway growth.
DEFAULT_MEMORY_MB = {
    "python": 2048,
    "shell": 2048,
    "javascript": 16384,
    "typescript": 65536,
    "rust": 8192,
    "go": 8192,
    "java": 16384,
    "cpp": 8192,
}
# Names passed through from the parent environment; everything else (keys, tokens, ...) is dropped.
_PASSTHROUGH = ("TZ",)
SANDBOX_ERROR_EXIT = 125  # the sandbox's own setup failed (not the command)


class SandboxUnavailable(VerifierError):
    """The full sandbox was required but cannot run here."""


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 60.0
    cpu_s: int | None = None  # defaults to 2x the timeout
    memory_mb: int = 4096  # RLIMIT_AS
    max_procs: int = 256  # RLIMIT_NPROC (and the fallback's pids cgroup)
    file_size_mb: int = 256  # RLIMIT_FSIZE: the largest single file
    disk_mb: int = 512  # what the command can write in all: the tree's and /tmp's tmpfs
    network: bool = False
    # What a scheduler should reserve for it (Ray's resources): not limits, a typical need.
    cpus: float = 1.0
    resident_mb: int = 512


@dataclass(frozen=True)
class RunResult:
    exit_status: int | None
    duration_ms: int
    output: str
    timed_out: bool = False
    start_error: str | None = None
    isolation: dict[str, Any] = field(default_factory=dict)
    # Where it ran: {"executor", "node", "queue_ms", "retries"} (verifiers/executors.py).
    placement: dict[str, Any] = field(default_factory=dict)
    channel: bytes | None = None  # the harness's signed records (None: the command ran without one)


class Sandbox(Protocol):
    """`channel`, when given, is the harness's setup (verifiers/channel.py): the command gets it
    on an inherited pipe (QB_KEY_FD) and writes its records to another (QB_RESULT_FD), which come
    back in RunResult.channel; QB_HARNESS names the harness folder as the command sees it."""

    name: str

    def run(
        self, command: str, source: Path, limits: Limits, protected: Path | None = None, channel: bytes | None = None
    ) -> RunResult: ...


@dataclass(frozen=True)
class ChannelFds:
    env: dict[str, str]
    pass_fds: tuple[int, ...]
    read_fd: int | None


@contextmanager
def harness_channel(setup: bytes | None, harness_dir: str) -> Iterator[ChannelFds]:
    """The two pipes of a harnessed command: its setup (written here, read once by the driver)
    and its records (drained by run_process). Without a setup: nothing to pass."""
    if setup is None:  # a harness script with no channel of its own (junit, catch2) still runs from it
        yield ChannelFds({"QB_HARNESS": harness_dir}, (), None)
        return
    key_r, key_w = os.pipe()
    # The records travel on a socket, not a pipe: a pipe can be reopened for reading through
    # /proc/self/fd and drained by the code under test; a socket cannot be reopened at all.
    host_end, command_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    res_r, res_w = host_end.detach(), command_end.detach()
    writer = threading.Thread(target=_write_all, args=(key_w, setup), daemon=True)
    writer.start()
    try:
        yield ChannelFds(
            {"QB_KEY_FD": str(key_r), "QB_RESULT_FD": str(res_w), "QB_HARNESS": harness_dir}, (key_r, res_w), res_r
        )
    finally:  # run_process closed the command's ends (key_r, res_w) whether it started or not
        os.close(res_r)
        writer.join(timeout=5)


def _write_all(fd: int, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        pass  # the command never read it (it did not start, or is not the harness)
    finally:
        os.close(fd)


def base_env(home: str, tmp: str) -> dict[str, str]:
    """A minimal environment from an allowlist: nothing secret-looking can leak in."""
    env = {
        "HOME": home,
        "TMPDIR": tmp,
        "TMP": tmp,
        "TEMP": tmp,
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # plugins of the host venv cost seconds per run
        "NO_COLOR": "1",
        "TERM": "dumb",
        "CARGO_HOME": f"{home}/.cargo",
        "CARGO_TERM_COLOR": "never",
        "NODE_OPTIONS": "",
        "npm_config_update_notifier": "false",
    }
    for name in _PASSTHROUGH:
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def limit_script(limits: Limits, nproc: int) -> str:
    """Shell lines setting the rlimits (soft = hard) before anything else runs."""
    cpu = limits.cpu_s or int(limits.timeout_s * 2) + 5
    return (
        f"ulimit -t {cpu} -v {limits.memory_mb * 1024} -f {limits.file_size_mb * 1024} "
        f"-u {nproc} -c 0 || {{ echo 'quotabench sandbox: cannot set rlimits' >&2; exit {SANDBOX_ERROR_EXIT}; }}"
    )


def protected_files(protected: Path | None) -> list[str]:
    """Relative paths of the protected folder's regular files (symlinks are not followed)."""
    from verifiers.tasks import iter_files

    if protected is None:
        return []
    return [str(p.relative_to(protected)) for p in iter_files(protected) if not p.is_symlink()]


def quote(text: str) -> str:
    return shlex.quote(text)


def describe_sandbox(sandbox: object | None) -> dict[str, Any]:
    """What a run records about the sandbox its grades ran in (runs.isolation_json)."""
    if sandbox is None:
        return {"sandbox": "none", "missing": "this grader runs no sandbox"}
    describe = getattr(sandbox, "describe", None)
    return describe() if describe else {"sandbox": getattr(sandbox, "name", type(sandbox).__name__)}


# Typical resident memory per test run, for scheduling on a cluster (a rust build needs more).
RESIDENT_MB = {
    "python": 400,
    "shell": 300,
    "javascript": 400,
    "typescript": 600,
    "rust": 1200,
    "go": 800,
    "java": 1200,
    "cpp": 1200,
}


def limits_for(language: str, timeout_s: float, memory_mb: int | None = None) -> Limits:
    return Limits(
        timeout_s=timeout_s,
        memory_mb=memory_mb or DEFAULT_MEMORY_MB.get(language, 4096),
        resident_mb=RESIDENT_MB.get(language, 512),
    )
