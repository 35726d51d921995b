"""What the sandbox costs, side by side with its floor in one process (issue 11 targets).

1. Start cost: the bubblewrap sandbox running `true` vs a raw `subprocess.run(["true"])`,
   interleaved so both see the same load. Target: median <= 10 ms on 2 cores.
2. Grading wall time vs the bare test command on the shipped python, javascript and rust smoke
   tasks and a go core task (when go is installed): `SandboxGrader.grade` (stage the workspace,
   sandbox, canaries, read the summary, integrity) against running the hidden command directly
   in a fresh copy of workspace + reference + hidden (each run from scratch, so cargo and go
   build in both: a fresh GOCACHE for each bare go run, as the sandbox's is). Target: <= 1.15x
   the median.

    python benchmarks/sandbox.py [--runs 200] [--grades 9]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.figures import Figures, add_json_argument  # noqa: E402
from verifiers.grading import SandboxGrader  # noqa: E402
from verifiers.hostpaths import host_paths  # noqa: E402
from verifiers.sandbox import Limits, base_env  # noqa: E402
from verifiers.sandboxes import make_sandbox  # noqa: E402
from verifiers.tasks import copy_with_overlays, load_task  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SMOKE = FIXTURES / "smoke"
GO_TASK = FIXTURES / "core" / "go-top-tags"


def _p95(values: list[float]) -> float:
    return sorted(values)[min(len(values) - 1, int(0.95 * len(values)))]


def _ms(values: list[float]) -> str:
    return f"min {min(values):6.2f}  median {statistics.median(values):6.2f}  p95 {_p95(values):6.2f} ms"


def start_cost(runs: int, figs: Figures) -> float:
    sandbox = make_sandbox("bwrap")
    empty = Path(tempfile.mkdtemp(prefix="qb-bench-"))
    raw, boxed = [], []
    limits = Limits(timeout_s=30)
    for _ in range(5):
        sandbox.run("true", empty, limits)
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(["true"])
        raw.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        result = sandbox.run("true", empty, limits)
        boxed.append((time.perf_counter() - started) * 1000)
        assert result.exit_status == 0, result
    shutil.rmtree(empty)
    print(f"raw subprocess.run(['true'])    {_ms(raw)}   (n={runs})")
    print(f"bwrap sandbox.run('true')       {_ms(boxed)}   (n={runs})")
    median = statistics.median(boxed)
    floor = statistics.median(raw)
    figs.add(
        "start.median_ms", median, "ms", floor=floor, floor_is="subprocess.run", target="<= 10 ms", ok=median <= 10
    )
    figs.add("start.p95_ms", _p95(boxed), "ms", floor=_p95(raw), floor_is="subprocess.run")
    return median


def _bare(task, env: dict[str, str]) -> float:
    work = Path(tempfile.mkdtemp(prefix="qb-bare-"))
    try:
        copy_with_overlays(task.workspace, work / "w", task.reference, task.hidden)
        cold = {"GOCACHE": str(work / "go-cache"), "GOPATH": str(work / "go-path")} if task.language == "go" else {}
        started = time.perf_counter()
        done = subprocess.run(["bash", "-c", task.hidden_cmd], cwd=work / "w", env=env | cold, capture_output=True)
        elapsed = (time.perf_counter() - started) * 1000
        assert done.returncode == 0, done.stdout[-2000:]
        return elapsed
    finally:
        shutil.rmtree(work)


def grading_overhead(grades: int, figs: Figures) -> float:
    grader = SandboxGrader(make_sandbox("bwrap"))
    env = base_env(tempfile.gettempdir(), tempfile.gettempdir()) | {"PATH": ":".join(host_paths().path_dirs)}
    env.update(dict(host_paths().env))
    worst = 0.0
    folders = [SMOKE / name for name in ("py-word-count", "js-clamp-range", "rs-saturating-sum")]
    if shutil.which("go") and GO_TASK.is_dir():
        folders.append(GO_TASK)
    for folder in folders:
        name = folder.name
        task = load_task(folder)
        final = Path(tempfile.mkdtemp(prefix="qb-final-"))
        copy_with_overlays(task.workspace, final / "w", task.reference)
        grader.expected_tests(task)  # the reference count is taken once per task: not timed
        bare, graded = [], []
        for _ in range(grades):
            bare.append(_bare(task, env))
            started = time.perf_counter()
            grade = grader.grade(task, final / "w")
            graded.append((time.perf_counter() - started) * 1000)
            assert grade.verdict == "pass", grade.output
        shutil.rmtree(final)
        ratio = statistics.median(graded) / statistics.median(bare)
        worst = max(worst, ratio)
        figs.add(
            f"grade.{name}.ms",
            statistics.median(graded),
            "ms",
            floor=statistics.median(bare),
            floor_is="bare hidden command",
        )
        figs.add(f"grade.{name}.ratio", ratio, "x", target="<= 1.15x", ok=ratio <= 1.15)
        print(f"{name:<18} bare {_ms(bare)}")
        print(f"{'':<18} graded {_ms(graded)}   ratio of medians {ratio:.2f}x (n={grades})")
    return worst


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--grades", type=int, default=9)
    add_json_argument(parser)
    args = parser.parse_args(argv)
    figs = Figures("sandbox")
    print(f"load average {figs.load_start:.2f} on {os.cpu_count()} cores")
    median = start_cost(args.runs, figs)
    worst = grading_overhead(args.grades, figs)
    print(f"sandboxed `true`: median {median:.2f} ms (target <= 10 ms)")
    print(f"grading over the bare command: worst ratio of medians {worst:.2f}x (target <= 1.15x)")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    figs.write(args.json)
    return 0 if median <= 10 and worst <= 1.15 else 1


if __name__ == "__main__":
    sys.exit(main())
