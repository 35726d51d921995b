"""Where the grades ran, summed in SQLite, against the same figures taken row by row in Python."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from agent.ledger import report_reads as reads
from agent.metrics.report_sections import placement_summary
from tests.support.fixed_ledger import RUN, build_fixed_ledger


def _by_rows(rows: list[dict]) -> dict:
    runs = sorted(r["duration_ms"] or 0 for r in rows)
    waits = sorted(r["queue_ms"] or 0 for r in rows)
    times = sorted(datetime.fromisoformat(r["created_utc"]) for r in rows if r["created_utc"])
    span = (times[-1] - times[0]).total_seconds() / 60 if len(times) > 1 else 0.0
    return {
        "n": len(rows),
        "executors": sorted({r["executor"] or "local" for r in rows}),
        "nodes": sorted({r["node"] for r in rows if r["node"]}),
        "run_ms_median": runs[len(runs) // 2],
        "queue_ms_median": waits[len(waits) // 2],
        "queue_ms_p90": waits[min(len(waits) - 1, int(0.9 * len(waits)))],
        "retried": sum(1 for r in rows if r["retries"]),
        "per_minute": (len(rows) - 1) / span if span > 0 else None,
    }


def test_placements_summed_in_sqlite_equal_the_row_by_row_figures(tmp_path: Path) -> None:
    ledger = build_fixed_ledger(tmp_path / "l.sqlite")
    grades = ledger.query(
        "select g.id from grades g join attempts a on a.id = g.attempt_id where a.run_id = ? order by g.id", [RUN]
    )
    assert len(grades) >= 6
    spread = [  # executor, node, queue_ms, retries, duration_ms, created_utc
        ("ray", "n1", 40, 0, 1200, "2026-11-30T10:00:05.000+00:00"),
        ("ray", "n2", None, 1, 300, "2026-11-30T10:03:00.250+00:00"),
        ("", "", 5, None, None, "2026-11-30T10:01:00.000+00:00"),
        (None, None, 900, 2, 50, None),
        ("local", "n1", 0, 0, 700, "2026-11-30T09:59:59.999+00:00"),
    ]
    for g, (executor, node, queue, retries, duration, created) in zip(grades, spread):
        ledger.execute(
            "update grades set executor = ?, node = ?, queue_ms = ?, retries = ?, duration_ms = ?, created_utc = ? "
            "where id = ?",
            [executor, node, queue, retries, duration, created, g["id"]],
        )
    rows = ledger.query(
        "select g.executor, g.node, g.queue_ms, g.retries, g.duration_ms, g.created_utc from grades g "
        "join attempts a on a.id = g.attempt_id where a.run_id = ?",
        [RUN],
    )
    summary = placement_summary(reads.grade_placements(ledger, RUN))
    assert summary == _by_rows(rows)
    assert summary["executors"] == ["local", "ray"] and summary["nodes"] == ["n1", "n2"] and summary["retried"] == 2


def test_a_run_without_grades_has_no_placement(tmp_path: Path) -> None:
    ledger = build_fixed_ledger(tmp_path / "l.sqlite")
    assert placement_summary(reads.grade_placements(ledger, "no such run")) == {"n": 0}


def test_a_damaged_file_leaves_out_what_it_cannot_read(tmp_path: Path) -> None:
    # a hand-edited or damaged ledger: an unreadable grade time costs the throughput figure, an
    # unreadable call start or latency leaves that call out of the busy time; neither crashes
    ledger = build_fixed_ledger(tmp_path / "l.sqlite")
    ledger.execute(
        "update grades set created_utc = 'not a time' where id = (select g.id from grades g "
        "join attempts a on a.id = g.attempt_id where a.run_id = ? order by g.id limit 1)",
        [RUN],
    )
    assert placement_summary(reads.grade_placements(ledger, RUN))["per_minute"] is None
    before = reads.call_spans(ledger, RUN)
    calls = ledger.query("select id from calls where run_id = ? and kind = 'attempt' order by id limit 2", [RUN])
    ledger.execute("update calls set latency_ms = 'abc' where id = ?", [calls[0]["id"]])
    ledger.execute("update calls set started_utc = 'garbage' where id = ?", [calls[1]["id"]])
    after = reads.call_spans(ledger, RUN)
    assert sum(len(s) for s, _ in after.values()) == sum(len(s) for s, _ in before.values()) - 2
