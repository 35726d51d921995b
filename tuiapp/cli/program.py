"""`quotabench` — the command line (subcommands over agent/ and verifiers/; help texts in
DESCRIPTION, EPILOG and each parser).

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


def _cmd_validate(args: argparse.Namespace) -> int:
    from agent.shipped import shipped_path
    from verifiers.executors import close_executor, make_executor
    from verifiers.tasks import task_folders

    _validate_settings(args)
    args.suites = [str(shipped_path(s)) for s in args.suites]
    for suite in args.suites:
        if not Path(suite).is_dir():
            raise VerifierError(f"suite {suite}: not a folder — pass a folder of tasks or one task folder")
        if not task_folders(Path(suite)):
            raise VerifierError(
                f"suite {suite}: holds no task folder (no task.toml in it or its subfolders) — pass a folder of "
                "tasks, a folder of suites or one task folder; 0 tasks gate nothing"
            )
    arms = _cap_arms(args.validate_config)
    sandbox = make_executor(args.executor, ray_address=args.ray_address, require_sandbox=args.require_sandbox)
    try:
        if args.mutants:
            from tuiapp.mutants_cmd import run_mutants

            _announce_sandbox(sandbox)
            return run_mutants(args, sandbox)
        return _gate(args, sandbox, arms)
    finally:
        close_executor(sandbox)


def _cap_arms(config_file: str | None) -> list[tuple[str, str, int, int]]:
    """(who, protocol, max_tokens, cap_tokens) to check each task's first request against: the
    arms of --config, else an arm at the default cap with each protocol."""
    from agent.config import ArmConfig, load_config
    from agent.shipped import shipped_path

    if config_file:
        arms = load_config(shipped_path(config_file)).arms
        return [(f"arm {a.name}", a.protocol, a.max_tokens, a.cap_tokens) for a in arms]
    default = ArmConfig(name="A")
    return [("the default arm", "tools", default.max_tokens, default.cap_tokens)]


def _cap_warnings(tasks, arms: list[tuple[str, str, int, int]]) -> None:
    from agent.run.first_request import over_cap, over_cap_line

    for who, protocol, max_tokens, cap in arms:
        for request in over_cap(tasks, protocol, max_tokens, cap):
            print(f"WARNING {over_cap_line(request, who, max_tokens, cap)}", file=sys.stderr, flush=True)


def _validate_settings(args: argparse.Namespace) -> None:
    """Fill what the command line left open from the config's [run] suites and [validate] table."""
    from agent.config import ValidateSettings, load_config

    settings = ValidateSettings()
    if args.validate_config:
        config = load_config(args.validate_config)
        settings = config.validate
        args.suites = args.suites or [str(s) for s in config.suites]
        args.mutants = args.mutants or settings.mutants
        if args.cache_dir is None and settings.cache_dir is not None:
            args.cache_dir = str(settings.cache_dir)
    if not args.suites:
        raise VerifierError("validate: no suite — pass suite folders, e.g. fixtures/core, or --config FILE")
    args.weak_below = settings.weak_below if args.weak_below is None else args.weak_below
    args.max_mutants = settings.max_mutants if args.max_mutants is None else args.max_mutants
    if not 0 < args.weak_below <= 1:
        raise VerifierError(f"--weak-below {args.weak_below}: not a share in (0, 1] — e.g. --weak-below 0.8")
    if args.max_mutants < 1:
        raise VerifierError(f"--max-mutants {args.max_mutants}: not a positive count — e.g. --max-mutants 40")
    if args.jobs < 1:
        raise VerifierError(f"--jobs {args.jobs}: not a positive count — e.g. --jobs 2")


def _announce_sandbox(sandbox) -> None:
    from verifiers.sandbox import describe_sandbox

    about = describe_sandbox(sandbox)
    if about["sandbox"] == "bwrap":
        print(f"sandbox: bubblewrap {about.get('bwrap_version') or ''}".rstrip(), flush=True)
    else:
        print(
            f"WARNING: scoring without the full sandbox ({about['sandbox']}): {about.get('missing')}", file=sys.stderr
        )


