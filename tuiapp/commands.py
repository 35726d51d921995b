"""Subcommands beyond `validate`: run, preflight, resume, report, export, browse, import, demo."""
from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

import anyio

from agent import QuotabenchError

DEFAULT_DB = "quotabench.sqlite"


def _open_ledger(path: str | Path, must_exist: bool = False):
    from agent.ledger import Ledger
    path = Path(path)
    if must_exist and not path.is_file():
        raise QuotabenchError(f"ledger {path}: no such file — run `quotabench run CONFIG.toml` first or pass --db")
    return Ledger(path)  # a file that is not a ledger (or is damaged) is one LedgerError line


async def _headless(engine, start) -> str:
    """Drive the engine with the line printer; Ctrl-C once = graceful abort, twice = stop now."""
    from agent.printer import print_events
    result: dict = {}

    async def watch_signals(scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            count = 0
            async for signum in signals:
                count += 1
                if signum == signal.SIGTERM or count > 1:
                    print("quotabench: stopping now; in-flight calls are recorded as lost", file=sys.stderr, flush=True)
                    engine.stop_now()
                else:
                    print("quotabench: aborting after in-flight calls finish (Ctrl-C again to stop now)", file=sys.stderr, flush=True)
                    engine.abort()

    async with anyio.create_task_group() as tg:
        tg.start_soon(print_events, engine.events)
        watcher = anyio.CancelScope()

        async def guarded() -> None:
            with watcher:
                await watch_signals(watcher)

        tg.start_soon(guarded)
        try:
            result["run_id"] = await start()
        finally:
            watcher.cancel()
    return result["run_id"]


def _want_tui(args) -> bool:
    return not args.headless and sys.stdout.isatty() and sys.stdin.isatty()


def _exit_code(ledger, run_id: str) -> int:
    """0 finished, 130 aborted or stopped, 2 refused by preflight, 1 crashed (see tuiapp/cli.py)."""
    status = (ledger.run(run_id) or {}).get("status")
    if status == "refused":
        from agent.preflight import recorded_refusal
        rows = ledger.query("select arm, checks_json from preflights where run_id = ? order by created_utc", [run_id])
        print(f"quotabench: {recorded_refusal(rows) or 'preflight refused the run'}", file=sys.stderr)
        return 2
    if status not in ("finished", "aborted"):  # the live view showed why; the terminal gets one line
        print(f"quotabench: run {run_id} {status or 'did not start'} — `quotabench resume {run_id[:10]}` finishes it",
              file=sys.stderr)
    return {"finished": 0, "aborted": 130}.get(status, 1)


def _after_run(ledger, run_id: str, db: str) -> None:
    if (ledger.run(run_id) or {}).get("status") == "refused":
        return  # nothing ran: the preflight table above says why, _exit_code the one line
    try:
        from agent.metrics.report import build_report, render_report
        print()
        print(render_report(build_report(ledger, [run_id]), "text"))
    except QuotabenchError as exc:
        print(f"quotabench: report not available: {exc}", file=sys.stderr)
    print(f"\nNext: quotabench browse --db {db} {run_id[:10]}   (every task's verdict, diff and transcript)")


def _guard_harness() -> None:
    """Before any model-written code runs: hide this process from same-uid code and clear what
    killed runs left behind (scratch folders, fallback cgroups)."""
    from verifiers.isolation import clean_stale_cgroups, protect_harness
    from verifiers.scratch import clean_stale
    protect_harness()
    clean_stale()
    clean_stale_cgroups()


def _cmd_run(args: argparse.Namespace) -> int:
    import dataclasses

    from agent.config import load_config
    from agent.engine import RunEngine, check_before_run
    from agent.schedule import MAX_REPLICATES
    replicates = getattr(args, "replicates", 1)  # `quotabench demo` passes no such option
    if replicates > MAX_REPLICATES:
        raise QuotabenchError(f"--replicates {replicates}: at most {MAX_REPLICATES} — run several sets instead")
    config = _preflight_flags(load_config(args.config), args)
    if getattr(args, "require_sandbox", False):
        config = dataclasses.replace(config, require_sandbox=True)
    check_before_run(config)
    _guard_harness()
    db = args.db or str(config.db if config.db.is_absolute() else Path.cwd() / config.db)
    ledger = _open_ledger(db)
    if replicates > 1:
        return _run_replicates(config, ledger, db, replicates)
    if _want_tui(args):
        from tuiapp.live.app import run_live
        run_id = run_live(config, ledger)
    else:
        engine = RunEngine(config, ledger)
        run_id = anyio.run(_headless, engine, engine.run)
    _after_run(ledger, run_id, db)
    return _exit_code(ledger, run_id)


def _preflight_flags(config, args):
    """--no-preflight / --force over the config's run.preflight."""
    import dataclasses
    if getattr(args, "no_preflight", False) and getattr(args, "force", False):
        raise QuotabenchError("--no-preflight and --force contradict each other — pass one: --force still runs the "
                              "checks and records them, --no-preflight skips them")
    if getattr(args, "no_preflight", False):
        return dataclasses.replace(config, preflight="off")
    if getattr(args, "force", False):
        return dataclasses.replace(config, preflight="force")
    return config


def _run_replicates(config, ledger, db: str, n: int) -> int:
    """`run --replicates N`: N paired runs in turn, headless (the live view would wait for q after each)."""
    from agent.schedule import run_replicates
    print(f"quotabench: {n} replicates of one manifest, one after another, headless; servers quotabench starts are "
          "restarted between them", flush=True)
    run_ids = anyio.run(lambda: run_replicates(config, ledger, n, drive=lambda e: _headless(e, e.run)))
    done = [r for r in run_ids if (ledger.run(r) or {}).get("status") == "finished"]
    if len(done) > 1:
        try:
            from agent.metrics.report import build_report, render_report
            print()
            print(render_report(build_report(ledger, done), "text"))
        except QuotabenchError as exc:
            print(f"quotabench: report not available: {exc}", file=sys.stderr)
    print(f"\nreplicates: {' '.join(r[:10] for r in run_ids)} — quotabench report --db {db} {' '.join(r[:10] for r in done)}")
    if len(run_ids) < n or len(done) < len(run_ids):
        return _exit_code(ledger, run_ids[-1])
    return 0


def _cmd_preflight(args: argparse.Namespace) -> int:
    """Probe each arm's endpoint against its config without running anything; 2 when a
    difference would invalidate a run."""
    from agent.config import load_config
    from agent.engine import check_keys, load_tasks
    from agent.ledger.writer import AsyncLedger
    from agent.preflight import WOULD_REFUSE, preflight_standalone, refusal, spent_line
    config = load_config(args.config)
    check_keys(config)
    tasks = load_tasks(config, log=lambda text: print(f"warning: {text}", file=sys.stderr))
    db = args.db or str(config.db if config.db.is_absolute() else Path.cwd() / config.db)
    ledger = AsyncLedger(_open_ledger(db))
    results = anyio.run(lambda: preflight_standalone(config, tasks, ledger, lambda arm, line: print(line, flush=True)))
    print(spent_line(results))
    line = refusal(results, WOULD_REFUSE)
    if line:
        print(f"quotabench: {line}", file=sys.stderr)
        return 2
    return 0


def _cmd_resume(args: argparse.Namespace) -> int:
    import dataclasses

    from agent.resume import engine_for_resume, resume_run
    ledger = _open_ledger(args.db or DEFAULT_DB, must_exist=True)
    run_id = ledger.resolve_run_id(args.run_id)
    engine = engine_for_resume(ledger, run_id)
    engine.config = _preflight_flags(engine.config, args)
    _guard_harness()
    anyio.run(_headless, engine, lambda: resume_run(engine))
    _after_run(ledger, run_id, args.db or DEFAULT_DB)
    return _exit_code(ledger, run_id)


def _cmd_report(args: argparse.Namespace) -> int:
    from agent.metrics.report import build_report, render_report
    ledger = _open_ledger(args.db or DEFAULT_DB, must_exist=True)
    if args.list:
        for run in ledger.runs():
            print(f"{run['id']}  {run['created_utc']}  {run['status']:<9} manifest {run['manifest_sha256'][:12]}")
        return 0
    run_ids = [ledger.resolve_run_id(r) for r in args.run_ids] or [ledger.resolve_run_id(None)]
    fmt = "markdown" if args.markdown else "json" if args.json else "text"
    print(render_report(build_report(ledger, run_ids, with_cost=not args.no_cost), fmt))
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from agent.export import export_attempts
    ledger = _open_ledger(args.db or DEFAULT_DB, must_exist=True)
    run_id = ledger.resolve_run_id(args.run_id)
    out = open(args.output, "w", newline="") if args.output else sys.stdout
    try:
        count = export_attempts(ledger, run_id, args.format, out)
    finally:
        if args.output:
            out.close()
    print(f"exported {count} attempts of run {run_id}", file=sys.stderr)
    return 0


def _cmd_browse(args: argparse.Namespace) -> int:
    from tuiapp.browse.app import run_browser
    ledger = _open_ledger(args.db or DEFAULT_DB, must_exist=True)
    run_id = ledger.resolve_run_id(args.run_id) if args.run_id else None
    run_browser(ledger, run_id)
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    if args.source != "humaneval":
        raise QuotabenchError(f"unknown import source {args.source!r} — valid sources: humaneval")
    from verifiers.humaneval import build_humaneval_suite
    ids = build_humaneval_suite(Path(args.dest), limit=args.limit)
    notes_file = Path(args.dest) / "humaneval-notes.json"
    notes = json.loads(notes_file.read_text()) if notes_file.is_file() else {}
    for task_id, note in sorted(notes.items()):
        print(f"note {task_id}: {note}")
    print(f"wrote {len(ids)} HumanEval tasks to {args.dest} ({len(notes)} with notes above); "
          f"gate them with: quotabench validate {args.dest} --jobs 2")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from tuiapp.demo import run_demo
    return run_demo(args)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def _preflight_options(p) -> None:
    p.add_argument("--no-preflight", action="store_true",
                   help="skip the endpoint checks before the run (also: [run] preflight = \"off\")")
    p.add_argument("--force", action="store_true", help="run even when preflight finds a difference that "
                                                        "invalidates the run (also: [run] preflight = \"force\")")


def register(sub) -> None:
    p = sub.add_parser("run", help="run a paired benchmark from a config (live view on a terminal, else headless)")
    p.add_argument("config", help="run config TOML (see docs/config.md)")
    p.add_argument("--db", help=f"ledger file (default: run.db of the config, else ./{DEFAULT_DB})")
    p.add_argument("--headless", action="store_true", help="line printer instead of the live view")
    p.add_argument("--require-sandbox", action="store_true",
                   help="refuse to start unless the bubblewrap sandbox runs here (also: [run] require_sandbox = true)")
    _preflight_options(p)
    p.add_argument("--replicates", type=_positive, default=1, metavar="N",
                   help="run the manifest N times (headless), restarting the servers quotabench starts between them")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("preflight", help="probe each arm's endpoint against its config (model, context, usage, "
                                         "tool calls, slots, GGUF); exit 2 on a difference that invalidates a run")
    p.add_argument("config", help="run config TOML (see docs/config.md)")
    p.add_argument("--db", help=f"ledger that records the probes (default: run.db of the config, else ./{DEFAULT_DB})")
    p.set_defaults(func=_cmd_preflight)

    p = sub.add_parser("resume", help="finish a killed or aborted run without re-running finished attempts")
    p.add_argument("run_id", nargs="?", help="run id or a unique prefix (default: the newest run)")
    p.add_argument("--db", help=f"ledger file (default ./{DEFAULT_DB})")
    _preflight_options(p)
    p.set_defaults(func=_cmd_resume)

    p = sub.add_parser("report", help="decision table and paired comparison of one or more runs")
    p.add_argument("run_ids", nargs="*", help="run ids or prefixes (default: the newest run)")
    p.add_argument("--db", help=f"ledger file (default ./{DEFAULT_DB})")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--json", action="store_true")
    p.add_argument("--no-cost", action="store_true", help="leave out cost columns when arms have no price table")
    p.add_argument("--list", action="store_true", help="list the runs in the ledger")
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser("export", help="write the per-attempt table as CSV or JSONL")
    p.add_argument("run_id", nargs="?")
    p.add_argument("--db", help=f"ledger file (default ./{DEFAULT_DB})")
    p.add_argument("--format", choices=("csv", "jsonl"), default="csv")
    p.add_argument("--output", "-o", help="file to write (default: stdout)")
    p.set_defaults(func=_cmd_export)

    p = sub.add_parser("browse", help="browse runs, tasks, attempts, diffs and transcripts")
    p.add_argument("run_id", nargs="?")
    p.add_argument("--db", help=f"ledger file (default ./{DEFAULT_DB})")
    p.set_defaults(func=_cmd_browse)

    p = sub.add_parser("import", help="build a suite from a foreign benchmark (humaneval)")
    p.add_argument("source", help="humaneval")
    p.add_argument("dest", help="folder to write the suite into")
    p.add_argument("--limit", type=int, help="only the first N problems")
    p.set_defaults(func=_cmd_import)

    p = sub.add_parser("demo", help="a real paired benchmark on the local model (needs the [local] extra)")
    p.add_argument("--db", default="quotabench-demo.sqlite")
    p.add_argument("--headless", action="store_true")
    p.set_defaults(func=_cmd_demo)
