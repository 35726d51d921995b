"""Is a run's process still alive? A run row says `running` from its start until its process
writes how it ended; a process killed with SIGKILL never does. So each run records the process
that drives it (`runs.process_json`: host, pid and the pid's start time, which a reused pid does
not share) when it starts or resumes, and a reader on the same host asks the kernel.

`run_state` is what every screen shows for a run: its status, except that a `running` row whose
process is gone is `interrupted` (`quotabench resume` finishes it).
"""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any

RESUMABLE = ("interrupted", "aborted", "crashed", "refused")  # states `quotabench resume` goes on from
_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def _start_token(pid: int) -> str | None:
    """The boot id and the process's start time in clock ticks (Linux /proc), or None elsewhere
    or when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        boot = _BOOT_ID.read_text().strip()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()  # the command name may hold spaces and parentheses
    return f"{boot}:{fields[19]}" if len(fields) > 19 else None


def process_identity() -> dict[str, Any]:
    """This process as a run row records it (runs.process_json)."""
    pid = os.getpid()
    return {"host": platform.node(), "pid": pid, "start": _start_token(pid)}


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    except OSError:
        return False
    return True


def process_alive(process_json: str | None) -> bool | None:
    """True / False when this host can tell whether the recorded process still runs; None when it
    cannot (another host, or a row written before processes were recorded)."""
    try:
        process = json.loads(process_json or "null")
    except ValueError:
        return None
    if not isinstance(process, dict) or not isinstance(process.get("pid"), int):
        return None
    if process.get("host") != platform.node():
        return None
    pid: int = process["pid"]
    start = process.get("start")
    if start is None or not Path("/proc").is_dir():
        return _pid_exists(pid)
    return bool(_start_token(pid) == start)


def run_state(run: dict[str, Any]) -> str:
    """The run's status as a person should read it: `running` only while its process is alive;
    `interrupted` when that process is gone; `running?` when this host cannot tell."""
    status = run.get("status") or "unknown"
    if status != "running":
        return status
    alive = process_alive(run.get("process_json"))
    if alive is None:
        return "running?"
    return "running" if alive else "interrupted"


def state_note(run: dict[str, Any], db_flag: str = "") -> str:
    """A few words on what the state means, for the run lists (`db_flag`: ` --db PATH` when the
    ledger is not the one a bare command opens)."""
    state = run_state(run)
    if state == "running?":
        process = json.loads(run.get("process_json") or "null") or {}
        where = f"process {process['pid']} on {process.get('host')}" if process.get("pid") else "no process recorded"
        return f"not finished: running or killed ({where})"
    if state == "refused":
        return f"`quotabench resume {run['id'][:10]}{db_flag} --force` runs it anyway"
    if state in RESUMABLE:
        return f"`quotabench resume {run['id'][:10]}{db_flag}` finishes it"
    return ""
