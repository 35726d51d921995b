"""`quotabench export`, through the command line: the per-attempt table as CSV or JSONL."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

from tests.support.fixed_ledger import CRASHED, RUN

REQUIRED = (
    "run_id",
    "arm",
    "task_id",
    "attempt_no",
    "verdict",
    "failure_class",
    "prompt_tokens",
    "completion_tokens",
    "transport_retries",
    "duration_ms",
)


def export(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", "export", *args], capture_output=True, text=True, timeout=120
    )


def test_csv_has_one_row_per_attempt(scripted_run):
    path, run_id = scripted_run
    result = export(run_id, "--db", str(path), "--format", "csv")
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 16 and f"exported 16 attempts of run {run_id}" in result.stderr
    assert set(REQUIRED) <= set(rows[0])
    by_key = {(r["arm"], r["task_id"], r["attempt_no"]): r for r in rows}
    assert by_key[("B", "py-add", "1")]["failure_class"] == "harness_error"
    assert by_key[("B", "py-add", "1")]["transport_retries"] == "1"
    assert by_key[("B", "py-add", "2")]["verdict"] == "fail"
    assert by_key[("B", "py-greet", "1")]["failure_class"] == "mechanics"
    assert by_key[("A", "py-add", "1")]["accepted"] == "1"
    assert int(by_key[("A", "py-add", "1")]["prompt_tokens"]) > 0


def test_jsonl_to_a_file_with_a_run_id_prefix(scripted_run, tmp_path):
    path, run_id = scripted_run
    out = tmp_path / "attempts.jsonl"
    result = export(run_id[:8], "--db", str(path), "--format", "jsonl", "-o", str(out))
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 16 and all(r["run_id"] == run_id for r in rows)
    assert {r["failure_class"] for r in rows} == {
        "accepted",
        "reasoning",
        "mechanics",
        "timeout",
        "environment",
        "harness_error",
        "censored",
    }
    assert isinstance(rows[0]["total_tokens"], int) and isinstance(rows[0]["duration_ms"], int)


def test_default_is_the_newest_run_and_crashed_attempts_export_as_nulls(fixed_path):
    result = export("--db", str(fixed_path), "--format", "jsonl")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert {r["run_id"] for r in rows} == {CRASHED}  # created last
    attempts = [r for r in rows if r["row_kind"] == "attempt"]
    assert [(r["verdict"], r["failure_class"], r["duration_ms"]) for r in attempts] == [(None, None, None)] * 2
    assert {(r["arm"], r["task_id"], r["task_outcome"]) for r in rows if r["row_kind"] == "no_attempt"} == {
        (arm, task, "aborted") for arm in "AB" for task in ("py-greet", "js-clamp")
    }  # a killed run: the tasks it never reached are there, marked, with their outcome
    assert "exported 2 attempts and 4 tasks an arm never attempted" in result.stderr
    older = export(RUN, "--db", str(fixed_path))
    assert older.returncode == 0 and older.stdout.count("\n") == 12  # header + 11 attempts


def test_errors_name_the_problem_without_a_traceback(tmp_path, fixed_path):
    missing = export("--db", str(tmp_path / "nope.sqlite"))
    assert missing.returncode == 2 and "no such file" in missing.stderr and "Traceback" not in missing.stderr
    unknown = export("01ZZZZ", "--db", str(fixed_path))
    assert unknown.returncode == 2 and "no run with id starting '01ZZZZ'" in unknown.stderr
    bad_format = export("--db", str(fixed_path), "--format", "xlsx")
    assert bad_format.returncode == 2 and "invalid choice" in bad_format.stderr
