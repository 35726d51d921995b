"""A finished two-arm run of any size in a real ledger file, for the report, export and memory
benchmarks (issue 15). The schema comes from `agent.ledger.Ledger` (its migrations); the rows
go in through plain sqlite3 in one transaction, so a 100k-attempt ledger builds in seconds.

Every attempt carries what a real one does: a diff and files_json of a few KB (what `select a.*`
used to drag along), its model calls (`CALLS_PER_ATTEMPT` rows with response text) and a grade.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.ledger import Ledger, new_id  # noqa: E402

ARMS = {"A": ({"gpu_hour": 1.60}, 0.45), "B": ({"input_per_mtok": 0.15, "output_per_mtok": 0.60}, 0.55)}
CLASSES = ["reasoning", "mechanics", "timeout", "environment", "harness_error"]
CALLS_PER_ATTEMPT = 4
DIFF = "".join(f"-    old line {i} of the fixture\n+    new line {i} the model wrote\n" for i in range(40))  # ~2.4 KB
FILES_JSON = json.dumps({"src/module.py": "x = 1\n" * 300})  # ~1.8 KB


def _insert(conn: sqlite3.Connection, table: str, rows: list[dict]) -> None:
    if rows:
        cols = list(rows[0])
        conn.executemany(
            f"insert into {table} ({', '.join(cols)}) values ({', '.join('?' * len(cols))})",
            [tuple(r[c] for c in cols) for r in rows],
        )


def build_ledger(path: Path, attempts: int, *, attempts_per_task: int = 1, seed: int = 1) -> str:
    """Write a finished run of `attempts` attempts (two arms, `attempts_per_task` each per task:
    every task spends its whole budget, the worst case for the report); returns the run id."""
    tasks = max(1, attempts // (len(ARMS) * attempts_per_task))
    rng = np.random.default_rng(seed)
    Ledger(path).close()  # creates the file and applies the migrations
    conn = sqlite3.connect(str(path))
    run_id = new_id()
    t0 = datetime(2026, 11, 30, 8, tzinfo=UTC)
    with conn:
        _insert(
            conn,
            "runs",
            [
                {
                    "id": run_id,
                    "created_utc": t0.isoformat(timespec="milliseconds"),
                    "finished_utc": (t0 + timedelta(hours=4)).isoformat(timespec="milliseconds"),
                    "status": "finished",
                    "manifest_sha256": "b" * 64,
                    "session_id": "bench",
                    "config_json": json.dumps({"max_attempts": attempts_per_task}),
                    "isolation_sandbox": "bwrap",
                    "isolation_json": "{}",
                }
            ],
        )
        task_ids = [f"task-{i:06d}" for i in range(tasks)]
        _insert(
            conn,
            "tasks",
            [
                {
                    "run_id": run_id,
                    "task_id": t,
                    "position": i,
                    "language": "python",
                    "kind": "bugfix",
                    "prompt": "Fix the bug.",
                }
                for i, t in enumerate(task_ids)
            ],
        )
        for arm_no, (name, (price, p_accept)) in enumerate(ARMS.items()):
            arm_id = new_id()
            _insert(
                conn,
                "arms",
                [
                    {
                        "id": arm_id,
                        "run_id": run_id,
                        "name": name,
                        "cap_tokens": 10**12,
                        "max_attempts": attempts_per_task,
                        "censored": 0,
                        "unfinished_json": "[]",
                        "busy_ms": 9_000_000,
                        "price_json": json.dumps(price),
                        "state": "finished",
                        "endpoint_url": f"http://127.0.0.1:80{arm_no}0/v1",
                    }
                ],
            )
            rows, calls, grades = [], [], []
            clock = t0
            for task_id in task_ids:
                accepted = rng.random() < p_accept
                for no in range(1, attempts_per_task + 1):
                    ok = accepted and no == attempts_per_task
                    prompt, completion = int(rng.integers(2000, 20000)), int(rng.integers(200, 3000))
                    attempt_id = new_id()
                    rows.append(
                        {
                            "id": attempt_id,
                            "run_id": run_id,
                            "arm_id": arm_id,
                            "arm": name,
                            "task_id": task_id,
                            "attempt_no": no,
                            "status": "done",
                            "end_reason": "finished",
                            "started_utc": clock.isoformat(timespec="milliseconds"),
                            "ended_utc": (clock + timedelta(seconds=30)).isoformat(timespec="milliseconds"),
                            "verdict": "pass" if ok else "fail",
                            "accepted": int(ok),
                            "failure_class": "accepted" if ok else CLASSES[int(rng.integers(len(CLASSES)))],
                            "prompt_tokens": prompt,
                            "completion_tokens": completion,
                            "total_tokens": prompt + completion,
                            "calls": CALLS_PER_ATTEMPT,
                            "transport_retries": int(rng.integers(0, 2)),
                            "malformed_tool_calls": 0,
                            "turns": 3,
                            "duration_ms": int(rng.integers(5_000, 60_000)),
                            "visible_passed": int(rng.integers(0, 2)),
                            "edited": 1,
                            "diff": DIFF,
                            "files_json": FILES_JSON,
                        }
                    )
                    for turn in range(CALLS_PER_ATTEMPT):
                        calls.append(
                            {
                                "id": new_id(),
                                "attempt_id": attempt_id,
                                "run_id": run_id,
                                "arm": name,
                                "turn": turn,
                                "retry_index": 0,
                                "started_utc": clock.isoformat(timespec="milliseconds"),
                                "latency_ms": 1500,
                                "status": "ok",
                                "http_status": 200,
                                "prompt_tokens": prompt // CALLS_PER_ATTEMPT,
                                "completion_tokens": completion // CALLS_PER_ATTEMPT,
                                "usage_source": "reported",
                                "reserved_tokens": 20000,
                                "finish_reason": "tool_calls",
                                "response_text": "I will read the failing test first. " * 5,
                                "tool_calls_json": '[{"id": "c1", "name": "read_file", "arguments": "{\\"path\\": \\"a.py\\"}"}]',
                            }
                        )
                        clock += timedelta(seconds=2)
                    grades.append(
                        {
                            "id": new_id(),
                            "attempt_id": attempt_id,
                            "created_utc": clock.isoformat(),
                            "verdict": "pass" if ok else "fail",
                            "exit_status": 0 if ok else 1,
                            "duration_ms": int(rng.integers(800, 4000)),
                            "passed": 7 if ok else 3,
                            "failed": 0 if ok else 4,
                            "output": "==== 7 passed ====",
                            "sandbox": "bwrap",
                            "mechanics_json": "[]",
                            "failing_tests_json": "[]",
                            "isolation_json": "{}",
                        }
                    )
            _insert(conn, "attempts", rows)
            _insert(conn, "calls", calls)
            _insert(conn, "grades", grades)
    conn.close()
    return run_id


if __name__ == "__main__":  # python benchmarks/synthetic.py FILE ATTEMPTS [ATTEMPTS_PER_TASK]
    print(
        build_ledger(
            Path(sys.argv[1]), int(sys.argv[2]), attempts_per_task=int(sys.argv[3]) if len(sys.argv) > 3 else 1
        )
    )
