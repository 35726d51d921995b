"""What `quotabench report` and `export` cost a user (issue 15): they stream the ledger instead of
holding it, and a cold process imports only what the command needs."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import tracemalloc

from agent.export import COLUMNS, export_attempts
from agent.ledger import Ledger, new_id
from tests.conftest import ROOT

BIG = "x" * 100_000  # a diff and a files_json of 100 KB per attempt


def _ledger(path, attempts: int) -> str:
    ledger = Ledger(path)
    run_id = new_id()
    ledger.insert(
        "runs",
        {
            "id": run_id,
            "created_utc": "2026-11-30T08:00:00.000+00:00",
            "status": "finished",
            "manifest_sha256": "m" * 64,
            "config_json": "{}",
        },
    )
    ledger.insert_many(
        "tasks",
        [
            {
                "run_id": run_id,
                "task_id": f"t{i:04d}",
                "position": i,
                "language": "python",
                "kind": "bugfix",
                "prompt": "p",
            }
            for i in range(attempts)
        ],
    )
    ledger.insert(
        "arms",
        {
            "id": "ARM-A",
            "run_id": run_id,
            "name": "A",
            "max_attempts": 1,
            "state": "finished",
            "censored": 0,
            "unfinished_json": "[]",
            "price_json": json.dumps({"input_per_mtok": 1.0, "output_per_mtok": 2.0}),
        },
    )
    ledger.insert_many(
        "attempts",
        [
            {
                "id": new_id(),
                "run_id": run_id,
                "arm_id": "ARM-A",
                "arm": "A",
                "task_id": f"t{i:04d}",
                "attempt_no": 1,
                "status": "done",
                "end_reason": "finished",
                "verdict": "pass" if i % 2 else "fail",
                "failure_class": "accepted" if i % 2 else "reasoning",
                "accepted": i % 2,
                "prompt_tokens": 100 + i,
                "completion_tokens": 10,
                "total_tokens": 110 + i,
                "calls": 2,
                "transport_retries": 0,
                "malformed_tool_calls": 0,
                "turns": 2,
                "duration_ms": 1000,
                "started_utc": "2026-11-30T08:00:00.000+00:00",
                "diff": BIG,
                "files_json": json.dumps({"a.py": BIG}),
            }
            for i in range(attempts)
        ],
    )
    ledger.close()
    return run_id


def test_export_streams_only_the_columns_it_writes(tmp_path):
    run_id = _ledger(tmp_path / "l.sqlite", 400)  # 80 MB of diffs and files the export must not read
    ledger = Ledger(tmp_path / "l.sqlite")
    out = io.StringIO()
    tracemalloc.start()
    try:
        count = export_attempts(ledger, run_id, "csv", out).rows
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert count == len(rows) == 400 and tuple(rows[0]) == COLUMNS
    assert [r["task_id"] for r in rows] == [f"t{i:04d}" for i in range(400)]  # the run's task order
    assert rows[3] | {"run_id": ""} == {
        **{c: "" for c in COLUMNS},
        "arm": "A",
        "task_id": "t0003",
        "language": "python",
        "kind": "bugfix",
        "attempt_no": "1",
        "verdict": "pass",
        "failure_class": "accepted",
        "accepted": "1",
        "end_reason": "finished",
        "prompt_tokens": "103",
        "completion_tokens": "10",
        "total_tokens": "113",
        "calls": "2",
        "transport_retries": "0",
        "malformed_tool_calls": "0",
        "turns": "2",
        "duration_ms": "1000",
        "started_utc": "2026-11-30T08:00:00.000+00:00",
        "stage": "attempt",
        "arm_state": "finished",
        "row_kind": "attempt",
        "task_outcome": "accepted",
        "task_accepted": "1",
    }
    assert peak < 4 * 2**20, f"export held {peak / 2**20:.1f} MB"  # `select a.*` held every diff: > 80 MB


def _modules_after(args: list[str]) -> set[str]:
    code = (
        "import sys\nfrom tuiapp.cli import main\nsys.argv = ['quotabench', *sys.argv[1:]]\n"
        "code = main()\nprint('MODULES', ' '.join(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)\n"
        "sys.exit(code)"
    )
    proc = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return set(proc.stderr.split("MODULES ", 1)[1].split())


def test_report_and_export_stay_off_scipy_and_the_ui(tmp_path):
    db = tmp_path / "l.sqlite"
    _ledger(db, 20)
    heavy = {"scipy", "textual", "rich", "click", "tree_sitter", "pygments", "sqlite_utils"}
    assert not heavy & _modules_after(["report", "--db", str(db)])
    assert not heavy & _modules_after(["export", "--db", str(db), "-o", str(tmp_path / "out.csv")])
    listing = _modules_after(["report", "--list", "--db", str(db)])
    assert not (heavy | {"numpy"}) & listing  # listing runs needs no statistics at all
