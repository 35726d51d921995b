"""What isolation this machine allows: a network namespace via `unshare -rn`, a pids cgroup.

Probed once per process; each grade records what it actually got.
"""
from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import uuid
from pathlib import Path

_CGROUP_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))


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
    """A throwaway pids cgroup capping how many processes a sandbox may hold at once."""

    def __init__(self, max_pids: int):
        self.path: Path | None = None
        parent = None if os.environ.get("QUOTABENCH_NO_CGROUP") else _cgroup_parent()
        if parent is None:
            return
        path = parent / uuid.uuid4().hex[:12]
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
        if not self.path:
            return []
        try:
            return [int(x) for x in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def kill_all(self) -> None:
        for _ in range(50):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def remove(self) -> None:
        if self.path:
            self.kill_all()
            try:
                self.path.rmdir()
            except OSError:
                pass
