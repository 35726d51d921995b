"""The `quotabench` program: the top-level parser (the description, examples and exit codes of
its --help; each command's parser comes from the module of its group) and `main`, which runs a
command and turns any failure into one line and an exit code (tuiapp/cli/exits.py)."""

from __future__ import annotations

import argparse
import os
import sys

from agent import ExitCode, QuotabenchError
from tuiapp.cli import reading, running, suites
from tuiapp.cli.exits import exit_codes_text, failure_exit

DESCRIPTION = """\
Compare two LLM endpoints for coding work without being fooled by a pass rate: a coding agent
works the same fixture tasks against both, hidden tests graded in a sandbox decide, and the
report gives acceptance, quota per accepted patch, retry tax and censoring, with one decision
rule for the paired comparison. Everything is recorded in a SQLite ledger."""

EXAMPLES = """\
examples:
  quotabench demo                                a real paired run on a local model, no API key
  quotabench run examples/smoke-scripted.toml    two scripted endpoints, no key needed
  quotabench validate fixtures/core --jobs 2     gate a suite before running it
  quotabench run examples/openai-pair.toml       two hosted endpoints side by side (live view)
  quotabench report                              the decision table of the last run here
  quotabench browse                              every task's verdict, diff and transcript"""

# The commands in the order --help lists them.
COMMANDS = (
    suites.add_validate,
    running.add_run,
    running.add_preflight,
    running.add_resume,
    reading.add_report,
    reading.add_export,
    reading.add_browse,
    suites.add_import,
    running.add_demo,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="quotabench",
        description=DESCRIPTION,
        epilog=f"{EXAMPLES}\n\n{exit_codes_text()}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
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
            from tuiapp.cli.ledgers import default_ledger

            args.db = _config_ledger(args.config_file) if args.config_file else default_ledger()
        elif getattr(args, "config_file", None):
            raise QuotabenchError("--db and --config both name the ledger — pass one of them")
        code: int = args.func(args) or ExitCode.OK
        return code
    except BrokenPipeError:  # `quotabench export | head`: the reader is gone, nothing to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.OK
    except KeyboardInterrupt:
        print("quotabench: interrupted", file=sys.stderr)
        return ExitCode.STOPPED
    except BaseException as exc:  # noqa: BLE001 — the one place that turns any failure into one line
        if isinstance(exc, SystemExit):
            raise
        return failure_exit(exc)
