"""`quotabench report` as a user runs it: a cold CLI process on a real ledger of 1k, 10k and 100k
attempts (issue 15 targets: <= 0.5 s at 1k, <= 1.5 s at 10k, <= 6 s and <= 300 MB peak RSS at
100k; 2 cores).

The ledgers come from benchmarks/synthetic.py: a finished two-arm run, one attempt per task (the
most tasks for the paired comparison and its 10,000-resample bootstrap), 4 calls and a grade per
attempt, diffs and files_json of a few KB. Each size is timed as `python -m tuiapp.cli report
--db FILE` in a fresh process (median of the runs; peak RSS from the kernel), beside its floors
measured in the same run: a bare interpreter start, the plain sqlite3 reads of the rows the
report uses, and the bootstrap's own index draws (numpy, same seed and count). The warm
in-process build + render is printed too.

    python benchmarks/report.py [--sizes 1000,10000,100000] [--runs 5] [--json FILE]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent.ledger import Ledger  # noqa: E402
from agent.ledger.report_reads import ATTEMPT_COLUMNS, SPANS_SQL, SPEND_SQL  # noqa: E402
from agent.metrics import build_report, render_report  # noqa: E402
from agent.metrics.report import DEFAULT_SEED  # noqa: E402
from agent.metrics.stats import BOOTSTRAP_CHUNK  # noqa: E402
from benchmarks.cold import cold  # noqa: E402
from benchmarks.figures import Figures, add_json_argument  # noqa: E402
from benchmarks.synthetic import build_ledger  # noqa: E402

TARGETS = {1000: (0.5, None), 10000: (1.5, None), 100000: (6.0, 300)}  # seconds, MB


def sqlite_floor(db: Path) -> float:
    """The report's reads as plain sqlite3 fetches of tuples, in seconds."""
    import sqlite3

    started = time.perf_counter()
    conn = sqlite3.connect(str(db))
    run = conn.execute("select id from runs order by created_utc desc limit 1").fetchone()[0]
    conn.execute("select * from arms where run_id = ?", [run]).fetchall()
    conn.execute("select * from tasks where run_id = ? order by position", [run]).fetchall()
    conn.execute(
        f"select {', '.join(ATTEMPT_COLUMNS)} from attempts where run_id = ? order by arm, task_id, attempt_no", [run]
    ).fetchall()
    conn.execute(SPEND_SQL, [run, run]).fetchall()
    conn.execute(SPANS_SQL, [run]).fetchall()
    conn.execute(
        "select a.arm, count(*), sum(g.duration_ms) from grades g join attempts a on a.id = g.attempt_id "
        "where a.run_id = ? group by a.arm",
        [run],
    ).fetchall()
    conn.close()
    return time.perf_counter() - started


def draws_floor(tasks: int, resamples: int = 10_000) -> float:
    """numpy drawing the bootstrap's resamples × tasks indices (the same stream), in seconds."""
    rng = np.random.default_rng(DEFAULT_SEED)
    rows = max(1, BOOTSTRAP_CHUNK // tasks)
    started = time.perf_counter()
    for start in range(0, resamples, rows):
        rng.integers(0, tasks, size=(min(rows, resamples - start), tasks), dtype=np.int32)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="attempts per ledger, comma-separated")
    parser.add_argument("--runs", type=int, default=5, help="cold processes per size (3 at 100k and above)")
    add_json_argument(parser)
    args = parser.parse_args(argv)
    figs = Figures("report")
    load = figs.load_start
    lines = []
    interpreter, _, _ = cold([sys.executable, "-c", "pass"], args.runs)
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            db = Path(tmp) / f"ledger-{size}.sqlite"
            run_id = build_ledger(db, size)
            wall, fastest, rss = cold(
                [sys.executable, "-m", "tuiapp.cli", "report", "--db", str(db)],
                args.runs if size < 100_000 else min(args.runs, 3),
            )
            ledger = Ledger(db)
            started = time.perf_counter()
            render_report(build_report(ledger, [run_id]), "text")
            warm = time.perf_counter() - started
            ledger.close()
            reads, draws = sqlite_floor(db), draws_floor(size // 2)
            seconds, mb = TARGETS.get(size, (None, None))
            target = "; ".join(
                t for t in (f"target <= {seconds:g} s" if seconds else "", f"<= {mb} MB" if mb else "") if t
            )
            figs.add(
                f"{size}.wall_s",
                wall,
                "s",
                target=f"<= {seconds:g} s" if seconds else None,
                ok=wall <= seconds if seconds else None,
            )
            figs.add(f"{size}.min_s", fastest, "s")
            figs.add(f"{size}.rss_mb", rss, "MB", target=f"<= {mb} MB" if mb else None, ok=rss <= mb if mb else None)
            figs.add(f"{size}.floor.interpreter_s", interpreter, "s")
            figs.add(f"{size}.floor.sqlite_reads_s", reads, "s")
            figs.add(f"{size}.floor.bootstrap_draws_s", draws, "s")
            figs.add(f"{size}.warm_s", warm, "s")
            lines.append(
                f"{size:>7,} attempts ({size // 2:,} paired tasks): `quotabench report` cold {wall:5.2f} s "
                f"(min {fastest:.2f}), "
                f"peak RSS {rss:5.0f} MB ({target or 'no target'})\n"
                f"          floors: interpreter start {interpreter:.2f} s, sqlite3 reads {reads:.2f} s, "
                f"bootstrap index draws {draws:.2f} s; warm in-process build + render {warm:.2f} s"
            )
            db.unlink()
    load = max(load, os.getloadavg()[0])
    print(f"load average {load:.1f} on {os.cpu_count()} cores (1-minute, the higher of start and end)")
    print("\n".join(lines))
    figs.write(args.json)
    return 0 if figs.ok else 1


if __name__ == "__main__":
    sys.exit(main())
