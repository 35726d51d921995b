"""Scratch folders: where every temporary tree quotabench makes lives, and the cleanup of
those a killed process left behind.

All of them sit under one root per user, `$TMPDIR/quotabench-<uid>/`, in folders named
`<pid>.<start>.<what>.<random>` where `<start>` is the owning process's start time (so a
reused pid is not mistaken for the owner). `clean_stale()` removes the folders whose owner
is gone; `quotabench run`, `resume` and `validate` call it when they start.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

_NAME = re.compile(r"^(\d+)\.(\d+)\.")


def root() -> Path:
    base = Path(tempfile.gettempdir()) / f"quotabench-{os.getuid()}"
    base.mkdir(mode=0o700, exist_ok=True)
    return base


def _start_time(pid: int) -> int | None:
    """Clock ticks since boot at which `pid` started (field 22 of /proc/<pid>/stat)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[19])


_OWN = f"{os.getpid()}.{_start_time(os.getpid()) or 0}"


def scratch_dir(what: str) -> Path:
    """A new private folder for this process; `what` says what it is for (e.g. `grade-py-add`)."""
    global _OWN
    if not _OWN.startswith(f"{os.getpid()}."):  # forked since import
        _OWN = f"{os.getpid()}.{_start_time(os.getpid()) or 0}"
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", what)[:60]
    return Path(tempfile.mkdtemp(prefix=f"{_OWN}.{safe}.", dir=root()))


def owner_alive(name: str) -> bool:
    match = _NAME.match(name)
    if match is None:
        return True  # not ours to judge
    pid, start = int(match.group(1)), int(match.group(2))
    return _start_time(pid) == start


def clean_stale() -> int:
    """Remove scratch folders whose owning process is gone; returns how many were removed."""
    removed = 0
    try:
        entries = list(os.scandir(root()))
    except OSError:
        return 0
    for entry in entries:
        if entry.is_dir(follow_symlinks=False) and not owner_alive(entry.name):
            _force_rmtree(Path(entry.path))
            removed += 1
    return removed


def _force_rmtree(path: Path) -> None:
    """rmtree that also gets through folders the sandboxed code made read-only."""

    def fix(func: Callable[[str], object], target: str, _exc: object) -> None:
        try:
            os.chmod(os.path.dirname(target), 0o700)
            os.chmod(target, 0o700)
            func(target)
        except OSError:
            pass

    shutil.rmtree(path, onerror=fix)


def remove(path: Path) -> None:
    _force_rmtree(Path(path))
