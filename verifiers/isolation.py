"""What isolation this machine allows, probed once per process, and the harness's own guard.

- bubblewrap (`bwrap`): the sandbox; unavailable when the binary is missing or cannot
  create its namespaces here (the reason is kept, to be recorded and shown).
- `unshare -rn` and a pids cgroup: what the fallback sandbox can still use without it.
- `protect_harness()`: makes this process non-dumpable, so code running under the same uid
  cannot read `/proc/<pid>/environ` (the API key) or its memory, with or without a sandbox.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import signal
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

_CGROUP_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"


@dataclass(frozen=True)
class BwrapStatus:
    path: str | None
    version: str | None
    problem: str | None  # None when usable
    setpriv: str | None = None  # absolute path, when running as root (drops to an unprivileged uid)

    @property
    def usable(self) -> bool:
        return self.problem is None


@functools.cache
def bwrap_status() -> BwrapStatus:
    """Is bubblewrap here and can it build a sandbox? Probed with the namespaces we use."""
    if os.environ.get("QUOTABENCH_NO_BWRAP"):
        return BwrapStatus(None, None, "disabled by QUOTABENCH_NO_BWRAP")
    path = shutil.which("bwrap")
    if path is None:
        return BwrapStatus(None, None, f"bwrap is not on PATH — {INSTALL_HINT}")
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout.split()[-1]
    except (OSError, subprocess.SubprocessError, IndexError):
        version = None
    user = [] if os.geteuid() == 0 else ["--unshare-user"]
    probe = [
        path,
        *user,
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--die-with-parent",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
        "true",
    ]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return BwrapStatus(path, version, f"bwrap could not run: {exc}")
    if done.returncode != 0:
        why = " ".join(done.stderr.split())[:200] or f"exit status {done.returncode}"
        return BwrapStatus(
            path,
            version,
            f"bwrap cannot create namespaces here ({why}) — allow unprivileged "
            "user namespaces (sysctl kernel.unprivileged_userns_clone=1) or run as root",
        )
    setpriv = _system_tool("setpriv") if os.geteuid() == 0 else None
    if os.geteuid() == 0 and setpriv is None:
        return BwrapStatus(
            path,
            version,
            "running as root, but setpriv (util-linux) is missing to drop to an "
            "unprivileged uid inside the sandbox — install util-linux",
        )
    if not os.path.isfile("/bin/bash"):
        return BwrapStatus(path, version, "/bin/bash is missing — the sandbox runs commands with bash")
    return BwrapStatus(path, version, None, setpriv)


def _system_tool(name: str) -> str | None:
    """A system tool's absolute path under /usr (seen inside the sandbox whatever PATH says)."""
    for folder in ("/usr/bin", "/usr/sbin", "/bin", "/sbin"):
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate) and os.path.realpath(candidate).startswith("/usr/"):
            return candidate
    return None


@functools.cache
def network_isolation_available() -> bool:
    """True when `unshare -rn` (new user + network namespace) can run a command here."""
    if os.environ.get("QUOTABENCH_NO_UNSHARE") or shutil.which("unshare") is None:
        return False
    try:
        done = subprocess.run(["unshare", "-rn", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.cache
def _cgroup_parent() -> Path | None:
    for root in _CGROUP_ROOTS:
        parent = root / "quotabench"
        try:
            parent.mkdir(exist_ok=True)
            probe = parent / f"probe-{uuid.uuid4().hex[:8]}"
            probe.mkdir()
            ok = (probe / "pids.max").exists()
            probe.rmdir()
        except OSError:
            continue
        if ok:
            return parent
    return None


class PidsCgroup:
    """A throwaway pids cgroup capping how many processes a fallback sandbox may hold at once.
    Named `<pid>-<random>` so a later start can remove the ones a killed process left."""

    def __init__(self, max_pids: int):
        self.path: Path | None = None
        parent = None if os.environ.get("QUOTABENCH_NO_CGROUP") else _cgroup_parent()
        if parent is None:
            return
        path = parent / f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        try:
            path.mkdir()
            (path / "pids.max").write_text(str(max_pids))
        except OSError:
            return
        self.path = path

    @property
    def procs_file(self) -> str | None:
        return str(self.path / "cgroup.procs") if self.path else None

    def pids(self) -> list[int]:
        return _cgroup_pids(self.path) if self.path else []

    def kill_all(self) -> None:
        if self.path:
            _kill_cgroup(self.path)

    def remove(self) -> None:
        if self.path:
            _kill_cgroup(self.path)
            try:
                self.path.rmdir()
            except OSError:
                pass


def _cgroup_pids(path: Path) -> list[int]:
    try:
        return [int(x) for x in (path / "cgroup.procs").read_text().split()]
    except OSError:
        return []


def _kill_cgroup(path: Path) -> None:
    for _ in range(50):
        pids = _cgroup_pids(path)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def clean_stale_cgroups() -> int:
    """Remove fallback cgroups whose quotabench process is gone (kill -9 leaves them)."""
    parent = _cgroup_parent() if not os.environ.get("QUOTABENCH_NO_CGROUP") else None
    if parent is None:
        return 0
    removed = 0
    for child in parent.iterdir():
        owner, _, _ = child.name.partition("-")
        if not owner.isdigit() or Path(f"/proc/{owner}").exists():
            continue
        _kill_cgroup(child)
        try:
            child.rmdir()
            removed += 1
        except OSError:
            pass
    return removed


_PR_SET_DUMPABLE = 4


def protect_harness() -> bool:
    """Make this process non-dumpable: same-uid processes can no longer read its environ,
    memory or file descriptors through /proc. True when it took effect."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False
