"""The commands that only read a ledger — report, export, browse — and what every command says
about a ledger's path. A read opens the ledger read-only (agent/ledger/store.py), so an
archived ledger on a read-only filesystem reports, exports and browses."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import Any

from agent import QuotabenchError
from agent.ledger.liveness import RESUMABLE, run_state, state_note
from tuiapp import ledger_memory

DEFAULT_DB = ledger_memory.DEFAULT_DB


def check_ledger_path(path: str | Path, must_exist: bool = False) -> Path:
    """`path` as a ledger file: one line naming what is wrong (a folder, a missing file to read,
    a folder that does not exist to write in)."""
    path = Path(path)
    if path.is_dir():
        raise QuotabenchError(f"ledger {path}: is a folder — pass the ledger file, e.g. --db {path / DEFAULT_DB}")
    if must_exist and not path.is_file():
        raise QuotabenchError(ledger_memory.missing(path))
    if not path.exists() and not path.parent.is_dir():
        raise QuotabenchError(
            f"ledger {path}: the folder {path.parent} does not exist — create it, or pass another --db"
        )
    if not path.exists() and not os.access(path.parent, os.W_OK):
        raise QuotabenchError(f"ledger {path}: the folder {path.parent} is not writable — pass a --db in one that is")
    return path


def open_ledger(path: str | Path, must_exist: bool = False, read_only: bool = False):
    from agent.ledger import Ledger

    # a file that is not a ledger (or is damaged, or from a newer quotabench) is one LedgerError line
    return Ledger(check_ledger_path(path, must_exist), read_only=read_only)


def resume_hint(run: dict[str, Any]) -> str | None:
    """The Next: line for a run that did not finish and can be finished, else None."""
    state = run_state(run)
    if state not in RESUMABLE:
        return None
    force = " --force" if state == "refused" else ""
    what = "runs it anyway" if force else "finishes it (finished attempts are kept)"
    return f"Next: quotabench resume {run['id'][:10]}{force}   the run is {state}: this {what}"


def cmd_report(args: argparse.Namespace) -> int:
    ledger = open_ledger(args.db or DEFAULT_DB, must_exist=True, read_only=True)
    if args.list:
        for run in ledger.runs():
            note = state_note(run)
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
    hints = [hint for r in run_ids if (hint := resume_hint(ledger.run(r) or {"id": r}))]
    if fmt == "text" and hints:
        print("\n".join(hints))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from agent.export import export_attempts

    ledger = open_ledger(args.db or DEFAULT_DB, must_exist=True, read_only=True)
    run_id = ledger.resolve_run_id(args.run_id)
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
    from tuiapp.commands import no_terminal

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