def _gate(args: argparse.Namespace, sandbox, arms: list[tuple[str, str, int, int]]) -> int:
    from verifiers.gate import format_row, gate_suites, header
    from verifiers.isolation import clean_stale_cgroups
    from verifiers.sandbox import describe_sandbox
    from verifiers.scratch import clean_stale

    clean_stale()
    clean_stale_cgroups()
    about = describe_sandbox(sandbox)
    for node in about.get("nodes", ()):
        print(f"executor ray: {node}", flush=True)
    if about["sandbox"] == "bwrap":
        print(f"sandbox: bubblewrap {about.get('bwrap_version') or ''}".rstrip(), flush=True)
    else:
        print(
            f"WARNING: gating without the full sandbox ({about['sandbox']}): {about.get('missing')}",
            file=sys.stderr,
            flush=True,
        )
    width = [32]

    def start(tasks, missing) -> None:
        # what this machine lacks, once per tool, and what no arm's cap can pay for, before any check runs
        for m in missing:
            print(f"MISSING {m}", file=sys.stderr, flush=True)
        _cap_warnings(tasks, arms)
        width[0] = max([len(t.id) for t in tasks] + [4])
        print(header(width[0]), flush=True)

    results, problems = gate_suites(
        [Path(p) for p in args.suites],
        jobs=args.jobs,
        on_start=start,
        sandbox=sandbox,
        on_result=lambda g: print(format_row(g, width[0]), flush=True),
    )
    skipped = [g for g in results if g.skipped is not None]
    failed = [g for g in results if not g.ok and g.skipped is None]
    for problem in problems:
        print(f"BROKEN {problem}", file=sys.stderr)
    for gate in failed:
        for check in gate.failed():
            first, *rest = check.detail.splitlines() or [""]
            print(f"FAILED {gate.task.id} [{gate.task.path}] {check.name}: {first}", file=sys.stderr)
            if args.verbose:
                for line in rest:
                    print(f"    {line}", file=sys.stderr)
    if args.verbose:  # what made a graded check `tampering`, rejected as it should be or not
        for gate in results:
            for check in gate.checks:
                for finding in check.findings:
                    print(f"TAMPERING {gate.task.id} {check.name}: {finding}", file=sys.stderr)
    not_gated = f"{len(skipped)} not gated (runtime missing, see MISSING above); " if skipped else ""
    print(
        f"{len(results) - len(failed) - len(skipped)} of {len(results)} tasks gate cleanly; "
        f"{len(failed)} failed; {not_gated}{len(problems)} broken task folders"
    )
    return 1 if failed or problems or skipped else 0


DESCRIPTION = """\
Compare two LLM endpoints for coding work without being fooled by a pass rate: a coding agent
works the same fixture tasks against both, hidden tests graded in a sandbox decide, and the
report gives acceptance, quota per accepted patch, retry tax and censoring, with one decision
rule for the paired comparison. Everything is recorded in a SQLite ledger."""

EPILOG = """\
examples:
  quotabench demo                                a real paired run on a local model, no API key
  quotabench run examples/smoke-scripted.toml    two scripted endpoints, no key needed
  quotabench validate fixtures/core --jobs 2     gate a suite before running it
  quotabench run examples/openai-pair.toml       two hosted endpoints side by side (live view)
  quotabench report                              the decision table of the last run here
  quotabench browse                              every task's verdict, diff and transcript

exit codes: 0 done · 1 a run crashed, or the ledger cannot be read or written (one line; a
crash also names a log file with the traceback) · 2 bad input (config, task folder, arguments)
· 130 a run aborted or stopped (Ctrl-C, q, SIGTERM). `quotabench COMMAND --help` for each."""


