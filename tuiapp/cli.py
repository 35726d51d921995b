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
