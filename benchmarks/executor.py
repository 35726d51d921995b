"""What running sandboxed commands on Ray costs, and what it buys (issue 18 targets).

1. Per-command overhead of the Ray executor over the local one, on the same machine: the same
   sandboxed `true`, interleaved so both see the same load. Target: <= 50 ms per command.
2. Grading throughput with 1 vs 2 Ray worker processes on one node (a local Ray with
   num_cpus = 1, then 2): K hidden-test runs of the smoke suite's python task submitted at once;
   commands per second, beside the local executor with 1 and 2 grading threads.

    python benchmarks/executor.py [--runs 60] [--grades 12]        (needs the [ray] extra)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.figures import Figures, add_json_argument  # noqa: E402
from verifiers.executors import close_executor, make_executor  # noqa: E402
from verifiers.grading import SandboxGrader  # noqa: E402
from verifiers.sandbox import Limits  # noqa: E402
from verifiers.tasks import copy_with_overlays, load_task  # noqa: E402

SMOKE = Path(__file__).resolve().parent.parent / "fixtures" / "smoke"


def overhead(runs: int, figs: Figures) -> float:
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    local, remote = make_executor("local"), make_executor("ray")
    empty = Path(tempfile.mkdtemp(prefix="qb-bench-"))
    limits = Limits(timeout_s=30)
    for sandbox in (local, remote):
        for _ in range(3):
            sandbox.run("true", empty, limits)
    times: dict[str, list[float]] = {"local": [], "ray": []}
    for _ in range(runs):
        for name, sandbox in (("local", local), ("ray", remote)):
            started = time.perf_counter()
            assert sandbox.run("true", empty, limits).exit_status == 0
            times[name].append((time.perf_counter() - started) * 1000)
    ray.shutdown()
    for name, values in times.items():
        print(
            f"{name:<6} executor, sandboxed `true`: min {min(values):6.1f}  median {statistics.median(values):6.1f} ms (n={runs})"
        )
    local_ms, ray_ms = statistics.median(times["local"]), statistics.median(times["ray"])
    figs.add("true.ray_ms", ray_ms, "ms", floor=local_ms, floor_is="local executor")
    figs.add("true.overhead_ms", ray_ms - local_ms, "ms", target="<= 50 ms", ok=ray_ms - local_ms <= 50)
    return ray_ms - local_ms


def throughput(executor: str, workers: int, grades: int) -> float:
    task = load_task(SMOKE / "py-word-count")
    final = Path(tempfile.mkdtemp(prefix="qb-final-"))
    copy_with_overlays(task.workspace, final / "w", task.reference)
    if executor == "ray":
        import ray

        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, configure_logging=False)
    sandbox = make_executor(executor)
    grader = SandboxGrader(sandbox)
    grader.expected_tests(task)
    threads = max(workers, 8) if executor == "ray" else workers  # Ray queues; locally threads are the workers
    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        verdicts = list(pool.map(lambda _: grader.grade(task, final / "w").verdict, range(grades)))
    elapsed = time.perf_counter() - started
    assert verdicts == ["pass"] * grades, verdicts
    close_executor(sandbox)
    if executor == "ray":
        import ray

        ray.shutdown()
    rate = grades / elapsed
    print(
        f"{executor:<6} executor, {workers} worker(s): {grades} hidden-test runs in {elapsed:5.1f} s = {rate:.2f} per second"
    )
    return rate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--grades", type=int, default=12)
    add_json_argument(parser)
    args = parser.parse_args(argv)
    figs = Figures("executor")
    print(f"load average {figs.load_start:.2f} on {os.cpu_count()} cores")
    extra = overhead(args.runs, figs)
    rates = {(e, w): throughput(e, w, args.grades) for e in ("local", "ray") for w in (1, 2)}
    for w in (1, 2):
        figs.add(
            f"grades.{w}_workers.ray_per_s",
            rates[("ray", w)],
            "/s",
            floor=rates[("local", w)],
            floor_is="local executor",
        )
    print(f"Ray's overhead per command: {extra:.1f} ms (target <= 50 ms)")
    print(
        f"scaling on one node, 1 -> 2 workers: ray {rates[('ray', 2)] / rates[('ray', 1)]:.2f}x, "
        f"local {rates[('local', 2)] / rates[('local', 1)]:.2f}x"
    )
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    figs.write(args.json)
    return 0 if extra <= 50 else 1


if __name__ == "__main__":
    sys.exit(main())
