"""TCP connections and wall time per call of ChatClient against the scripted server on loopback.

N calls of one conversation turn, streamed and not, one client (as one arm and slot uses it);
the server counts the TCP connections it accepted. A client that reads each streamed response
to its end keeps one connection for the whole run; one that stops at [DONE] opens one per call.

Run: .venv/bin/python benchmarks/connections.py [--calls 200] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.endpoints.endpoint import ChatClient, EndpointSettings  # noqa: E402
from agent.endpoints.scripted_server import ScriptedServer  # noqa: E402

SMOKE = ROOT / "fixtures" / "smoke"
MESSAGES = [{"role": "user", "content": "Task id: py-word-count\nSolve it."}]


async def measure(server: ScriptedServer, stream: bool, calls: int) -> tuple[int, float]:
    client = ChatClient(EndpointSettings(server.base_url, "solver", stream=stream, max_retries=0))
    before = server.connections
    t0 = time.perf_counter()
    try:
        for _ in range(calls):
            await client.complete(MESSAGES)
    finally:
        await client.aclose()
    return server.connections - before, (time.perf_counter() - t0) / calls * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with ScriptedServer([SMOKE]) as server:
        for stream in (True, False):
            runs = [anyio.run(measure, server, stream, args.calls) for _ in range(args.repeats)]
            conns = [c for c, _ in runs]
            walls = [w for _, w in runs]
            print(
                f"stream={str(stream):5}  {args.calls} calls: connections {conns}, "
                f"wall per call median {statistics.median(walls):.2f} ms (runs {', '.join(f'{w:.2f}' for w in walls)})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
