"""The commands that only read a ledger, opened read-only: report, export and browse, each with
its parser."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import TYPE_CHECKING, TextIO

from agent import QuotabenchError
from agent.ledger.liveness import run_state, state_note
from tuiapp.cli.drive import no_terminal
from tuiapp.cli.ledgers import DEFAULT_DB, db_flag, open_ledger
from tuiapp.cli.options import add_command, db_option
from tuiapp.cli.outcome import resume_hint

if TYPE_CHECKING:
    from tuiapp.cli.options import Subparsers


def cmd_report(args: argparse.Namespace) -> int:
    if args.list and args.run_ids:
        raise QuotabenchError(
            f"report --list lists every run of the ledger: drop {' '.join(args.run_ids)} (or --list, to report it)"
        )
    ledger = open_ledger(args.db or DEFAULT_DB, must_exist=True, read_only=True)
    if args.list:
        for run in ledger.runs():
            note = state_note(run, db_flag(args.db))
            print(
                f"{run['id']}  {run['created_utc']}  {run_state(run):<11} manifest "
                f"{(run['manifest_sha256'] or '?')[:12]}{'  ' + note if note else ''}"
            )
        return 0
    from agent.metrics.report import build_report, render_report  # numpy: only when there is a report to build

    run_ids = [ledger.resolve_run_id(r) for r in args.run_ids] or [ledger.resolve_run_id(None)]
    fmt = "markdown" if args.markdown else "json" if args.json else "text"
    report = build_report(ledger, run_ids, with_cost=not args.no_cost, grading_cpu_hour=args.grading_cpu_hour)
    print(render_report(report, fmt))
    hints = [hint for r in run_ids if (hint := resume_hint(ledger.run(r) or {"id": r}, args.db))]
    if fmt == "text" and hints:
        print("\n".join(hints))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from agent.export import export_attempts

    ledger = open_ledger(args.db or DEFAULT_DB, must_exist=True, read_only=True)
    run_id = ledger.resolve_run_id(args.run_id)
    target: contextlib.AbstractContextManager[TextIO]
    try:
        target = open(args.output, "w", newline="") if args.output else contextlib.nullcontext(sys.stdout)
    except OSError as exc:
        raise QuotabenchError(
            f"export -o {args.output}: cannot write it ({exc.strerror}) — check that its folder exists and is "
            "writable, or write to stdout and redirect"
        ) from None
    with target as out:
        done = export_attempts(ledger, run_id, args.format, out)
    without = f" and {done.unattempted} tasks an arm never attempted (row_kind no_attempt)" if done.unattempted else ""
    print(f"exported {done.attempts} attempts{without} of run {run_id}", file=sys.stderr)
    return 0


def cmd_browse(args: argparse.Namespace) -> int:
    why = no_terminal()
    if why is not None:
        raise QuotabenchError(
            f"browse is a full-screen view and needs a terminal: {why} — run it in a terminal; "
            "for a file, use `quotabench report` (--markdown, --json) or `quotabench export`"
        )
    from tuiapp.browse.app import run_browser

    ledger = open_ledger(args.db or DEFAULT_DB, must_exist=True, read_only=True)
    run_id = ledger.resolve_run_id(args.run_id) if args.run_id else None
    run_browser(ledger, run_id)
    return 0


def add_report(sub: Subparsers) -> None:
    p = add_command(
        sub,
        "report",
        "the decision table and paired comparison of one or more runs",
        "Print the decision table (acceptance, QAP, retry tax, censoring, cost per solved problem), the "
        "failure taxonomy and the paired comparison with its decision rule.",
        "  quotabench report\n  quotabench report --markdown > report.md\n"
        "  quotabench report 01M8QW2MWC 01M8QX4B7T --json | jq .runs[0].arms\n  quotabench report --list",
        cmd_report,
    )
    p.add_argument(
        "run_ids",
        nargs="*",
        metavar="RUN_ID",
        help="run ids or unique prefixes, e.g. 01M8QW2MWC (default: the newest run)",
    )
    db_option(p)
    form = p.add_mutually_exclusive_group()  # one form per report: --json --markdown printed Markdown only
    form.add_argument(
        "--markdown", action="store_true", help="Markdown tables, e.g. for a pull request: --markdown > report.md"
    )
    form.add_argument("--json", action="store_true", help="every figure as JSON, e.g. --json | jq .runs[0].comparisons")
    p.add_argument(
        "--no-cost",
        action="store_true",
        help="leave out the cost columns (a run whose arms have no price table is reported without them anyway)",
    )
    p.add_argument(
        "--grading-cpu-hour",
        type=float,
        metavar="DOLLARS",
        help="price of the grader's compute per CPU-hour, a cost line of its own, e.g. 0.10 (default 0.05)",
    )
    p.add_argument("--list", action="store_true", help="list the runs in the ledger (id, date, status, manifest)")


def add_export(sub: Subparsers) -> None:
    p = add_command(
        sub,
        "export",
        "write the per-attempt table as CSV or JSONL",
        "One row per attempt (arm, task, tokens, calls, end reason, verdict, failure class) for other tools.",
        "  quotabench export -o attempts.csv\n  quotabench export 01M8QW2MWC --format jsonl | jq .failure_class",
        cmd_export,
    )
    p.add_argument("run_id", nargs="?", help="run id or a unique prefix, e.g. 01M8QW2MWC (default: the newest run)")
    db_option(p)
    p.add_argument(
        "--format", choices=("csv", "jsonl"), default="csv", help="csv (default) or jsonl, e.g. --format jsonl"
    )
    p.add_argument("--output", "-o", metavar="FILE", help="file to write, e.g. -o attempts.csv (default: stdout)")


def add_browse(sub: Subparsers) -> None:
    p = add_command(
        sub,
        "browse",
        "browse runs, tasks, attempts, diffs and transcripts (needs a terminal)",
        "A full-screen, read-only browser over a ledger, a crashed run's included: the runs, a run's "
        "decision table and task grid, both arms of a task side by side, an attempt's evidence, diff and "
        "transcript.",
        "  quotabench browse\n  quotabench browse 01M8QW2MWC --db quotabench-demo.sqlite",
        cmd_browse,
    )
    p.add_argument("run_id", nargs="?", help="open this run, e.g. 01M8QW2MWC (default: the list of runs)")
    db_option(p)