def build_parser() -> argparse.ArgumentParser:
    from tuiapp.commands import positive

    parser = argparse.ArgumentParser(
        prog="quotabench", description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "validate",
        help="gate every task of one or more suites before running them",
        description="Check that each task is sound: the hidden tests fail on the untouched workspace, "
        "pass on the reference solution (and an alternate one), and the visible tests run. With --mutants, "
        "measure instead how much wrong code the hidden tests let through: mutants of each reference are "
        "graded, and a task whose tests kill too few of them is flagged weak (exit 1).",
        epilog="examples:\n  quotabench validate fixtures/core --jobs 2\n"
        "  quotabench validate fixtures/core/py-slug-refactor -v\n"
        "  quotabench validate --mutants fixtures/core --jobs 2   how many wrong versions the hidden tests catch",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "suites",
        nargs="*",
        metavar="SUITE",
        help="suite folders, folders of suites or single task folders, e.g. fixtures/core or fixtures "
        "(or none, with --config: its [run] suites)",
    )
    p.add_argument(
        "--jobs",
        "-j",
        type=positive,
        default=1,
        metavar="N",
        help="tasks gated (with --mutants: mutants graded) in parallel, at least 1, e.g. --jobs 2 (default 1)",
    )
    p.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="print the test output tail of failing checks, and every tamper finding of every check",
    )
    p.add_argument(
        "--require-sandbox", action="store_true", help="refuse to run unless the bubblewrap sandbox runs here"
    )
    p.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="where the checks run: this machine, or a Ray cluster (needs the [ray] extra), e.g. --executor ray",
    )
    p.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="with --executor ray: the cluster, e.g. --ray-address auto or ray://host:10001 "
        "(default: a local Ray for this command)",
    )
    from tuiapp.mutants_cmd import add_arguments

    add_arguments(p)
    p.set_defaults(func=_cmd_validate)

    from tuiapp import commands

    commands.register(sub)
    return parser


def _config_ledger(config_file: str) -> str:
    """The ledger a run config writes: its run.db (relative to the config's folder), else the default."""
    from agent.config import load_config
    from agent.shipped import shipped_path

    return str(load_config(shipped_path(config_file)).db)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if getattr(args, "reads_ledger", False) and not args.db:
            from tuiapp.ledger_memory import default_ledger

            args.db = _config_ledger(args.config_file) if args.config_file else default_ledger()
        elif getattr(args, "config_file", None):
            raise QuotabenchError("--db and --config both name the ledger — pass one of them")
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
        print(
            f"quotabench: the ledger cannot be read or written ({leaf}) — free disk space if it is full; "
            "if the file is damaged, restore it from a copy or pass another --db",
            file=sys.stderr,
        )
        return EXIT_CRASHED
    if isinstance(leaf, OSError) and leaf.errno in (errno.ENOSPC, errno.EDQUOT):
        print(
            f"quotabench: the disk is full ({leaf.filename or leaf}) — free space, then `quotabench resume`",
            file=sys.stderr,
        )
        return EXIT_CRASHED
    if isinstance(leaf, OSError) and leaf.filename and leaf.errno in PATH_ERRORS:  # a path given that does not work
        print(
            f"quotabench: {leaf.filename}: {leaf.strerror} — check the path, and that its folder exists and "
            "can be read (or written)",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    log = _write_crash_log(exc)
    print(
        f"quotabench: crashed: {type(leaf).__name__}: {' '.join(str(leaf).split())[:200]} — "
        f"the traceback is in {log}; `quotabench resume` finishes the run",
        file=sys.stderr,
    )
    return EXIT_CRASHED


def _first_leaf(exc: BaseException) -> BaseException:
    """The first error inside task groups (an ExceptionGroup's first leaf), else `exc` itself."""
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


def _write_crash_log(exc: BaseException) -> Path:
    return write_crash_log("".join(traceback.format_exception(exc)))


def write_crash_log(text: str) -> Path:
    """`text` (a traceback) in a new log file beside the other state; its path."""
    from tuiapp.ledger_memory import state_dir

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


if __name__ == "__main__":
    sys.exit(main())
