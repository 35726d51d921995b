"""Responsiveness of the live view under load (issue: 500 engine events/s, >= 10 refreshes/s,
a key press takes effect within 100 ms).

A synthetic paired run (tuiapp.live.replay: 200 tasks, streamed model text, quota changes,
tool calls, grades) is replayed at a fixed rate into the real app, headless via App.run_test.
While it streams, `p` is pressed every 250 ms. Printed per rate:

  sent ev/s     events the replay put on the stream per second
  folded ev/s   events the app folded into its state per second (sustained: no backlog)
  backlog       events sent but not yet folded at the end
  frames/s      screen updates the compositor produced (what a terminal would be sent)
  updates/s     RunChanged messages handled (merged: at most one per frame of the worker)
  key -> action time from the key press to the action running (p50 / p95 / max)
  key -> screen time from the key press to the header showing the new state (p50 / p95 / max)

Run: /work/venv/bin/python benchmarks/tui.py [--rate 500 --seconds 10] — exits 1 if, at the
first rate, frames/s < 10 or key -> screen p95 > 100 ms or the backlog grows.
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual import events  # noqa: E402

from agent.config import ArmConfig, RunConfig  # noqa: E402
from agent.ledger import Ledger  # noqa: E402
from tuiapp.live.app import LiveApp  # noqa: E402
from tuiapp.live.replay import ReplayEngine, synthetic_events  # noqa: E402

KEY_EVERY_S = 0.25


class MeasuredApp(LiveApp):
    """The live view, counting frames and handled updates and stamping when an action runs."""

    frames = updates = 0
    action_at: float | None = None

    def _display(self, screen, renderable) -> None:  # Textual's hook that writes a frame
        if renderable is not None:
            self.frames += 1
        super()._display(screen, renderable)

    def on_run_changed(self, message) -> None:
        self.updates += 1
        super().on_run_changed(message)

    def action_toggle_pause(self) -> None:
        self.action_at = time.perf_counter()
        super().action_toggle_pause()


def config() -> RunConfig:
    return RunConfig(path=Path("bench.toml"), suites=(Path("."),), max_attempts=2,
                     arms=(ArmConfig(name="A", kind="openai", base_url="http://a", model="a", cap_tokens=10_000_000),
                           ArmConfig(name="B", kind="openai", base_url="http://b", model="b", cap_tokens=10_000_000)))


def workload(seconds: float, rate: float) -> list:
    """Enough synthetic events for `seconds` at `rate` (200 tasks per block, repeated)."""
    letters = ["P", "RP", "P", "M", "P", "RR", "P", "TP"]
    tasks = [f"task-{i:03d}" for i in range(200)]
    events = synthetic_events({"A": [letters[i % 8] for i in range(200)], "B": [letters[(i + 3) % 8] for i in range(200)]},
                              task_ids=tasks, caps={"A": 10_000_000, "B": 10_000_000}, text_pieces=12)
    need = int(seconds * rate) + 100
    return (events * (need // len(events) + 1))[:need]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))] if values else float("nan")


async def measure(rate: float, seconds: float) -> dict:
    engine = ReplayEngine(workload(seconds + 3, rate), rate=rate, restamp=True)  # + warm-up and slack
    with tempfile.TemporaryDirectory() as tmp:
        app = MeasuredApp(config(), Ledger(Path(tmp) / "bench.sqlite"), engine)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause(0.5)  # warm-up: imports, first layout
            seen0, sent0, frames0, updates0 = app.state.events_seen, engine.sent, app.frames, app.updates
            t0 = time.perf_counter()
            to_action, to_screen = [], []
            while time.perf_counter() - t0 < seconds:
                paused = app.header.has_class("-paused")
                app.action_at = None
                pressed = time.perf_counter()  # the key arrives as the terminal driver delivers it
                app.post_message(events.Key("p", "p"))
                while app.header.has_class("-paused") == paused and time.perf_counter() - pressed < 2:
                    await asyncio.sleep(0.001)
                to_screen.append(time.perf_counter() - pressed)
                if app.action_at is not None:
                    to_action.append(app.action_at - pressed)
                await asyncio.sleep(max(0.0, pressed + KEY_EVERY_S - time.perf_counter()))
            elapsed = time.perf_counter() - t0
            folded, sent = app.state.events_seen - seen0, engine.sent - sent0
            frames, updates = app.frames - frames0, app.updates - updates0
            backlog = engine.sent - app.state.events_seen
            engine.abort()
            await pilot.pause(0.2)
    return {"rate": rate, "sent_s": sent / elapsed, "events_s": folded / elapsed, "backlog": backlog, "frames_s": frames / elapsed,
            "updates_s": updates / elapsed, "keys": len(to_screen),
            "action_ms": [1000 * pct(to_action, q) for q in (0.5, 0.95, 1.0)],
            "screen_ms": [1000 * pct(to_screen, q) for q in (0.5, 0.95, 1.0)]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, action="append", help="events per second (repeatable; default 500 2000 5000)")
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    rates = args.rate or [500.0, 2000.0, 5000.0]
    results = [asyncio.run(measure(rate, args.seconds)) for rate in rates]
    print(f"live view under load: {args.seconds:.0f} s per rate, 120x40, key p every {KEY_EVERY_S * 1000:.0f} ms")
    print(f"{'offered ev/s':>12} {'sent ev/s':>9} {'folded ev/s':>11} {'backlog':>7} {'frames/s':>8} {'updates/s':>9} "
          f"{'keys':>4}  {'key->action ms p50/p95/max':>26}  {'key->screen ms p50/p95/max':>26}")
    for r in results:
        action = "/".join(f"{v:.1f}" for v in r["action_ms"])
        screen = "/".join(f"{v:.1f}" for v in r["screen_ms"])
        print(f"{r['rate']:>12.0f} {r['sent_s']:>9.0f} {r['events_s']:>11.0f} {r['backlog']:>7d} {r['frames_s']:>8.1f} "
              f"{r['updates_s']:>9.1f} {r['keys']:>4d}  {action:>26}  {screen:>26}")
    first = results[0]
    ok = first["frames_s"] >= 10 and first["screen_ms"][1] <= 100 and first["backlog"] < first["rate"] * 0.2
    print("PASS" if ok else "FAIL", f"(at {first['rate']:.0f} ev/s: >= 10 frames/s, key -> screen p95 <= 100 ms, "
                                    "backlog under 0.2 s of events)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
