"""Memory over a run (issue 15 target): the peak RSS of a 1,000-task scripted run within 10% of
a 100-task run.

Each size runs in a fresh interpreter: a suite of N copies of fixtures/core/py-tail-lines, the
scripted server in the same process (over loopback HTTP), two arms (A `solver`, B `wrong`, both
with native tool calls, so every request carries the tools list), one attempt per task, a real
ledger file. Grading is a stub that fails every attempt: the hidden tests run in sandboxed
subprocesses whose memory is not the harness's, and what grows with a run is the harness. The
floor is the same process after the server, engine and ledger are up but before any attempt.

    python benchmarks/memory.py [--small 100] [--large 1000]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.figures import Figures, add_json_argument  # noqa: E402

TASK = ROOT / "fixtures" / "core" / "py-tail-lines"
TARGET = 1.10


def _suite(folder: Path, n: int) -> Path:
    suite = folder / "suite"
    for i in range(n):
        task_id = f"py-tail-{i:04d}"
        shutil.copytree(TASK, suite / task_id)
        toml = suite / task_id / "task.toml"
        toml.write_text(re.sub(r'^id = ".*"$', f'id = "{task_id}"', toml.read_text(), count=1, flags=re.M))
    return suite


def _rss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def child(n: int) -> None:
    import anyio

    from agent.config import load_config
    from agent.endpoints.scripted_server import ScriptedServer
    from agent.ledger import Ledger
    from agent.run.engine import RunEngine
    from verifiers.grading import GradeResult

    class FailingGrader:
        def grade(self, task, workspace):
            return GradeResult("fail", 1, 1, 0, 1, "1 failed", {})

        def run_visible(self, task, workspace, timeout_s=None):
            return self.grade(task, workspace)

    with tempfile.TemporaryDirectory() as tmp:
        suite = _suite(Path(tmp), n)
        with ScriptedServer([suite]) as server:
            arms = "".join(
                f'[[arms]]\nname = "{name}"\nkind = "openai"\nmodel = "{model}"\nbase_url = "{server.base_url}"\n'
                f"cap_tokens = 1000000000\nprice = {{ input_per_mtok = 1.0, output_per_mtok = 2.0 }}\n"
                for name, model in (("A", "solver"), ("B", "wrong"))
            )
            config = Path(tmp) / "run.toml"
            config.write_text(f'[run]\nsuites = ["{suite}"]\nmax_attempts = 1\n[run.limits]\nmax_turns = 6\n' + arms)
            engine = RunEngine(load_config(config), Ledger(Path(tmp) / "l.sqlite"), grader=FailingGrader())
            floor = _rss_kb()

            async def go() -> None:
                async with anyio.create_task_group() as tg:

                    async def drain() -> None:
                        async for _ in engine.events:
                            pass

                    tg.start_soon(drain)
                    await engine.run()

            started = time.perf_counter()
            anyio.run(go)
            seconds = time.perf_counter() - started
            attempts = engine.ledger_sync.query("select count(*) as n from attempts")[0]["n"]
    print(f"floor_kb={floor} peak_kb={_rss_kb()} attempts={attempts} requests={server.served} seconds={seconds:.1f}")


def measure(n: int) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(n)], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    return {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", out)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=1000)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    add_json_argument(parser)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    figs = Figures("memory")
    load = figs.load_start
    small, large = measure(args.small), measure(args.large)
    load = max(load, os.getloadavg()[0])
    print(f"load average {load:.1f} on {os.cpu_count()} cores (1-minute, the higher of start and end)")
    for n, m in ((args.small, small), (args.large, large)):
        print(
            f"{n:>5}-task scripted run: peak RSS {m['peak_kb'] / 1024:6.1f} MB (floor before the first attempt "
            f"{m['floor_kb'] / 1024:6.1f} MB; {m['attempts']:.0f} attempts, {m['requests']:.0f} requests, {m['seconds']:.0f} s)"
        )
    ratio = large["peak_kb"] / small["peak_kb"]
    for n, m in ((args.small, small), (args.large, large)):
        figs.add(
            f"{n}.peak_mb", m["peak_kb"] / 1024, "MB", floor=m["floor_kb"] / 1024, floor_is="before the first attempt"
        )
    figs.add("ratio", ratio, "x", target=f"<= {TARGET:.2f}", ok=ratio <= TARGET)
    figs.write(args.json)
    print(f"{args.large} tasks / {args.small} tasks peak RSS: {ratio:.3f} (target <= {TARGET:.2f})")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
