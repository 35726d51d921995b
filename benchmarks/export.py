"""`quotabench export` at 100k attempts: a cold CLI process, its wall time and peak RSS (issue 15
target: streamed, constant memory, <= 100 MB at 100k attempts, only the columns it writes).

Beside it, in the same run: the floor, a bare interpreter running the very same SELECT through
plain sqlite3 into csv.writer; and the way export worked before issue 15 (every attempt row
with `select a.*`, diffs and files_json included, held as dicts, then written).

    python benchmarks/export.py [--attempts 100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.cold import cold  # noqa: E402
from benchmarks.figures import Figures, add_json_argument  # noqa: E402
from benchmarks.synthetic import build_ledger  # noqa: E402

TARGET_MB = 100

FLOOR = """
import csv, sqlite3, sys
from agent.export import COLUMNS
from agent.ledger.export_reads import SQL
conn = sqlite3.connect(sys.argv[1])
run = conn.execute("select id from runs order by created_utc desc limit 1").fetchone()[0]
with open(sys.argv[2], "w", newline="") as out:
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    writer.writerows(conn.execute(SQL, [run]))
"""

BEFORE = """
import csv, sys
from agent.export import COLUMNS
from agent.ledger import Ledger
ledger = Ledger(sys.argv[1])
rows = [{c: row.get(c) for c in COLUMNS} for row in ledger.attempts(ledger.resolve_run_id(None))]
with open(sys.argv[2], "w", newline="") as out:
    writer = csv.DictWriter(out, fieldnames=COLUMNS)
    writer.writeheader()
    writer.writerows(rows)
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    add_json_argument(parser)
    args = parser.parse_args(argv)
    figs = Figures("export")
    load = figs.load_start
    with tempfile.TemporaryDirectory() as tmp:
        db, out = Path(tmp) / "ledger.sqlite", Path(tmp) / "out"
        build_ledger(db, args.attempts)
        size_mb = db.stat().st_size / 2**20
        figures = {}
        for fmt in ("csv", "jsonl"):
            figures[fmt] = cold(
                [sys.executable, "-m", "tuiapp.cli", "export", "--db", str(db), "--format", fmt, "-o", str(out)],
                args.runs,
            )
        floor = cold([sys.executable, "-c", FLOOR, str(db), str(out)], args.runs)
        before = cold([sys.executable, "-c", BEFORE, str(db), str(out)], 1)
    load = max(load, os.getloadavg()[0])
    print(f"load average {load:.1f} on {os.cpu_count()} cores (1-minute, the higher of start and end)")
    print(
        f"`quotabench export` of {args.attempts:,} attempts (a {size_mb:,.0f} MB ledger), cold process, median of {args.runs}:"
    )
    figs.add("ledger_mb", size_mb, "MB")
    for fmt, (wall, fastest, rss) in figures.items():
        figs.add(f"{fmt}.wall_s", wall, "s", floor=floor[0], floor_is="plain sqlite3 into csv.writer")
        figs.add(
            f"{fmt}.rss_mb",
            rss,
            "MB",
            floor=floor[2],
            floor_is="plain sqlite3 into csv.writer",
            target=f"<= {TARGET_MB} MB",
            ok=rss <= TARGET_MB,
        )
        print(f"  {fmt:<5} {wall:5.2f} s (min {fastest:.2f}), peak RSS {rss:4.0f} MB (target <= {TARGET_MB} MB)")
    print(
        f"  floor: the same SELECT through plain sqlite3 into csv.writer: {floor[0]:5.2f} s (min {floor[1]:.2f}), "
        f"peak RSS {floor[2]:4.0f} MB"
    )
    print(f"  before issue 15 (select a.*, rows held as dicts): {before[0]:5.2f} s, peak RSS {before[2]:4.0f} MB")
    figs.add("before.wall_s", before[0], "s")
    figs.add("before.rss_mb", before[2], "MB")
    figs.write(args.json)
    return 0 if figs.ok else 1


if __name__ == "__main__":
    sys.exit(main())
