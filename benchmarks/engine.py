"""Per model call: what quotabench costs, beside its floors, in one process (issue 15 targets).

1. Engine overhead per model call with the ledger on. The endpoint is an httpx MockTransport
   answering a streamed `list_files` tool call at once, so what is timed is everything
   quotabench does per call: quota reservation and token estimate, the in-flight and final
   ledger rows (WAL), SSE parsing, the tool, events, and (amortized) each attempt's start and
   end. Wall: median and min gap between consecutive calls of an attempt; CPU: process CPU
   from the first call to the last over the calls in between (every thread).
   Targets: <= 2 ms wall, <= 1.5 ms CPU.
   Floor: the engine's own requests sent again through the bare ChatClient (no engine, no ledger).
2. Ledger writes as real calls make them (the awaited in-flight row with the pending tool
   row, then the call's final row and the attempt's totals, queued), through AsyncLedger, in
   calls per second: one attempt at a time (every write waits for the one before), two and four
   at once (writes that meet in the writer's queue commit together). Target: >= 5,000 with two
   in flight, the fewest a paired run has (one per arm); one at a time pays a thread handoff
   per call (~50 µs on the event loop's side) and is printed beside it. Floor: the same rows
   as prepared sqlite3 statements on the same connection, on the caller's thread.

    python benchmarks/engine.py [--attempts 20] [--turns 20] [--repeats 3]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
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
from agent.endpoints.endpoint import ChatClient  # noqa: E402
from agent.ledger import Ledger, new_id, utc_now  # noqa: E402
from agent.ledger.writer import AsyncLedger  # noqa: E402
from agent.run import arms as arm_kinds  # noqa: E402
from agent.run.engine import RunEngine  # noqa: E402
from verifiers.grading import GradeResult  # noqa: E402
from verifiers.tasks import Task  # noqa: E402

WALL_TARGET_MS, CPU_TARGET_MS, ROWS_TARGET = 2.0, 1.5, 5000


def _sse(chunks: list[dict]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


_BODIES: list[bytes] = []  # the first attempt's requests, replayed by the floor


def _handler(request: httpx.Request) -> httpx.Response:
    if request.url.path.endswith("/models"):
        return httpx.Response(200, json={"data": [{"id": "instant"}]})
    if len(_BODIES) < 64:
        _BODIES.append(request.content)
    body = _sse(
        [
            {
                "model": "instant",
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "c1",
                                    "type": "function",
                                    "function": {"name": "list_files", "arguments": "{}"},
                                }
                            ]
                        },
                    }
                ],
            },
            {"model": "instant", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
            {"model": "instant", "choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 10}},
        ]
    )
    return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})


@contextlib.asynccontextmanager
async def _instant(arm, suites, replicate=1):
    yield arm_kinds.Endpoint("http://instant.invalid/v1", arm.model, {}, transport=httpx.MockTransport(_handler))


class NoGrader:  # a verifiers.grading.Grader (tests/test_architecture.py checks it fills the seam)
    def grade(self, task: Task, workspace: Path) -> GradeResult:
        return GradeResult("fail", 1, 0, 0, 1, "", {})

    def run_visible(self, task: Task, workspace: Path, timeout_s: float | None = None) -> GradeResult:
        return self.grade(task, workspace)


def _config(attempts: int, turns: int) -> RunConfig:
    return RunConfig(
        path=ROOT / "benchmarks" / "engine.py",
        suites=(ROOT / "fixtures" / "smoke",),
        tasks=("py-word-count",),
        arms=(ArmConfig(name="A", kind="instant", model="instant", cap_tokens=10**9, max_tokens=16),),
        max_attempts=attempts,
        limits=Limits(max_turns=turns + 1, max_tokens_per_attempt=10**9),
        preflight="off",
    )


class _StampedEngine(RunEngine):
    """Stamps each CallFinished when the engine emits it (a reader of the stream sees it later)."""

    stamps: list[tuple[int, float, float]]

    def emit(self, event) -> None:
        if type(event).__name__ == "CallFinished":
            self.stamps.append((event.attempt, time.perf_counter(), time.process_time()))
        super().emit(event)


async def engine_per_call(db: Path, attempts: int, turns: int) -> dict:
    arm_kinds.ARM_KINDS["instant"] = _instant
    engine = _StampedEngine(_config(attempts, turns), Ledger(db), grader=NoGrader(), config_text="")
    engine.stamps = stamps = []

    async def drain():
        async for _ in engine.events:
            pass

    async with anyio.create_task_group() as tg:
        tg.start_soon(drain)
        await engine.run()
    gaps = [b - a for (n1, a, _), (n2, b, _) in zip(stamps, stamps[1:]) if n1 == n2]
    cpu = (stamps[-1][2] - stamps[0][2]) / (len(stamps) - 1)
    return {
        "calls": len(stamps),
        "wall_median": statistics.median(gaps) * 1000,
        "wall_min": min(gaps) * 1000,
        "cpu": cpu * 1000,
    }


async def bare_client_per_call(calls: int) -> dict:
    """The floor: the engine's own requests (the first attempt's conversation at every length)
    sent again through the ChatClient alone, each on a fresh copy (so its token estimate is
    computed, as the engine's is once per call)."""
    config = _config(1, 1).arms[0]
    client = ChatClient(
        arm_kinds.settings_for(config, "http://instant.invalid/v1"), transport=httpx.MockTransport(_handler)
    )
    bodies = list(_BODIES)
    walls, cpu = [], 0.0
    for i in range(calls):
        body = json.loads(bodies[i % len(bodies)])
        cpu0, started = time.process_time(), time.perf_counter()
        await client.complete(body["messages"], body.get("tools"))
        walls.append(time.perf_counter() - started)
        cpu += time.process_time() - cpu0
    await client.aclose()
    return {"wall_median": statistics.median(walls) * 1000, "wall_min": min(walls) * 1000, "cpu": cpu / calls * 1000}


def _call_ops(attempt: str, turn: int) -> tuple[list[tuple], str, list[tuple]]:
    """The rows one real call writes (agent/run/attempt.py): before the request, the pending tool row
    and the in-flight call row; after it, the call's final row and the attempt's totals."""
    call_id = new_id()
    before = [
        (
            "insert",
            "tool_calls",
            {
                "id": new_id(),
                "attempt_id": attempt,
                "turn": turn,
                "tool": "list_files",
                "arguments_json": "{}",
                "ok": 1,
                "error": None,
                "path": None,
                "result": "README.md\nwordcount.py",
            },
        ),
        (
            "insert",
            "calls",
            {
                "id": call_id,
                "attempt_id": attempt,
                "run_id": "bench",
                "arm": "A",
                "turn": turn,
                "retry_index": 0,
                "started_utc": utc_now(),
                "status": "in_flight",
                "reserved_tokens": 200,
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "usage_source": "none",
            },
        ),
    ]
    after = [
        (
            "update",
            "calls",
            call_id,
            {
                "attempt_id": attempt,
                "run_id": "bench",
                "arm": "A",
                "turn": turn,
                "retry_index": 0,
                "started_utc": utc_now(),
                "latency_ms": 1,
                "status": "ok",
                "http_status": 200,
                "prompt_tokens": 100,
                "completion_tokens": 10,
                "usage_source": "reported",
                "reserved_tokens": 200,
                "model_reported": "instant",
                "system_fingerprint": None,
                "finish_reason": "tool_calls",
                "error": None,
                "response_text": "",
                "tool_calls_json": '[{"arguments": "{}", "id": "c1", "name": "list_files"}]',
            },
        ),
        (
            "update",
            "attempts",
            attempt,
            {
                "prompt_tokens": 100 * turn,
                "completion_tokens": 10 * turn,
                "total_tokens": 110 * turn,
                "calls": turn,
                "transport_retries": 0,
            },
        ),
    ]
    return before, call_id, after


async def ledger_calls_per_second(db: Path, calls: int, in_flight: int = 1) -> float:
    """Calls written per second through AsyncLedger as agent/run/attempt.py writes them, by
    `in_flight` attempts at once (a run has two arms, each maybe several attempts at a time)."""
    ledger = AsyncLedger(Ledger(db))
    attempt = ledger.ledger.query("select id from attempts limit 1")[0]["id"]

    async def attempt_writes(first: int) -> None:
        for turn in range(first, calls, in_flight):
            before, _, after = _call_ops(attempt, turn)
            await ledger.batch(before)  # awaited: the in-flight row is committed before the request
            ledger.batch_queued(after)  # queued in order behind it, committed while the tool runs

    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for first in range(in_flight):
            tg.start_soon(attempt_writes, first)
    await ledger.flush()
    return calls / (time.perf_counter() - started)


def raw_calls_per_second(db: Path, calls: int) -> float:
    """The floor: the same rows through prepared sqlite3 statements, one transaction each side."""
    ledger = Ledger(db)
    conn = ledger.conn
    attempt = ledger.query("select id from attempts limit 1")[0]["id"]
    started = time.perf_counter()
    for turn in range(calls):
        before, call_id, after = _call_ops(attempt, turn)
        for ops in (before, after):
            conn.execute("BEGIN IMMEDIATE")
            for kind, table, *rest in ops:
                if kind == "insert":
                    row = rest[0]
                    conn.execute(
                        f"insert into {table} ({', '.join(row)}) values ({', '.join('?' * len(row))})",
                        list(row.values()),
                    )
                else:
                    key, fields = rest
                    conn.execute(
                        f"update {table} set {', '.join(f'{c} = ?' for c in fields)} where id = ?",
                        [*fields.values(), key],
                    )
            conn.execute("COMMIT")
    rate = calls / (time.perf_counter() - started)
    ledger.close()
    return rate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=20)
    parser.add_argument("--turns", type=int, default=20, help="calls per attempt (the token estimate is O(turns))")
    parser.add_argument("--rows", type=int, default=5000, help="calls written in the ledger throughput test")
    parser.add_argument("--repeats", type=int, default=3, help="rounds; each figure is the median over them")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    rounds: list[dict] = []
    for _ in range(args.repeats):  # interleaved, so each figure and its floor see the same load
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "bench.sqlite"
            engine = anyio.run(engine_per_call, db, args.attempts, args.turns)
            bare = anyio.run(bare_client_per_call, 400)
            rounds.append(
                {
                    "wall_median": engine["wall_median"],
                    "wall_min": engine["wall_min"],
                    "cpu": engine["cpu"],
                    "calls": engine["calls"],
                    "bare_wall_median": bare["wall_median"],
                    "bare_wall_min": bare["wall_min"],
                    "bare_cpu": bare["cpu"],
                    "rows": anyio.run(ledger_calls_per_second, db, args.rows),
                    "raw": raw_calls_per_second(db, args.rows),
                    "rows_2": anyio.run(ledger_calls_per_second, db, args.rows, 2),
                    "rows_4": anyio.run(ledger_calls_per_second, db, args.rows, 4),
                }
            )
    m = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
    load = max(load_before, os.getloadavg()[0])
    print(
        f"load average {load:.1f} on {os.cpu_count()} cores (1-minute, the higher of start and end); "
        f"medians of {args.repeats} rounds"
    )
    print(
        f"per model call, engine + ledger: {m['wall_median']:.2f} ms wall median ({m['wall_min']:.2f} min), "
        f"{m['cpu']:.2f} ms CPU ({m['calls']:.0f} calls: {args.attempts} attempts x {args.turns} turns; "
        f"targets <= {WALL_TARGET_MS:g} ms wall, <= {CPU_TARGET_MS:g} ms CPU)"
    )
    print(
        f"  floor, the engine's own requests through the bare ChatClient: {m['bare_wall_median']:.2f} ms wall median "
        f"({m['bare_wall_min']:.2f} min), {m['bare_cpu']:.2f} ms CPU"
    )
    print(
        f"ledger, real calls' writes through AsyncLedger: {m['rows_2']:,.0f} calls/s with two attempts in flight "
        f"(a paired run's two arms; target >= {ROWS_TARGET:,}); four: {m['rows_4']:,.0f}; one at a time: "
        f"{m['rows']:,.0f} (each write waits out the handoff to the writer thread)"
    )
    print(f"  floor, the same rows as prepared sqlite3 statements on the caller's thread: {m['raw']:,.0f} calls/s")
    ok = m["wall_median"] <= WALL_TARGET_MS and m["cpu"] <= CPU_TARGET_MS and m["rows_2"] >= ROWS_TARGET
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
