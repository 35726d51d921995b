"""The commands that run something: run (live view or headless, or --replicates), preflight,
resume and demo, each with its parser. The run command builds the engine and hands it to the
live view, or drives it headless (tuiapp/cli/drive.py)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import TYPE_CHECKING

import anyio

from agent import ExitCode, QuotabenchError
from agent.shipped import shipped_path
from tuiapp.cli.drive import guard_harness, headless, want_tui
from tuiapp.cli.ledgers import DEFAULT_DB, check_ledger_path, open_ledger, remember
from tuiapp.cli.options import add_command, db_option, positive, preflight_options
from tuiapp.cli.outcome import after_run, run_exit

if TYPE_CHECKING:
    from agent.config import RunConfig
    from agent.ledger import Ledger
    from agent.run.engine import RunEngine
    from tuiapp.cli.options import Subparsers


def cmd_run(args: argparse.Namespace) -> int:
    from agent.config import load_config
    from agent.run.prepare import check_keys
    from agent.run.schedule import MAX_REPLICATES

    replicates = getattr(args, "replicates", 1)  # `quotabench demo` passes no such option
    if replicates > MAX_REPLICATES:
        raise QuotabenchError(f"--replicates {replicates}: at most {MAX_REPLICATES} — run several sets instead")
    config = preflight_flags(load_config(shipped_path(args.config)), args)
    if getattr(args, "require_sandbox", False):
        config = dataclasses.replace(config, require_sandbox=True)
    if getattr(args, "on_auto_pause", None):
        config = dataclasses.replace(config, auto_pause_policy=args.on_auto_pause)
    check_keys(config)
    db = args.db or str(config.db)
    check_ledger_path(db)
    guard_harness()
    if replicates > 1:
        from agent.run.prepare import check_before_run

        check_before_run(config)
        ledger = open_ledger(db)
        remember(db)
        return _run_replicates(config, ledger, db, replicates)
    live = want_tui(args.headless)
    if live:
        from tuiapp.cli.exits import write_crash_log
        from tuiapp.live.run import run_live

        def open_run() -> tuple[Ledger, RunEngine]:  # in the live view's thread, after its first frame:
            from agent.run.engine import RunEngine  # these imports take a while
            from agent.run.prepare import check_before_run

            check_before_run(config)
            ledger = open_ledger(db)
            remember(db)  # now, not at the end: a run killed with -9 is still this folder's last
            return ledger, RunEngine(config, ledger, auto_pause=True)

        run_id, ledger = run_live(config, open_run, crash_log=write_crash_log)
    else:
        from agent.run.engine import RunEngine
        from agent.run.prepare import check_before_run

        check_before_run(config)
        ledger = open_ledger(db)
        remember(db)  # now, not at the end: a run killed with -9 is still this folder's last
        engine = RunEngine(config, ledger)
        run_id = anyio.run(headless, engine, engine.run)
    try:
        after_run(ledger, run_id, db, live=live)
        return run_exit(ledger, run_id)
    finally:  # the WAL folded into the file (a terminal closed under the report cannot stop that)
        ledger.close()


def preflight_flags(config: RunConfig, args: argparse.Namespace) -> RunConfig:
    """--no-preflight / --force over the config's run.preflight."""
    if getattr(args, "no_preflight", False) and getattr(args, "force", False):
        raise QuotabenchError(
            "--no-preflight and --force contradict each other — pass one: --force still runs the "
            "checks and records them, --no-preflight skips them"
        )
    if getattr(args, "no_preflight", False):
        return dataclasses.replace(config, preflight="off")
    if getattr(args, "force", False):
        return dataclasses.replace(config, preflight="force")
    return config


def _run_replicates(config: RunConfig, ledger: Ledger, db: str, n: int) -> int:
    """`run --replicates N`: N paired runs in turn, headless (the live view would wait for q after each)."""
    from agent.run.schedule import run_replicates

    print(
        f"quotabench: {n} replicates of one manifest, one after another, headless; servers quotabench starts are "
        "restarted between them",
        flush=True,
    )
    run_ids = anyio.run(lambda: run_replicates(config, ledger, n, drive=lambda e: headless(e, e.run)))
    done = [r for r in run_ids if (ledger.run(r) or {}).get("status") == "finished"]
    if len(done) > 1:
        try:
            from agent.metrics.report import build_report, render_report

            print()
            print(render_report(build_report(ledger, done), "text"))
        except QuotabenchError as exc:
            print(f"quotabench: report not available: {exc}", file=sys.stderr)
    print(
        f"\nreplicates: {' '.join(r[:10] for r in run_ids)} — quotabench report --db {db} {' '.join(r[:10] for r in done)}"
    )
    if len(run_ids) < n or len(done) < len(run_ids):
        return run_exit(ledger, run_ids[-1])
    return ExitCode.OK


def cmd_preflight(args: argparse.Namespace) -> int:
    """Probe each arm's endpoint against its config without running anything; bad input (2) when
    a difference would invalidate a run."""
    from agent.config import load_config
    from agent.ledger.writer import AsyncLedger
    from agent.preflight import WOULD_REFUSE, preflight_standalone, refusal, spent_line
    from agent.run.prepare import check_keys, load_tasks

    config = load_config(shipped_path(args.config))
    check_keys(config)
    tasks = load_tasks(config, log=lambda text: print(f"warning: {text}", file=sys.stderr))
    db = args.db or str(config.db)
    ledger = AsyncLedger(open_ledger(db))
    results = anyio.run(lambda: preflight_standalone(config, tasks, ledger, lambda arm, line: print(line, flush=True)))
    print(spent_line(results))
    line = refusal(results, WOULD_REFUSE)
    if line:
        print(f"quotabench: {line}", file=sys.stderr)
        return ExitCode.BAD_INPUT
    return ExitCode.OK


