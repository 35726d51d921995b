"""Engine overhead per model call, and ledger write throughput.

Targets (issue 4): engine overhead <= 2 ms per model call with an instant endpoint; ledger
>= 2,000 call rows/s. The instant endpoint is an httpx MockTransport answering a streamed
`list_files` tool call at once, so what is timed is everything quotabench does per call:
quota reservation, the in-flight and final ledger rows (awaited, in WAL mode), SSE parsing,
tool execution and events.

    python benchmarks/engine.py
"""
from __future__ import annotations

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

from agent import arms as arm_kinds  # noqa: E402
from agent.config import ArmConfig, Limits, RunConfig  # noqa: E402
from agent.engine import RunEngine  # noqa: E402
from agent.ledger import Ledger, new_id, utc_now  # noqa: E402
from agent.ledger.writer import AsyncLedger  # noqa: E402
from verifiers.grading import GradeResult  # noqa: E402

TURNS = 20        # a realistic conversation length; the token estimate is O(turns) per call
ATTEMPTS = 20


def _sse(chunks: list[dict]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def _handler(request: httpx.Request) -> httpx.Response:
    if request.url.path.endswith("/models"):
        return httpx.Response(200, json={"data": [{"id": "instant"}]})
    body = _sse([
        {"model": "instant", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": "c1", "type": "function", "function": {"name": "list_files", "arguments": "{}"}}]}}]},
        {"model": "instant", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"model": "instant", "choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 10}},
    ])
    return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})


@contextlib.asynccontextmanager
async def _instant(arm, suites, replicate=1):
    yield arm_kinds.Endpoint("http://instant.invalid/v1", arm.model, {}, transport=httpx.MockTransport(_handler))


class NoGrader:
    def grade(self, task, workspace):
        return GradeResult("fail", 1, 0, 0, 1, "", {})

    def run_visible(self, task, workspace, timeout_s=None):
        return self.grade(task, workspace)


async def engine_overhead(db: Path) -> tuple[float, float]:
    """(median wall ms between consecutive calls of an attempt, CPU ms per call)."""
    arm_kinds.ARM_KINDS["instant"] = _instant
    config = RunConfig(
        path=ROOT / "benchmarks" / "engine.py", suites=(ROOT / "fixtures" / "smoke",), tasks=("py-word-count",),
        arms=(ArmConfig(name="A", kind="instant", model="instant", cap_tokens=10**9, max_tokens=16),),
        max_attempts=ATTEMPTS, limits=Limits(max_turns=TURNS + 1, max_tokens_per_attempt=10**9), preflight="off")
    engine = RunEngine(config, Ledger(db), grader=NoGrader(), config_text="")
    stamps: list[tuple[int, float]] = []

    async def drain():
        async for event in engine.events:
            if type(event).__name__ == "CallFinished":
                stamps.append((event.attempt, time.perf_counter()))

    cpu = time.process_time()
    async with anyio.create_task_group() as tg:
        tg.start_soon(drain)
        await engine.run()
    cpu = time.process_time() - cpu
    gaps = [b - a for (n1, a), (n2, b) in zip(stamps, stamps[1:]) if n1 == n2]
    return statistics.median(gaps) * 1000, cpu / len(stamps) * 1000


async def ledger_rows_per_second(db: Path, rows: int = 5000) -> float:
    ledger = AsyncLedger(Ledger(db))
    attempt = ledger.ledger.query("select id from attempts limit 1")[0]["id"]
    started = time.perf_counter()
    for i in range(rows):
        await ledger.insert("calls", {
            "id": new_id(), "attempt_id": attempt, "run_id": "bench", "arm": "A", "turn": i, "retry_index": 0,
            "started_utc": utc_now(), "latency_ms": 1, "status": "ok", "prompt_tokens": 100, "completion_tokens": 10,
            "usage_source": "reported", "reserved_tokens": 200, "response_text": "", "tool_calls_json": "[]"})
    return rows / (time.perf_counter() - started)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.sqlite"
        per_call_ms, cpu_ms = anyio.run(engine_overhead, db)
        rows_per_s = anyio.run(ledger_rows_per_second, db)
    load = os.getloadavg()[0]
    print(f"engine overhead per model call: {per_call_ms:.2f} ms wall (median), {cpu_ms:.2f} ms CPU "
          f"({ATTEMPTS} attempts x {TURNS} turns; target <= 2 ms; load average {load:.1f} on {os.cpu_count()} cores)")
    print(f"ledger writes: {rows_per_s:,.0f} call rows/s (awaited one by one, WAL; target >= 2,000)")
    return 0 if per_call_ms <= 2 and rows_per_s >= 2000 else 1


if __name__ == "__main__":
    sys.exit(main())
