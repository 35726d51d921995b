"""Time the full report on a synthetic ledger: 500 tasks × 2 arms × 5 attempts (issue 5).

Every task uses its whole attempt budget (accepted, if at all, on attempt 5), the worst case
for the report's reads. The ledger is a real SQLite file written through agent.ledger.Ledger.
Run: /work/venv/bin/python benchmarks/report.py   — exits 1 if the median exceeds 200 ms.
"""
from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.ledger import Ledger, new_id  # noqa: E402
from agent.metrics import build_report, render_report  # noqa: E402

TASKS, ATTEMPTS, BUDGET_MS, REPEATS = 500, 5, 200.0, 7
ARMS = {"A": ({"gpu_hour": 1.60}, 0.45), "B": ({"input_per_mtok": 0.15, "output_per_mtok": 0.60}, 0.55)}
CLASSES = ["reasoning", "mechanics", "timeout", "environment", "harness_error"]


def build_ledger(path: Path, seed: int = 1) -> tuple[Ledger, str]:
    """A finished two-arm run with every attempt, grade class and price the report reads."""
    rng = np.random.default_rng(seed)
    ledger = Ledger(path)
    run_id = new_id()
    ledger.insert("runs", {"id": run_id, "created_utc": "2026-11-30T08:00:00.000+00:00",
                           "finished_utc": "2026-11-30T12:00:00.000+00:00", "status": "finished",
                           "manifest_sha256": "b" * 64, "config_json": json.dumps({"max_attempts": ATTEMPTS}),
                           "session_id": "bench"})
    task_ids = [f"task-{i:03d}" for i in range(TASKS)]
    ledger.insert_many("tasks", [{"run_id": run_id, "task_id": t, "position": i, "language": "python",
                                  "kind": "bugfix"} for i, t in enumerate(task_ids)])
    for name, (price, p_accept) in ARMS.items():
        arm_id = new_id()
        ledger.insert("arms", {"id": arm_id, "run_id": run_id, "name": name, "cap_tokens": 10**9,
                               "max_attempts": ATTEMPTS, "censored": 0, "unfinished_json": "[]",
                               "busy_ms": 9_000_000, "price_json": json.dumps(price), "state": "finished"})
        rows = []
        for task_id in task_ids:
            accepted = rng.random() < p_accept
            for no in range(1, ATTEMPTS + 1):
                ok = accepted and no == ATTEMPTS
                prompt, completion = int(rng.integers(2000, 20000)), int(rng.integers(200, 3000))
                rows.append({
                    "id": new_id(), "run_id": run_id, "arm_id": arm_id, "arm": name, "task_id": task_id,
                    "attempt_no": no, "status": "done", "end_reason": "finished",
                    "verdict": "pass" if ok else "fail", "accepted": int(ok),
                    "failure_class": "accepted" if ok else CLASSES[int(rng.integers(len(CLASSES)))],
                    "prompt_tokens": prompt, "completion_tokens": completion,
                    "total_tokens": prompt + completion, "calls": int(rng.integers(1, 12)),
                    "transport_retries": int(rng.integers(0, 2)), "malformed_tool_calls": 0,
                    "duration_ms": int(rng.integers(5_000, 60_000)),
                    "visible_passed": int(rng.integers(0, 2))})
        ledger.insert_many("attempts", rows)
    return ledger, run_id


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        ledger, run_id = build_ledger(Path(tmp) / "bench.db")
        timings = []
        for _ in range(REPEATS):
            start = time.perf_counter()
            text = render_report(build_report(ledger, [run_id]), "text")
            timings.append((time.perf_counter() - start) * 1000)
        ledger.close()
    median = statistics.median(timings)
    print(text)
    print(f"full report (build + render text), {TASKS} tasks × {len(ARMS)} arms × {ATTEMPTS} attempts, "
          f"10,000 resamples: median {median:.1f} ms, min {min(timings):.1f} ms, first {timings[0]:.1f} ms "
          f"(n={REPEATS} runs; budget {BUDGET_MS:.0f} ms)")
    return 0 if median < BUDGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
