"""`quotabench` — the command line. Each subcommand is a thin function over agent/ and verifiers/.

Exit codes: 0 done (a run finished); 2 bad input (config, task folder, arguments) or a run
refused by preflight (an endpoint that would invalidate it), one line;
130 a run aborted or stopped (Ctrl-C, q, SIGTERM); 1 a run crashed, or the ledger could not be
read or written (disk full, damaged file): one line, and for a crash the path of a log file
holding the traceback — never a traceback on the terminal.
"""
from __future__ import annotations

import argparse
import errno
import os
import sqlite3
import sys
import tempfile
import time
import traceback
from pathlib import Path

from agent import QuotabenchError
from verifiers import VerifierError

EXIT_OK, EXIT_CRASHED, EXIT_BAD_INPUT, EXIT_STOPPED = 0, 1, 2, 130


def _cmd_validate(args: argparse.Namespace) -> int:
    from verifiers.gate import format_row, gate_suites, header
    from verifiers.isolation import clean_stale_cgroups
    from verifiers.sandbox import describe_sandbox, make_sandbox
    from verifiers.scratch import clean_stale
    for suite in args.suites:
        if not Path(suite).is_dir():
            raise VerifierError(f"suite {suite}: not a folder — pass a folder of tasks or one task folder")
    sandbox = make_sandbox(require=args.require_sandbox)
    clean_stale()
    clean_stale_cgroups()
    about = describe_sandbox(sandbox)
    if about["sandbox"] == "bwrap":
        print(f"sandbox: bubblewrap {about.get('bwrap_version') or ''}".rstrip(), flush=True)
    else:
        print(f"WARNING: gating without the full sandbox ({about['sandbox']}): {about.get('missing')}",
              file=sys.stderr, flush=True)
    print(header(), flush=True)
    results, problems = gate_suites([Path(p) for p in args.suites], jobs=args.jobs, sandbox=sandbox,
                                    on_result=lambda g: print(format_row(g), flush=True))
    failed = [g for g in results if not g.ok]
    for problem in problems:
        print(f"BROKEN {problem}", file=sys.stderr)
    for gate in failed:
        for check in gate.failed():
            first, *rest = check.detail.splitlines() or [""]
            print(f"FAILED {gate.task.id} [{gate.task.path}] {check.name}: {first}", file=sys.stderr)
            if args.verbose:
                for line in rest:
                    print(f"    {line}", file=sys.stderr)
    print(f"{len(results) - len(failed)} of {len(results)} tasks gate cleanly; "
          f"{len(failed)} failed; {len(problems)} broken task folders")
    return 1 if failed or problems else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="quotabench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("validate", help="gate every task of one or more suites (hidden fails untouched, passes on reference, ...)")
    p.add_argument("suites", nargs="+", help="suite folders (or single task folders)")
    p.add_argument("--jobs", "-j", type=int, default=1, help="tasks gated in parallel")
    p.add_argument("--verbose", "-v", action="store_true", help="print the test output tail of failing checks")
    p.add_argument("--require-sandbox", action="store_true", help="refuse to run unless the bubblewrap sandbox runs here")
    p.set_defaults(func=_cmd_validate)

    from tuiapp import commands
    commands.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except BrokenPipeError:  # `quotabench export | head`: the reader is gone, nothing to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("quotabench: interrupted", file=sys.stderr)
        return EXIT_STOPPED
    except BaseException as exc:  # noqa: BLE001 — the one place that turns any failure into one line
        if isinstance(exc, SystemExit):
            raise
        return _report_failure(exc)


def _report_failure(exc: BaseException) -> int:
    leaf = _first_leaf(exc)
    if isinstance(leaf, (QuotabenchError, VerifierError)):
        print(f"quotabench: {leaf}", file=sys.stderr)
        return getattr(leaf, "exit_code", EXIT_BAD_INPUT)
    if isinstance(leaf, sqlite3.DatabaseError):
        print(f"quotabench: the ledger cannot be read or written ({leaf}) — free disk space if it is full; "
              "if the file is damaged, restore it from a copy or pass another --db", file=sys.stderr)
        return EXIT_CRASHED
    if isinstance(leaf, OSError) and leaf.errno in (errno.ENOSPC, errno.EDQUOT):
        print(f"quotabench: the disk is full ({leaf.filename or leaf}) — free space, then `quotabench resume`",
              file=sys.stderr)
        return EXIT_CRASHED
    log = _write_crash_log(exc)
    print(f"quotabench: crashed: {type(leaf).__name__}: {' '.join(str(leaf).split())[:200]} — "
          f"the traceback is in {log}; `quotabench resume` finishes the run", file=sys.stderr)
    return EXIT_CRASHED


def _first_leaf(exc: BaseException) -> BaseException:
    """The first error inside task groups (an ExceptionGroup's first leaf), else `exc` itself."""
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


def _write_crash_log(exc: BaseException) -> Path:
    text = "".join(traceback.format_exception(exc))
    name = f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "quotabench"
    for folder in (state, Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / name
            path.write_text(text)
            return path
        except OSError:
            continue
    return Path("(no writable folder for the log)")


if __name__ == "__main__":
    sys.exit(main())
