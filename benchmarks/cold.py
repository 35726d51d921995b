"""Time a command as a user runs it: a fresh process, its wall time and its own peak RSS.

On Linux a process's peak RSS starts from the high-water mark of the memory it was spawned
from (recorded at exec, fork or vfork alike), so a command spawned by a benchmark that has
built a 100k-attempt ledger would report the benchmark's size. Each command is therefore
spawned by a small launcher interpreter, which times it and reads its rusage. The project's
bytecode is written first, as pip does at install (a shell with PYTHONDONTWRITEBYTECODE would
otherwise have every cold start compile the project's modules again).
"""

from __future__ import annotations

import compileall
import functools
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_LAUNCHER = """
import json, os, sys, time
args = json.loads(sys.argv[1])
quiet = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0), (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
started = time.perf_counter()
pid = os.posix_spawn(args[0], args, os.environ, file_actions=quiet)
_, status, usage = os.wait4(pid, 0)
print(json.dumps([time.perf_counter() - started, os.waitstatus_to_exitcode(status), usage.ru_maxrss]))
"""


@functools.cache
def _bytecode() -> None:
    for package in ("agent", "tuiapp", "verifiers"):
        compileall.compile_dir(ROOT / package, quiet=1)


def cold(args: list[str], runs: int) -> tuple[float, float, float]:
    """Median and min wall seconds and the largest peak RSS (MB) of `runs` fresh `args`
    processes (args[0] an absolute path, e.g. sys.executable)."""
    _bytecode()
    walls, peak = [], 0
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-S", "-c", _LAUNCHER, json.dumps(args)], capture_output=True, text=True, check=True
        ).stdout
        wall, code, rss_kb = json.loads(out)
        if code != 0:
            raise SystemExit(f"{' '.join(args)} exited with {code}")
        walls.append(wall)
        peak = max(peak, rss_kb)
    return statistics.median(walls), min(walls), peak / 1024