def cmd_resume(args: argparse.Namespace) -> int:
    from agent.run.resume import engine_for_resume, resume_run

    ledger = open_ledger(args.db or DEFAULT_DB, must_exist=True)
    run_id = ledger.resolve_run_id(args.run_id)
    engine = engine_for_resume(ledger, run_id)
    engine.config = preflight_flags(engine.config, args)
    if args.on_auto_pause:
        engine.config = dataclasses.replace(engine.config, auto_pause_policy=args.on_auto_pause)
    guard_harness()
    anyio.run(headless, engine, lambda: resume_run(engine))
    after_run(ledger, run_id, args.db or DEFAULT_DB)
    return run_exit(ledger, run_id)


def cmd_demo(args: argparse.Namespace) -> int:
    from tuiapp.cli.demo import demo_run_args

    return cmd_run(demo_run_args(args))


def _config_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", help="the run config TOML, e.g. examples/openai-pair.toml (every key: docs/config.md)")


def _policy_option(p: argparse.ArgumentParser) -> None:
    from agent.config import AUTO_PAUSE_POLICIES

    p.add_argument(
        "--on-auto-pause",
        choices=AUTO_PAUSE_POLICIES,
        metavar="POLICY",
        help="what a run without the live view does when an arm's next call would pass its auto-pause share "
        "or its cap, e.g. --on-auto-pause stop-arm (default: run.auto_pause_policy of the config, "
        f"else continue: the arm is censored if its cap runs out); one of: {', '.join(AUTO_PAUSE_POLICIES)}",
    )


def add_run(sub: Subparsers) -> None:
    p = add_command(
        sub,
        "run",
        "run two endpoints side by side on a suite (live view in a terminal)",
        "Run a paired benchmark from a config: both arms walk the same tasks; every call, attempt and grade "
        "goes to the ledger. In a terminal the live view shows it (p pause, a abort, q quit); otherwise one "
        "line per event.",
        "  quotabench run examples/smoke-scripted.toml        no key needed: two scripted endpoints\n"
        "  quotabench run examples/openai-pair.toml --db pair.sqlite\n"
        "  quotabench run my.toml --headless --on-auto-pause stop-arm > run.log",
        cmd_run,
    )
    _config_argument(p)
    db_option(p, reads=False)
    p.add_argument(
        "--headless", action="store_true", help="one line per event instead of the live view, e.g. for CI logs"
    )
    _policy_option(p)
    p.add_argument(
        "--require-sandbox",
        action="store_true",
        help="refuse to start unless the bubblewrap sandbox runs here (also: [run] require_sandbox = true)",
    )
    preflight_options(p)
    p.add_argument(
        "--replicates",
        type=positive,
        default=1,
        metavar="N",
        help="run the manifest N times (headless), restarting the servers quotabench starts between them, "
        "e.g. --replicates 3",
    )


def add_preflight(sub: Subparsers) -> None:
    p = add_command(
        sub,
        "preflight",
        "probe each arm's endpoint against its config before spending quota",
        "Probe each arm's endpoint with a few tiny calls and compare it with the config: the model it reports, "
        "the context it accepts, stream usage, native tool calls, parallel slots, and for llama.cpp servers "
        "quotabench starts the GGUF hash and flags. Exit 2 on a difference that would invalidate a run. The "
        "probes are recorded in the ledger as calls of kind 'preflight', never charged to a cap.",
        "  quotabench preflight examples/smoke-scripted.toml\n"
        "  quotabench preflight examples/misreport-scripted.toml --db probes.sqlite",
        cmd_preflight,
    )
    _config_argument(p)
    p.add_argument(
        "--db",
        metavar="FILE",
        help=f"the ledger that records the probes (default: run.db of the config, else ./{DEFAULT_DB})",
    )


def add_resume(sub: Subparsers) -> None:
    p = add_command(
        sub,
        "resume",
        "finish a killed or aborted run without re-running finished attempts",
        "Finish a run that was killed, crashed or aborted: finished attempts are kept, the rest are run (headless).",
        "  quotabench resume\n  quotabench resume 01M8QW2MWC --db pair.sqlite",
        cmd_resume,
    )
    p.add_argument("run_id", nargs="?", help="run id or a unique prefix, e.g. 01M8QW2MWC (default: the newest run)")
    db_option(p)
    _policy_option(p)
    preflight_options(p)


def add_demo(sub: Subparsers) -> None:
    p = add_command(
        sub,
        "demo",
        "a real paired run on a local model, no API key (needs the [local] extra)",
        "Run examples/demo-local.toml: Gemma 3 270M through llama.cpp, native tool calls (arm A) against the "
        "text action protocol (arm B) on five small tasks; about 5 minutes on 2 cores.",
        "  quotabench demo\n  quotabench demo --headless > demo.log && quotabench report\n  quotabench demo --strategies",
        cmd_demo,
    )
    p.add_argument(
        "--db",
        metavar="FILE",
        default="quotabench-demo.sqlite",
        help="the ledger to write, e.g. --db demo2.sqlite (default: quotabench-demo.sqlite); a bare "
        "`report` or `browse` here opens it afterwards",
    )
    p.add_argument("--headless", action="store_true", help="one line per event instead of the live view")
    p.add_argument("--strategies", action="store_true", help="Direct vs Parallel@2 on the same local model instead")
