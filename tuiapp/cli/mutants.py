"""`quotabench validate --mutants`: score each task's hidden tests against mutants of its reference.

Prints one row per task as it finishes (killed, survived, score, `weak`), then every survivor as
a diff and the suite summary, weakest tasks first. On a terminal a progress line (tasks,
mutants, ETA) is redrawn under the rows; elsewhere only the rows are printed.
Exit 0 when no task is weak, 1 when one is (or a task folder is broken).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:  # the parser is built for every command: the scorer (tree-sitter) loads only when it runs
    from verifiers.mutants.outcome import TaskScore
    from verifiers.mutants.runner import Progress
    from verifiers.sandbox import Sandbox


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    m, s = divmod(int(seconds + 0.5), 60)
    return f"{m // 60}h{m % 60:02d}m" if m >= 60 else f"{m}m{s:02d}s"


class ProgressLine:
    """A progress bar redrawn in place on a terminal; silent when the stream is not one."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.live = stream.isatty()
        self.lock = threading.Lock()
        self.shown = False

    def draw(self, p: Progress) -> None:
        if not self.live:
            return
        share = p.mutants_done / p.mutants if p.mutants else 1.0
        bar_width = max(10, min(30, shutil.get_terminal_size((80, 24)).columns - 50))
        filled = int(share * bar_width)
        text = (
            f"[{'#' * filled}{'.' * (bar_width - filled)}] tasks {p.tasks_done}/{p.tasks} "
            f"mutants {p.mutants_done}/{p.mutants} ETA {_clock(p.eta_s())}"
        )
        with self.lock:
            self.stream.write("\r" + text + "\x1b[K")
            self.stream.flush()
            self.shown = True

    def print(self, line: str) -> None:
        with self.lock:
            if self.shown:
                self.stream.write("\r\x1b[K")
            self.stream.write(line + "\n")
            self.stream.flush()

    def clear(self) -> None:
        with self.lock:
            if self.shown:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
                self.shown = False


def run_mutants(args: argparse.Namespace, sandbox: Sandbox) -> int:
    from agent.metrics.mutation import HEADER, WIDTH, summary_lines, survivor_lines, task_row
    from verifiers.mutants.cache import ScoreCache
    from verifiers.mutants.runner import Settings, score_suites

    below = args.weak_below
    out = ProgressLine(sys.stdout)
    out.print(HEADER)
    last_progress: list[Progress] = []

    def on_task(score: TaskScore) -> None:
        out.print(task_row(score, below))
        if last_progress:
            out.draw(last_progress[0])

    def on_progress(p: Progress) -> None:
        last_progress[:] = [p]
        out.draw(p)

    started = time.monotonic()
    scores, problems = score_suites(
        [Path(p) for p in args.suites],
        sandbox,
        Settings(max_mutants=args.max_mutants, jobs=args.jobs),
        ScoreCache(Path(args.cache_dir) if args.cache_dir else None),
        on_task=on_task,
        on_progress=on_progress,
    )
    out.clear()
    for problem in problems:
        print(f"BROKEN {problem}", file=sys.stderr)
    with_survivors = sorted(
        (s for s in scores if s.survivors() or s.count("equivalent")), key=lambda s: (s.score or 0.0, s.task_id)
    )
    for score in with_survivors:
        print(f"\n{score.task_id}: {score.survived} survived of {score.generated}")
        for line in survivor_lines(score):
            print(line[:WIDTH])
    print()
    for line in summary_lines(scores, below, time.monotonic() - started):
        print(textwrap.fill(line, WIDTH, subsequent_indent="  "))
    weak = [s for s in scores if s.weak(below)]
    return 1 if weak or problems else 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--mutants",
        action="store_true",
        help="instead of the gate checks, grade mutants of each reference with the hidden tests and report "
        "the mutation score per task (also: [validate] mutants = true with --config)",
    )
    p.add_argument(
        "--weak-below",
        type=float,
        default=None,
        metavar="SHARE",
        help="with --mutants: flag a task `weak` when its tests kill fewer than SHARE of its mutants "
        "(default 0.80), e.g. --weak-below 0.9",
    )
    p.add_argument(
        "--max-mutants",
        type=int,
        default=None,
        metavar="N",
        help="with --mutants: at most N mutants per task, an even share of each kind (default 40), "
        "e.g. --max-mutants 20",
    )
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="with --mutants: where results are cached per task version (default "
        "~/.cache/quotabench/mutants), e.g. --cache-dir .mutants",
    )
    p.add_argument(
        "--config",
        dest="validate_config",
        metavar="FILE",
        help="a run config: its [run] suites (when no SUITE is given), its [validate] settings, and its arms' "
        "cap_tokens to warn about each task whose first request alone passes one (default: an arm at the default "
        "cap), e.g. --config examples/smoke-scripted.toml",
    )
