"""Running the live view for the CLI: `run_live` (the ledger and engine built after the first
frame, start-up errors raised after the terminal is restored) and `run_app` (a crash of the view
itself becomes one line, a log file and exit status 1)."""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agent import ExitCode, QuotabenchError
from agent.config import RunConfig
from agent.ledger.store import recorded_runs
from tuiapp.live.app import LiveApp, Opener, make_app
from tuiapp.terminal import frames_on_the_terminal

if TYPE_CHECKING:
    from agent.ledger import Ledger


class LiveViewCrashed(QuotabenchError):
    """The live view itself failed (a bug in it, not in the run): exit 1 with the log's path."""

    exit_code = ExitCode.FAILED


def run_live(
    config: RunConfig, opener: Opener, *, crash_log: Callable[[str], Path] | None = None
) -> tuple[str, Ledger]:
    """Run the paired benchmark under the live view; returns the run id and its ledger once the
    user quits. `opener` builds (ledger, engine) after the first frame; an error it raises (bad
    input) is raised here, after the terminal is restored."""
    app = make_app(config, None, opener=opener)
    run_app(app, crash_log)
    if app.startup_error is not None:
        raise app.startup_error
    if app.fatal:
        print(f"quotabench: the run stopped with an error: {app.fatal}", file=sys.stderr)
    if not app.run_id or app.ledger is None or app.ledger.run(app.run_id) is None:
        raise QuotabenchError(app.fatal or "the run was quit before it started — nothing was recorded")
    return app.run_id, app.ledger


def run_app(app: LiveApp, crash_log: Callable[[str], Path] | None = None, *, headless: bool = False) -> None:
    """Run `app` until it exits. Textual prints an unhandled error's traceback (with locals) as it
    exits and sets a return code of 1: that text goes to `crash_log` (api keys masked) and this
    raises LiveViewCrashed, one line and exit status 1, instead of a traceback and exit 0."""
    errors = io.StringIO()
    try:
        # Textual's error console; the screen is on the tty (stdout's, when stderr is a file)
        with frames_on_the_terminal(), contextlib.redirect_stderr(errors):
            app.run(headless=headless)
    except Exception as exc:  # Textual restored the terminal; say what broke without a traceback
        raise QuotabenchError(
            f"the live view failed ({type(exc).__name__}: {exc}) — rerun with --headless; "
            f"the ledger keeps what was recorded"
        ) from None
    if app.return_code:
        text = errors.getvalue() or "no traceback was printed"
        mask = getattr(app.engine, "mask", None)  # a RunEngine masks its arms' api keys
        text = mask(text) if mask else text
        where = crash_log(text) if crash_log else None
        ledger = app.ledger.path if app.ledger is not None else None
        recorded = any((path, run_id) == (ledger, app.run_id) for path, run_id, _ in recorded_runs())
        run = f"; `quotabench resume {app.run_id[:10]}` finishes the run" if recorded else ""
        raise LiveViewCrashed(
            f"the live view crashed (exit code {app.return_code})"
            + (f" — the traceback is in {where}" if where else "")
            + run
        )
    if errors.getvalue().strip():
        print(errors.getvalue().rstrip(), file=sys.stderr)
