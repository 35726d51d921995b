"""Time `quotabench browse` opening a run of 1,000 attempts (issue: the run screen in < 1 s).

A synthetic finished run — 500 tasks × 2 arms × 1 attempt, each attempt with a diff, its
changed files, four calls rows, four tool calls and a grade — is written through
agent.ledger.Ledger into a real SQLite file. The browser is then opened on that run headless
(App.run_test, 160×45) and timed from make_app() until the task × arm grid holds all 500 rows
("run screen shown"), and until the report's decision table is in ("report shown"; the first
time includes importing numpy/scipy in the worker).

Run: /work/venv/bin/python benchmarks/browse.py   — exits 1 if the median run screen time is 1 s or more.
"""
from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.ledger import Ledger, new_id  # noqa: E402

TASKS, BUDGET_S, REPEATS = 500, 1.0, 5
CLASSES = ["accepted", "accepted", "reasoning", "mechanics", "timeout", "harness_error"]
SOURCE = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(40))


def build_ledger(path: Path) -> tuple[Ledger, str]:
    ledger = Ledger(path)
    run_id = new_id()
    ledger.insert("runs", {"id": run_id, "created_utc": "2026-11-30T08:00:00.000+00:00",
                           "finished_utc": "2026-11-30T12:00:00.000+00:00", "status": "finished",
                           "manifest_sha256": "c" * 64, "config_json": "{}", "session_id": "bench"})
    ledger.insert_many("tasks", [{"run_id": run_id, "task_id": f"py-task-{i:03d}", "position": i, "language": "python",
                                  "kind": ["bugfix", "boundary", "refactor"][i % 3], "path": f"/nonexistent/{i}",
                                  "prompt": "Fix the function."} for i in range(TASKS)])
    diff = "--- a/mod.py\n+++ b/mod.py\n@@ -1,2 +1,2 @@\n def f0(x):\n-    return x + 0\n+    return x - 0\n"
    for arm in ("A", "B"):
        arm_id = new_id()
        ledger.insert("arms", {"id": arm_id, "run_id": run_id, "name": arm, "model": f"model-{arm}", "protocol": "tools",
                               "cap_tokens": 10**9, "max_attempts": 1, "censored": 0, "unfinished_json": "[]",
                               "state": "finished", "busy_ms": 1, "price_json": json.dumps({"input_per_mtok": 0.1})})
        attempts, calls, tools, grades = [], [], [], []
        for i in range(TASKS):
            cls = CLASSES[(i + (arm == "B")) % len(CLASSES)]
            attempt_id = new_id()
            attempts.append({
                "id": attempt_id, "run_id": run_id, "arm_id": arm_id, "arm": arm, "task_id": f"py-task-{i:03d}",
                "attempt_no": 1, "status": "done", "end_reason": "finished", "accepted": int(cls == "accepted"),
                "verdict": "pass" if cls == "accepted" else "timeout" if cls == "timeout" else "fail",
                "failure_class": cls, "prompt_tokens": 4000 + i, "completion_tokens": 300, "total_tokens": 4300 + i,
                "calls": 4, "transport_retries": 0, "malformed_tool_calls": 0, "turns": 4, "duration_ms": 20_000,
                "edited": 1, "diff": diff, "files_json": json.dumps({"mod.py": SOURCE})})
            for turn in range(1, 5):
                calls.append({"id": new_id(), "attempt_id": attempt_id, "run_id": run_id, "arm": arm, "turn": turn,
                              "retry_index": 0, "status": "ok", "http_status": 200, "prompt_tokens": 1000,
                              "completion_tokens": 75, "response_text": "Let me edit the file. " * 20})
                tools.append({"id": new_id(), "attempt_id": attempt_id, "turn": turn, "tool": "write_file", "ok": 1,
                              "arguments_json": json.dumps({"path": "mod.py", "content": SOURCE}), "result": "ok"})
            grades.append({"id": new_id(), "attempt_id": attempt_id, "verdict": attempts[-1]["verdict"],
                           "output": "F" * 2000, "failing_tests_json": "[]", "mechanics_json": "[]"})
        for table, rows in (("attempts", attempts), ("calls", calls), ("tool_calls", tools), ("grades", grades)):
            ledger.insert_many(table, rows)
    return ledger, run_id


async def open_run_screen(ledger: Ledger, run_id: str) -> tuple[float, float]:
    """Seconds from make_app() to the full grid, and to the report."""
    from textual.widgets import DataTable, Static

    from tuiapp.browse.app import make_app
    start = time.perf_counter()
    app = make_app(ledger, run_id)
    grid_at = report_at = None
    async with app.run_test(size=(160, 45)) as pilot:
        while grid_at is None or report_at is None:
            await pilot.pause(0.005)
            screen = app.screen
            if grid_at is None and screen.query("#grid") and screen.query_one("#grid", DataTable).row_count == TASKS:
                grid_at = time.perf_counter() - start
            if report_at is None and screen.query("#report") and \
                    "Computing" not in str(screen.query_one("#report", Static).content):
                report_at = time.perf_counter() - start
            if time.perf_counter() - start > 60:
                raise SystemExit("the run screen did not fill within 60 s")
    return grid_at, report_at


def main() -> int:
    started = time.perf_counter()
    import tuiapp.browse.app  # noqa: F401  (Textual's import is not the ledger's cost)
    imported = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp:
        ledger, run_id = build_ledger(Path(tmp) / "bench.sqlite")
        size_mb = (Path(tmp) / "bench.sqlite").stat().st_size / 1e6
        timings = [asyncio.run(open_run_screen(ledger, run_id)) for _ in range(REPEATS)]
        ledger.close()
    grids, reports = [t[0] for t in timings], [t[1] for t in timings]
    median = statistics.median(grids)
    print(f"browse: run of {2 * TASKS:,} attempts ({TASKS} tasks × 2 arms, ledger {size_mb:.1f} MB), 160×45 headless")
    print(f"  run screen shown (grid of {TASKS} rows): median {median * 1000:.0f} ms, first {grids[0] * 1000:.0f} ms, "
          f"max {max(grids) * 1000:.0f} ms (n={REPEATS}; budget {BUDGET_S * 1000:.0f} ms)")
    print(f"  report shown: median {statistics.median(reports) * 1000:.0f} ms, first {reports[0] * 1000:.0f} ms "
          f"(the first includes importing numpy/scipy in the worker)")
    print(f"  (importing the browser itself, before the timer: {imported * 1000:.0f} ms)")
    return 0 if median < BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
