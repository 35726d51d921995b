"""What a run leaves on the terminal once it is over: its report fitted to the terminal's width,
the commands that go on from it, and its exit code (finished 0, or 1 when an arm's endpoint never
answered; aborted or stopped 130, refused by preflight 2 with the reason, anything else 1 with
the `quotabench resume` line)."""

from __future__ import annotations

import shutil
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent import ExitCode, QuotabenchError
from agent.ledger.live_reads import preflight_checks
from agent.ledger.liveness import RESUMABLE, run_state
from agent.ledger.report_reads import unanswered_arms
from tuiapp.cli import ledgers

if TYPE_CHECKING:
    from agent.ledger import Ledger


def run_exit(ledger: Ledger, run_id: str) -> ExitCode:
    """The exit code of a run that is over, with one line on stderr when it did not finish."""
    status = (ledger.run(run_id) or {}).get("status")
    if status == "refused":
        from agent.preflight import recorded_refusal

        print(
            f"quotabench: {recorded_refusal(preflight_rows(ledger, run_id)) or 'preflight refused the run'}",
            file=sys.stderr,
        )
        return ExitCode.BAD_INPUT
    if status not in ("finished", "aborted"):  # the live view showed why; the terminal gets one line
        print(
            f"quotabench: run {run_id} {status or 'did not start'} — "
            f"`quotabench resume {run_id[:10]}{ledgers.db_flag(ledger.path)}` finishes it",
            file=sys.stderr,
        )
    if status == "finished":
        return _answered(ledger, run_id)
    return {"aborted": ExitCode.STOPPED}.get(status or "", ExitCode.FAILED)


def _answered(ledger: Ledger, run_id: str) -> ExitCode:
    """A finished run is a measurement only if every arm's endpoint answered at least once."""
    silent = unanswered_arms(ledger, run_id)
    for arm in silent:
        tries = f"{arm['tries']} tr{'ies' if arm['tries'] != 1 else 'y'}"
        print(
            f"quotabench: arm {arm['arm']}'s endpoint never answered ({tries} failed, the last: "
            f"{(arm['error'] or 'no error recorded')[:160]}): its figures measure no model — check the endpoint",
            file=sys.stderr,
        )
    return ExitCode.FAILED if silent else ExitCode.OK


def preflight_rows(ledger: Ledger, run_id: str) -> list[dict[str, Any]]:
    return preflight_checks(ledger, run_id)


def resume_hint(run: dict[str, Any], db: str | Path | None = None) -> str | None:
    """The Next: line for a run that did not finish and can be finished, else None (`db`: its
    ledger, named with --db unless it is this folder's quotabench.sqlite)."""
    state = run_state(run)
    if state not in RESUMABLE:
        return None
    force = " --force" if state == "refused" else ""
    what = "runs it anyway" if force else "finishes it (finished attempts are kept)"
    return f"Next: quotabench resume {run['id'][:10]}{ledgers.db_flag(db)}{force}   the run is {state}: this {what}"


def after_run(ledger: Ledger, run_id: str, db: str, live: bool = False) -> None:
    """The run's report, fitted to the terminal's width, and the commands that go on from it.
    The ledger is remembered for this folder: a bare `report`, `browse` or `export` opens it."""
    ledgers.remember(db)
    if (ledger.run(run_id) or {}).get("status") == "refused":
        if live:  # the tables scrolled by in the live view's log: what differed, one line each
            from agent.preflight import recorded_differences

            rows = preflight_rows(ledger, run_id)
            width = shutil.get_terminal_size((100, 24)).columns
            print(
                "\n".join(textwrap.fill(line, width, subsequent_indent="    ") for line in recorded_differences(rows))
            )
        return  # nothing ran: the preflight table above says why, run_exit the one line
    shown_width = shutil.get_terminal_size((100, 24)).columns if sys.stdout.isatty() else None
    try:
        from agent.metrics.report import build_report, render_report

        text = render_report(build_report(ledger, [run_id]), "text")  # without cost columns when unpriced
        if shown_width:
            from tuiapp.report_fit import fit_text

            text = fit_text(text, shown_width)
        print()
        print(text)
    except QuotabenchError as exc:
        print(f"quotabench: report not available: {exc}", file=sys.stderr)
    shown = db if Path(db).resolve().parent != Path.cwd().resolve() else Path(db).name
    lines = [
        f"Next: quotabench browse {run_id[:10]}   every task's verdict, diff and transcript",
        "      quotabench report --markdown   the same report for a pull request or wiki",
        f"      (ledger: {shown}; these open it from this folder, --db from elsewhere)",
    ]
    hint = resume_hint(ledger.run(run_id) or {"id": run_id}, db)
    if hint:  # an aborted or crashed run: finishing it comes first
        lines = [hint, "      " + lines[0].removeprefix("Next: "), *lines[1:]]
    for line in lines:  # wrapped, never cut: the ledger's path can be long
        print(textwrap.fill(line, shown_width, subsequent_indent=" " * 6) if shown_width else line)
