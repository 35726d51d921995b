"""One whole run, timed from opening the ledger to the run's end, in a fresh process (what a
`quotabench run` pays per call once its modules are imported): the engine with everything it
sets up per run, or the bare-client floor, a plain httpx loop sending the same requests. The
ledger exists already, as it does from a user's second run on; creating its schema is timed
apart.

    python benchmarks/whole_run.py engine [--url URL] [--no-stream] [--attempts 10] [--turns 20] [--bodies FILE]
    python benchmarks/whole_run.py bare [--url URL] [--no-stream] --bodies FILE

Without --url the endpoint is in process (benchmarks/canned.py's MockTransport handler); with
it, the canned server at that URL over loopback HTTP. `engine --bodies` writes the requests it
sent in process, which `bare --bodies` replays either way. Prints one JSON line: calls, wall and CPU per call over the
whole run, the time to the first call, and the steady gap between calls.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent.config import ArmConfig, Limits, RunConfig  # noqa: E402
from agent.ledger import Ledger  # noqa: E402
from agent.run import arms as arm_kinds  # noqa: E402
from agent.run.engine import RunEngine  # noqa: E402
from benchmarks import canned  # noqa: E402
from verifiers.grading import GradeResult  # noqa: E402
from verifiers.tasks import Task  # noqa: E402

_SENT: list[bytes] = []


def _recording(request: httpx.Request) -> httpx.Response:
    if not request.url.path.endswith("/models"):
        _SENT.append(request.content)
    return canned.handler(request)


class NoGrader:  # a verifiers.grading.Grader (tests/test_architecture.py checks it fills the seam)
    def grade(self, task: Task, workspace: Path) -> GradeResult:
        return GradeResult("fail", 1, 0, 0, 1, "", {})

    def run_visible(self, task: Task, workspace: Path, timeout_s: float | None = None) -> GradeResult:
        return self.grade(task, workspace)


def config(attempts: int, turns: int, url: str | None = None, stream: bool = True) -> RunConfig:
    """One arm on the smoke suite's python task; every attempt runs `turns` calls, then is graded.
    Without `url` the arm is the in-process endpoint; `stream` False asks for whole JSON replies."""
    where = {"kind": "openai", "base_url": url} if url else {"kind": "instant"}
    arm = ArmConfig(name="A", model=canned.MODEL, cap_tokens=10**9, max_tokens=16, stream=stream, **where)
    return RunConfig(
        path=ROOT / "benchmarks" / "engine.py",
        suites=(ROOT / "fixtures" / "smoke",),
        tasks=("py-word-count",),
        arms=(arm,),
        max_attempts=attempts,
        limits=Limits(max_turns=turns, max_tokens_per_attempt=10**9),
        preflight="off",
    )


@contextlib.asynccontextmanager
async def _instant(arm, suites, replicate=1):
    yield arm_kinds.Endpoint("http://instant.invalid/v1", arm.model, {}, transport=httpx.MockTransport(_recording))


class StampedEngine(RunEngine):
    """Stamps each CallFinished when the engine emits it (a reader of the stream sees it later)."""

    stamps: list[tuple[int, float, float]]

    def emit(self, event) -> None:
        if type(event).__name__ == "CallFinished":
            self.stamps.append((event.attempt, time.perf_counter(), time.process_time()))
        super().emit(event)


def _per_call(started: tuple[float, float], calls: int) -> dict[str, float]:
    return {
        "calls": calls,
        "wall": (time.perf_counter() - started[0]) / calls * 1000,
        "cpu": (time.process_time() - started[1]) / calls * 1000,
    }


async def engine_run(db: Path, attempts: int, turns: int, url: str | None = None, stream: bool = True) -> dict:
    arm_kinds.FACTORIES["instant"] = _instant
    created = time.perf_counter()
    Ledger(db).close()  # a ledger's first run also creates its schema: timed apart, as a one-off
    created = time.perf_counter() - created
    started = time.perf_counter(), time.process_time()
    ledger = Ledger(db)
    engine = StampedEngine(config(attempts, turns, url, stream), ledger, grader=NoGrader(), config_text="")
    engine.stamps = stamps = []

    async def drain():
        async for _ in engine.events:
            pass

    async with anyio.create_task_group() as tg:
        tg.start_soon(drain)
        await engine.run()
    ledger.close()
    out = _per_call(started, len(stamps))
    gaps = [b - a for (n1, a, _), (n2, b, _) in zip(stamps, stamps[1:]) if n1 == n2]
    return out | {
        "first_call": (stamps[0][1] - started[0]) * 1000,
        "new_ledger": created * 1000,
        "gap_median": statistics.median(gaps) * 1000,
        "gap_min": min(gaps) * 1000,
        "gap_cpu": (stamps[-1][2] - stamps[0][2]) / (len(stamps) - 1) * 1000,
    }


async def bare_run(bodies: list[bytes], url: str | None) -> dict:
    """The floor: the same request bodies through a bare httpx client, each reply read and parsed."""
    started = time.perf_counter(), time.process_time()
    transport = None if url else httpx.MockTransport(canned.handler)
    async with httpx.AsyncClient(base_url=url or "http://instant.invalid/v1", transport=transport) as client:
        for body in bodies:
            headers = {"content-type": "application/json"}
            async with client.stream("POST", "/chat/completions", content=body, headers=headers) as response:
                if response.headers["content-type"].startswith("text/event-stream"):
                    async for line in response.aiter_lines():
                        if line.startswith("data: ") and line != "data: [DONE]":
                            json.loads(line[6:])
                else:
                    json.loads(await response.aread())
    return _per_call(started, len(bodies))


def replayed(bodies: list[str], stream: bool) -> list[bytes]:
    """The recorded requests as the floor sends them, asking for a stream or not as the run did."""
    out = []
    for text in bodies:
        body = json.loads(text)
        body["stream"] = stream
        if not stream:
            body.pop("stream_options", None)
        out.append(json.dumps(body).encode())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("engine", "bare"))
    parser.add_argument("--url", help="the canned server's base URL (default: in process)")
    parser.add_argument("--attempts", type=int, default=10)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--bodies", type=Path, help="engine: write the requests sent here; bare: replay them")
    parser.add_argument("--no-stream", dest="stream", action="store_false", help="whole JSON replies, not a stream")
    args = parser.parse_args(argv)
    if args.what == "engine":
        with tempfile.TemporaryDirectory() as tmp:
            result = anyio.run(engine_run, Path(tmp) / "run.sqlite", args.attempts, args.turns, args.url, args.stream)
        if args.bodies:
            args.bodies.write_text(json.dumps([b.decode() for b in _SENT]))
    else:
        result = anyio.run(bare_run, replayed(json.loads(args.bodies.read_text()), args.stream), args.url)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
