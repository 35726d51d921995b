"""Per model call: what quotabench costs, beside its floors (issue 15 and 28 targets).

1. Between calls, with the ledger on. The endpoint is benchmarks/canned.py's MockTransport
   answering a streamed `list_files` tool call at once, so what is timed is everything
   quotabench does per call: quota reservation and token estimate, the in-flight and final
   ledger rows (WAL), SSE parsing, the tool, events. Wall: median and min gap between
   consecutive calls of an attempt; CPU: process CPU from the first call to the last over the
   calls in between (every thread). Targets: <= 2 ms wall, <= 1.5 ms CPU.
   Floor: the engine's own requests sent again through the bare ChatClient (no engine, no ledger).
2. Over a whole run, setup included (benchmarks/whole_run.py): a fresh process opens the ledger,
   runs 10 attempts x 20 calls and ends; wall and CPU (every thread) over the whole of it per
   call. In process, and over loopback HTTP against the canned server in its own process, both
   streamed and as whole JSON replies. Floor: a bare httpx loop sending the same requests to the
   same endpoint, also a fresh process. Targets: <= 1.5 ms CPU per call in process; over HTTP
   <= 2.5x the floor's wall per call. The time to the first call is printed beside it.
3. Ledger writes as real calls make them (the awaited in-flight row with the pending tool
   row, then the call's final row and the attempt's totals, queued), through AsyncLedger, in
   calls per second: one attempt at a time (every write waits for the one before), two and four
   at once (writes that meet in the writer's queue commit together). Target: >= 5,000 with two
   in flight, the fewest a paired run has (one per arm); one at a time pays a thread handoff
   per call (~50 µs on the event loop's side) and is printed beside it. Floor: the same rows
   as prepared sqlite3 statements on the same connection, on the caller's thread.

Rounds are interleaved, so each figure and its floor see the same load; figures are medians.

    python benchmarks/engine.py [--attempts 20] [--turns 20] [--repeats 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent.endpoints.endpoint import ChatClient  # noqa: E402
from agent.ledger import Ledger, new_id, utc_now  # noqa: E402
from agent.ledger.ops import Insert, Op, Update  # noqa: E402
from agent.ledger.writer import AsyncLedger  # noqa: E402
from agent.run import arms as arm_kinds  # noqa: E402
from benchmarks import canned, whole_run  # noqa: E402
from benchmarks.figures import Figures, add_json_argument  # noqa: E402

WALL_TARGET_MS, CPU_TARGET_MS, ROWS_TARGET = 2.0, 1.5, 5000
WHOLE_CPU_TARGET_MS, HTTP_FLOOR_RATIO = 1.5, 2.5
MODES = {  # whole-run mode: (over HTTP, streamed)
    "in_process": (False, True),
    "http_sse": (True, True),
    "http_json": (True, False),
}


async def bare_client_per_call(bodies: list[bytes], calls: int) -> dict:
    """The floor: the engine's own requests (its first attempt's conversation at every length)
    sent again through the ChatClient alone, each on a fresh copy (so its token estimate is
    computed, as the engine's is once per call)."""
    config = whole_run.config(1, 1).arms[0]
    client = ChatClient(
        arm_kinds.settings_for(config, "http://instant.invalid/v1"), transport=httpx.MockTransport(canned.handler)
    )
    walls, cpu = [], 0.0
    for i in range(calls):
        body = json.loads(bodies[i % len(bodies)])
        cpu0, started = time.process_time(), time.perf_counter()
        await client.complete(body["messages"], body.get("tools"))
        walls.append(time.perf_counter() - started)
        cpu += time.process_time() - cpu0
    await client.aclose()
    return {"wall_median": statistics.median(walls) * 1000, "wall_min": min(walls) * 1000, "cpu": cpu / calls * 1000}


def _call_ops(attempt: str, turn: int) -> tuple[list[Op], str, list[Op]]:
    """The rows one real call writes (agent/run/calls.py): before the request, the pending tool row
    and the in-flight call row; after it, the call's final row and the attempt's totals."""
    call_id = new_id()
    before = [
        Insert(
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
        Insert(
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
        Update(
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
        Update(
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
    """Calls written per second through AsyncLedger as agent/run/calls.py writes them, by
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
            for op in ops:
                if isinstance(op, Insert):
                    conn.execute(
                        f"insert into {op.table} ({', '.join(op.row)}) values ({', '.join('?' * len(op.row))})",
                        list(op.row.values()),
                    )
                elif isinstance(op, Update):
                    conn.execute(
                        f"update {op.table} set {', '.join(f'{c} = ?' for c in op.fields)} where id = ?",
                        [*op.fields.values(), op.id],
                    )
            conn.execute("COMMIT")
    rate = calls / (time.perf_counter() - started)
    ledger.close()
    return rate


@contextlib.contextmanager
def canned_server() -> Iterator[str]:
    """benchmarks/canned.py serving on a free loopback port in its own process; yields its base URL."""
    proc = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "canned.py")], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield f"http://127.0.0.1:{int(proc.stdout.readline())}/v1"
    finally:
        proc.terminate()
        proc.wait()


def _child(*args: object) -> dict:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "whole_run.py"), *map(str, args)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


def whole_run_round(url: str, bodies: Path) -> dict[str, dict]:
    """One round of whole runs in fresh processes: per mode, the engine's run and its floor."""
    out = {}
    for mode, (http, stream) in MODES.items():
        where = ["--url", url] if http else []
        flags = [] if stream else ["--no-stream"]
        record = [] if http else ["--bodies", bodies]  # the in-process run records what the floors replay
        out[mode] = _child("engine", *where, *flags, *record)
        out[f"{mode}_floor"] = _child("bare", *where, *flags, "--bodies", bodies)
    return out


def _median(rounds: list[dict], key: str, field: str) -> float:
    return statistics.median(r[key][field] for r in rounds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=20)
    parser.add_argument("--turns", type=int, default=20, help="calls per attempt (the token estimate is O(turns))")
    parser.add_argument("--rows", type=int, default=5000, help="calls written in the ledger throughput test")
    parser.add_argument("--repeats", type=int, default=3, help="rounds; each figure is the median over them")
    add_json_argument(parser)
    args = parser.parse_args(argv)
    figs = Figures("engine")
    rounds: list[dict] = []
    whole: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp, canned_server() as url:
        for _ in range(args.repeats):  # interleaved, so each figure and its floor see the same load
            db = Path(tmp) / "bench.sqlite"
            whole_run._SENT.clear()
            engine = anyio.run(whole_run.engine_run, db, args.attempts, args.turns)
            bare = anyio.run(bare_client_per_call, list(whole_run._SENT), 400)
            rounds.append(
                {
                    "wall_median": engine["gap_median"],
                    "wall_min": engine["gap_min"],
                    "cpu": engine["gap_cpu"],
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
            db.unlink()
            whole.append(whole_run_round(url, Path(tmp) / "bodies.json"))
    m = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
    print(
        f"load average {figs.load_start:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (1-minute); "
        f"medians of {args.repeats} rounds"
    )
    figs.add(
        "between.wall_median_ms",
        m["wall_median"],
        "ms",
        floor=m["bare_wall_median"],
        floor_is="bare ChatClient",
        target=f"<= {WALL_TARGET_MS:g} ms",
        ok=m["wall_median"] <= WALL_TARGET_MS,
    )
    figs.add("between.wall_min_ms", m["wall_min"], "ms", floor=m["bare_wall_min"], floor_is="bare ChatClient")
    figs.add(
        "between.cpu_ms",
        m["cpu"],
        "ms",
        floor=m["bare_cpu"],
        floor_is="bare ChatClient",
        target=f"<= {CPU_TARGET_MS:g} ms",
        ok=m["cpu"] <= CPU_TARGET_MS,
    )
    print(
        f"between calls, engine + ledger: {m['wall_median']:.2f} ms wall median ({m['wall_min']:.2f} min), "
        f"{m['cpu']:.2f} ms CPU ({m['calls']:.0f} calls: {args.attempts} attempts x {args.turns} turns; "
        f"targets <= {WALL_TARGET_MS:g} ms wall, <= {CPU_TARGET_MS:g} ms CPU)"
    )
    print(
        f"  floor, the engine's own requests through the bare ChatClient: {m['bare_wall_median']:.2f} ms wall median "
        f"({m['bare_wall_min']:.2f} min), {m['bare_cpu']:.2f} ms CPU"
    )
    calls = whole[0]["in_process"]["calls"]
    print(f"over a whole run in a fresh process, setup included ({calls} calls: 10 attempts x 20 turns), per call:")
    for mode in MODES:
        wall, cpu = _median(whole, mode, "wall"), _median(whole, mode, "cpu")
        floor_wall, floor_cpu = _median(whole, f"{mode}_floor", "wall"), _median(whole, f"{mode}_floor", "cpu")
        first = _median(whole, mode, "first_call")
        ratio = wall / floor_wall
        http = MODES[mode][0]
        figs.add(
            f"whole_run.{mode}.wall_ms",
            wall,
            "ms",
            floor=floor_wall,
            floor_is="bare httpx loop",
            target=f"<= {HTTP_FLOOR_RATIO:g}x the floor" if http else None,
            ok=ratio <= HTTP_FLOOR_RATIO if http else None,
        )
        figs.add(
            f"whole_run.{mode}.cpu_ms",
            cpu,
            "ms",
            floor=floor_cpu,
            floor_is="bare httpx loop",
            target=None if http else f"<= {WHOLE_CPU_TARGET_MS:g} ms",
            ok=None if http else cpu <= WHOLE_CPU_TARGET_MS,
        )
        figs.add(f"whole_run.{mode}.first_call_ms", first, "ms")
        target = (
            f"target <= {HTTP_FLOOR_RATIO:g}x the floor's wall" if http else f"target <= {WHOLE_CPU_TARGET_MS:g} ms CPU"
        )
        print(
            f"  {mode.replace('_', ' '):<10} {wall:5.2f} ms wall ({ratio:.2f}x the floor), {cpu:5.2f} ms CPU; "
            f"first call {first:.0f} ms after the ledger opened ({target})"
        )
        print(
            f"    floor, a bare httpx loop sending the same requests: {floor_wall:5.2f} ms wall, {floor_cpu:5.2f} ms CPU"
        )
    new_ledger = statistics.median(r["in_process"]["new_ledger"] for r in whole)
    figs.add("whole_run.new_ledger_ms", new_ledger, "ms")
    print(f"  once per ledger: creating its schema takes {new_ledger:.0f} ms (not in the figures above)")
    figs.add(
        "ledger.two_in_flight_per_s",
        m["rows_2"],
        "calls/s",
        floor=m["raw"],
        floor_is="prepared sqlite3",
        target=f">= {ROWS_TARGET:,}",
        ok=m["rows_2"] >= ROWS_TARGET,
    )
    figs.add("ledger.four_in_flight_per_s", m["rows_4"], "calls/s", floor=m["raw"], floor_is="prepared sqlite3")
    figs.add("ledger.one_at_a_time_per_s", m["rows"], "calls/s", floor=m["raw"], floor_is="prepared sqlite3")
    print(
        f"ledger, real calls' writes through AsyncLedger: {m['rows_2']:,.0f} calls/s with two attempts in flight "
        f"(a paired run's two arms; target >= {ROWS_TARGET:,}); four: {m['rows_4']:,.0f}; one at a time: "
        f"{m['rows']:,.0f} (each write waits out the handoff to the writer thread)"
    )
    print(f"  floor, the same rows as prepared sqlite3 statements on the caller's thread: {m['raw']:,.0f} calls/s")
    figs.write(args.json)
    return 0 if figs.ok else 1


if __name__ == "__main__":
    sys.exit(main())
