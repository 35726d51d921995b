"""How `quotabench` ends: what each exit code means (the --help epilog is written from it) and
any failure turned into one line on stderr and its exit code — never a traceback on the
terminal; a crash's traceback goes to a log file whose path the line names."""

from __future__ import annotations

import errno
import os
import sqlite3
import sys
import tempfile
import textwrap
import time
import traceback
from pathlib import Path

from agent import ExitCode, QuotabenchError
from agent.states import RunStatus
from tuiapp.cli.ledgers import db_flag, state_dir
from verifiers import VerifierError

MEANINGS = {
    ExitCode.OK: "done",
    ExitCode.FAILED: "a run crashed, or the ledger cannot be read or written (one line; a crash also names a log "
    "file with the traceback)",
    ExitCode.BAD_INPUT: "bad input (config, task folder, arguments)",
    ExitCode.STOPPED: "a run aborted or stopped (Ctrl-C, q, SIGTERM)",
}
EPILOG_WIDTH = 94  # the width the top-level help's epilog is laid out at
# An OSError of a path that does not work as given: one line and exit 2, never a crash log.
PATH_ERRORS = (
    errno.ENOENT,
    errno.ENOTDIR,
    errno.EISDIR,
    errno.EACCES,
    errno.EPERM,
    errno.EROFS,
    errno.ENAMETOOLONG,
    errno.ELOOP,
)


def exit_codes_text() -> str:
    """The epilog's paragraph on exit codes, one entry per ExitCode."""
    codes = " · ".join(f"{code.value} {MEANINGS[code]}" for code in ExitCode)
    return textwrap.fill(f"exit codes: {codes}. `quotabench COMMAND --help` for each.", EPILOG_WIDTH)


def failure_exit(exc: BaseException) -> ExitCode:
    """Say what `exc` means in one line on stderr; the exit code it calls for."""
    leaf = _first_leaf(exc)
    if isinstance(leaf, (QuotabenchError, VerifierError)):
        resume = _resume_advice() if _is_ledger_error(leaf) else ""
        print(f"quotabench: {leaf}{f'; then {resume}' if resume else ''}", file=sys.stderr)
        return getattr(leaf, "exit_code", ExitCode.BAD_INPUT)
    if isinstance(leaf, sqlite3.DatabaseError):
        print(
            f"quotabench: the ledger cannot be read or written ({leaf}) — free disk space if it is full; "
            "if the file is damaged, restore it from a copy or pass another --db",
            file=sys.stderr,
        )
        return ExitCode.FAILED
    if isinstance(leaf, OSError) and leaf.errno in (errno.ENOSPC, errno.EDQUOT):
        resume = _resume_advice()
        print(
            f"quotabench: the disk is full ({leaf.filename or leaf}) — free space, then "
            f"{resume or 'run the command again'}",
            file=sys.stderr,
        )
        return ExitCode.FAILED
    if isinstance(leaf, OSError) and leaf.filename and leaf.errno in PATH_ERRORS:  # a path given that does not work
        print(
            f"quotabench: {leaf.filename}: {leaf.strerror} — check the path, and that its folder exists and "
            "can be read (or written)",
            file=sys.stderr,
        )
        return ExitCode.BAD_INPUT
    log = write_crash_log("".join(traceback.format_exception(exc)))
    resume = _resume_advice()
    print(
        f"quotabench: crashed: {type(leaf).__name__}: {' '.join(str(leaf).split())[:200]} — "
        f"the traceback is in {log}{f'; {resume}' if resume else ''}",
        file=sys.stderr,
    )
    return ExitCode.FAILED


def _is_ledger_error(exc: BaseException) -> bool:
    from agent.ledger.store import LedgerError

    return isinstance(exc, LedgerError)


def _resume_advice() -> str:
    """`quotabench resume` for the run this command recorded in a ledger and did not finish, or ""
    when it recorded none (a ledger that could not be written, a command that runs nothing)."""
    from agent.ledger.store import recorded_runs  # here: a command that never opened a ledger pays nothing

    unfinished = [(path, run_id) for path, run_id, status in recorded_runs() if status != RunStatus.FINISHED]
    if not unfinished:
        return ""
    path, run_id = unfinished[-1]
    return f"`quotabench resume {run_id[:10]}{db_flag(path)}` finishes the run"


def _first_leaf(exc: BaseException) -> BaseException:
    """The first error inside task groups (an ExceptionGroup's first leaf), else `exc` itself."""
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


def write_crash_log(text: str) -> Path:
    """`text` (a traceback) in a new log file beside the other state; its path."""
    name = f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    for folder in (state_dir(), Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / name
            path.write_text(text)
            return path
        except OSError:
            continue
    return Path("(no writable folder for the log)")
