"""`quotabench` — the command line. Each subcommand is a thin function over agent/ and verifiers/."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from agent import QuotabenchError
from verifiers import VerifierError



def _cmd_validate(args: argparse.Namespace) -> int:
    from verifiers.gate import format_row, gate_suites, header
    for suite in args.suites:
        if not Path(suite).is_dir():
            raise VerifierError(f"suite {suite}: not a folder — pass a folder of tasks or one task folder")
    width = [32]

    def start(tasks, missing) -> None:
        # what this machine lacks, once per tool, before any check runs
        for m in missing:
            print(f"MISSING {m}", file=sys.stderr, flush=True)
        width[0] = max([len(t.id) for t in tasks] + [4])
        print(header(width[0]), flush=True)

    results, problems = gate_suites([Path(p) for p in args.suites], jobs=args.jobs, on_start=start,
                                    on_result=lambda g: print(format_row(g, width[0]), flush=True))
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
    not_gated = f"{len(skipped)} not gated (runtime missing, see MISSING above); " if skipped else ""
    print(f"{len(results) - len(failed) - len(skipped)} of {len(results)} tasks gate cleanly; "
          f"{len(failed)} failed; {not_gated}{len(problems)} broken task folders")
    return 1 if failed or problems or skipped else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="quotabench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("validate", help="gate every task of one or more suites (hidden fails untouched, passes on reference, ...)")
    p.add_argument("suites", nargs="+", help="suite folders (or single task folders)")
    p.add_argument("--jobs", "-j", type=int, default=1, help="tasks gated in parallel")
    p.add_argument("--verbose", "-v", action="store_true", help="print the test output tail of failing checks")
    p.set_defaults(func=_cmd_validate)

    from tuiapp import commands
    commands.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except (QuotabenchError, VerifierError) as exc:
        print(f"quotabench: {exc}", file=sys.stderr)
        return 2
    except BaseExceptionGroup as group:  # an error raised inside a task group
        known, rest = group.split((QuotabenchError, VerifierError))
        if rest is not None or known is None:
            raise
        print(f"quotabench: {_first_leaf(known)}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `quotabench export | head`: the reader is gone, nothing to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("quotabench: interrupted", file=sys.stderr)
        return 130


def _first_leaf(group: BaseExceptionGroup) -> BaseException:
    while isinstance(group, BaseExceptionGroup):
        group = group.exceptions[0]
    return group


if __name__ == "__main__":
    sys.exit(main())
