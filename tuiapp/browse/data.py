"""What the browser shows, read from the ledger through its named reads
(agent/ledger/browse_reads.py): plain dataclasses, no Textual, no SQL of its own.

Every function here is called from a worker thread (never on the event loop) through
`Reader`, which serializes the reads on the one SQLite connection. Nothing here writes.
A ledger from a crashed run is read as it is: attempts still 'running', calls 'in_flight',
no grades; those show up as such instead of being guessed at.
"""

from __future__ import annotations

import json
import threading
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from agent import QuotabenchError
from agent.classify import CLASSES
from agent.ledger import Ledger
from agent.ledger import browse_reads as reads

# agent.metrics pulls in numpy: it is imported inside the two functions that need it, which run
# in worker threads, so the first screen appears at once.

T = TypeVar("T")
NOT_RUN = "not run"
# Attempt statuses written by agent/run/attempt.py and calls.py: running -> ended (tokens and diff written) -> done (classified).
UNFINISHED_STATUS = {"running": "running", "ended": "ungraded"}


class BrowseError(QuotabenchError):
    """Something the browser was asked to show is not in the ledger."""


class Reader:
    """The ledger plus a lock: workers run `reader.call(fn, ...)` in threads, one read at a time.

    It keeps the last few reports it built (`report`), keyed by the run's status and attempt
    count, so the runs list can prepare the report of the run under the cursor before it is
    opened, and a run that changed since is computed again."""

    REPORTS_KEPT = 4

    def __init__(self, ledger: Ledger):
        self.ledger = ledger
        self._lock = threading.Lock()
        self._reports: dict[tuple[Any, ...], dict[str, Any]] = {}  # (run id, its status, finished, attempts) -> report

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        with self._lock:
            return fn(self.ledger, *args)

    def report(self, ledger: Ledger, run_id: str) -> dict[str, Any]:
        """`load_report` of `run_id`, kept while the run does not change (call it through `call`)."""
        key = (run_id, *reads.run_version(ledger, run_id))
        if key not in self._reports:
            report = load_report(ledger, run_id)
            self._reports = dict(list(self._reports.items())[-(self.REPORTS_KEPT - 1) :])
            self._reports[key] = report
        return self._reports[key]


def loads(text: str | None, default: Any) -> Any:
    """Parse a *_json column; a missing or broken value gives `default` instead of an error."""
    if not text:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default


# -- runs ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ArmHeadline:
    """The report's figures for one arm (agent.metrics.arm_metrics): qap and retry_tax are None
    when the arm is not comparable, and acceptance is then over its `decided` tasks only."""

    name: str
    model: str
    accepted: int
    n_tasks: int
    acceptance: float | None
    qap: float | None
    retry_tax: float | None
    total_tokens: int
    censored: bool
    unfinished: int
    cap_hit: bool
    decided: int = 0
    not_comparable: str | None = None


@dataclass(frozen=True)
class RunRow:
    id: str
    created_utc: str
    finished_utc: str | None
    status: str
    manifest_sha256: str
    n_tasks: int
    n_attempts: int
    arms: tuple[tuple[str, str], ...]  # (name, model)
    sandbox: str | None = None  # runs.isolation_sandbox: bwrap, fallback, or None (older runs)
    process_json: str | None = None  # the process that drives (or drove) it: running or interrupted


def list_runs(ledger: Ledger) -> list[RunRow]:
    rows = reads.runs_with_counts(ledger)
    arms: dict[str, list[tuple[str, str]]] = {}
    for arm in reads.arm_models(ledger):
        arms.setdefault(arm["run_id"], []).append((arm["name"], arm["model"] or ""))
    return [
        RunRow(
            r["id"],
            r["created_utc"] or "",
            r["finished_utc"],
            r["status"] or "?",
            r["manifest_sha256"] or "",
            r["n_tasks"],
            r["n_attempts"],
            tuple(arms.get(r["id"], ())),
            r["isolation_sandbox"],
            r["process_json"],
        )
        for r in rows
    ]


def headlines(ledger: Ledger, run_id: str) -> list[ArmHeadline]:
    """Acceptance, QAP, retry tax and censoring per arm: the metrics module's numbers, no bootstrap."""
    from agent.metrics import arm_metrics
    from agent.metrics.integrity import control_ids

    tasks = ledger.tasks(run_id)
    controls = control_ids(tasks)
    tasks = [t for t in tasks if t["task_id"] not in controls]  # as the report: controls are in no figure
    by_arm: dict[str, list[dict[str, Any]]] = {}
    for row in reads.metric_attempts(ledger, run_id):
        if row["task_id"] not in controls:
            by_arm.setdefault(row["arm"], []).append(row)
    out = []
    for arm in ledger.arms(run_id):
        metrics, _ = arm_metrics(arm, tasks, by_arm.get(arm["name"], []))
        m = metrics.figures
        out.append(
            ArmHeadline(
                arm["name"],
                arm["model"] or "",
                m.accepted,
                m.n_tasks,
                m.acceptance,
                m.qap,
                m.retry_tax,
                m.total_tokens,
                metrics.censored,
                len(m.unfinished),
                m.cap_hit,
                m.decided,
                m.not_comparable,
            )
        )
    return out


def all_headlines(ledger: Ledger, run_ids: list[str]) -> dict[str, list[ArmHeadline]]:
    return {run_id: headlines(ledger, run_id) for run_id in run_ids}


# -- one run: the report and the task x arm grid -----------------------------------------------
@dataclass(frozen=True)
class Cell:
    """What one arm did with one task, as the grid shows it."""

    arm: str
    attempts: int
    verdict: str  # pass / fail / timeout / error / ungraded / running / not run / —
    failure_class: str  # a class of agent.classify, or running / ungraded / not run
    accepted_on: int | None
    tokens: int


@dataclass(frozen=True)
class GridRow:
    task_id: str
    language: str
    kind: str
    cells: tuple[Cell, ...]
    control: bool = False  # an impossible control: a pass there means the grader was gamed


@dataclass(frozen=True)
class RunView:
    run: dict[str, Any]
    arms: list[dict[str, Any]]
    rows: list[GridRow]
    forced: str | None = None  # the banner of a run forced past an invalidating preflight


def cell_of(arm: str, attempts: list[dict[str, Any]], arm_row: dict[str, Any] | None = None) -> Cell:
    """The grid cell of one task on one arm. Its class is agent.metrics.outcome's task_outcome,
    the report's own (given the arms row: its state, cap and unfinished list); an attempt still
    running or not yet graded shows as such."""
    from agent.metrics.outcome import NOT_RUN as OUTCOME_NOT_RUN  # numpy: in the worker thread
    from agent.metrics.outcome import AttemptRecord, task_outcome

    tokens = sum(a["total_tokens"] or 0 for a in attempts)
    if not attempts:
        return Cell(arm, 0, NOT_RUN, NOT_RUN, None, 0)
    if (attempts[0].get("stage") or "attempt") != "attempt":  # a strategy task: its submission decides
        return _staged_cell(arm, attempts, tokens)
    hit = next((a for a in attempts if a["accepted"]), None)
    last = hit or attempts[-1]
    if last["status"] in UNFINISHED_STATUS or not last["failure_class"]:
        state = UNFINISHED_STATUS.get(last["status"], "ungraded")
        return Cell(arm, len(attempts), state, state, None, tokens)
    row = arm_row or {}
    unfinished = set(json.loads(row.get("unfinished_json") or "[]"))
    task_id = attempts[0].get("task_id", "")
    outcome = task_outcome(
        task_id,
        [
            AttemptRecord(task_id, a["attempt_no"], a["failure_class"], bool(a["accepted"]), a["total_tokens"] or 0)
            for a in attempts
        ],
        max_attempts=row.get("max_attempts"),
        arm_state=row.get("state") or "finished",
        listed_unfinished=task_id in unfinished,
        cap_hit=bool(row.get("censored")),
    )
    cls = NOT_RUN if outcome.failure_class == OUTCOME_NOT_RUN else outcome.failure_class
    return Cell(arm, len(attempts), last["verdict"] or "—", cls, outcome.accepted_on, tokens)


def _staged_cell(arm: str, attempts: list[dict[str, Any]], tokens: int) -> Cell:
    sub = next((a for a in attempts if a.get("submitted") == 1), None)
    if sub is not None:
        return Cell(
            arm,
            len(attempts),
            sub["verdict"] or "—",
            "accepted" if sub["accepted"] else sub["failure_class"] or "—",
            sub["attempt_no"] if sub["accepted"] else None,
            tokens,
        )
    if any(a.get("submitted") == 0 for a in attempts):
        return Cell(arm, len(attempts), "—", "no_submission", None, tokens)
    state = next((UNFINISHED_STATUS[a["status"]] for a in attempts if a["status"] in UNFINISHED_STATUS), "ungraded")
    return Cell(arm, len(attempts), state, state, None, tokens)


def load_run(ledger: Ledger, run_id: str) -> RunView:
    run = ledger.run(run_id)
    if run is None:
        raise BrowseError(f"run {run_id}: not in the ledger {ledger.path} — list runs with `quotabench report --list`")
    arms = ledger.arms(run_id)
    rows = reads.grid_attempts(ledger, run_id)
    arm_rows = {a["name"]: a for a in arms}
    by_cell: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        by_cell.setdefault((row["task_id"], row["arm"]), []).append(row)
    names = [a["name"] for a in arms] or sorted({r["arm"] for r in rows})
    grid = [
        GridRow(
            t["task_id"],
            t["language"] or "",
            t["kind"] or "",
            tuple(cell_of(name, by_cell.get((t["task_id"], name), []), arm_rows.get(name)) for name in names),
            bool(t.get("control")),
        )
        for t in ledger.tasks(run_id)
    ]
    from agent.metrics.setup import forced_banner, preflight_summary

    preflight = preflight_summary(reads.preflights(ledger, run_id))
    return RunView(run, arms, grid, forced_banner({"preflight": preflight}))


def load_report(ledger: Ledger, run_id: str) -> dict[str, Any]:
    """The report dict of one run; without cost columns (and saying why) when an arm has no price."""
    from agent.metrics import build_report

    return build_report(ledger, [run_id])


@dataclass
class Filters:
    """Grid filters. A row matches a verdict or class filter when any of its cells does."""

    verdict: str | None = None
    failure_class: str | None = None
    language: str | None = None
    kind: str | None = None
    search: str = ""

    def matches(self, row: GridRow) -> bool:
        return (
            (self.language is None or row.language == self.language)
            and (self.kind is None or row.kind == self.kind)
            and (self.verdict is None or any(c.verdict == self.verdict for c in row.cells))
            and (self.failure_class is None or any(c.failure_class == self.failure_class for c in row.cells))
            and self.search.lower() in row.task_id.lower()
        )

    @property
    def active(self) -> bool:
        return any((self.verdict, self.failure_class, self.language, self.kind, self.search))


def filter_choices(rows: list[GridRow]) -> dict[str, list[str]]:
    """The values each filter cycles through: those present in the run (classes in taxonomy order)."""
    classes = {c.failure_class for r in rows for c in r.cells}
    order: dict[str, int] = {name: i for i, name in enumerate(CLASSES)}
    return {
        "verdict": sorted({c.verdict for r in rows for c in r.cells}),
        "failure_class": sorted(classes, key=lambda c: (order.get(c, len(order)), c)),
        "language": sorted({r.language for r in rows}),
        "kind": sorted({r.kind for r in rows}),
    }


# -- one task: both arms side by side ----------------------------------------------------------
@dataclass(frozen=True)
class TaskView:
    run: dict[str, Any]
    task: dict[str, Any]
    arms: list[dict[str, Any]]
    attempts: dict[str, list[dict[str, Any]]]  # arm name -> its attempts in order
    cells: dict[str, Cell]
    submissions: dict[str, dict[str, Any]] = field(
        default_factory=dict[str, Any]
    )  # strategy arms: arm name -> submissions row


def load_task(ledger: Ledger, run_id: str, task_id: str) -> TaskView:
    task = reads.task_row(ledger, run_id, task_id)
    if task is None:
        raise BrowseError(f"run {run_id}: has no task {task_id!r}")
    arms = ledger.arms(run_id)
    rows = reads.task_attempts(ledger, run_id, task_id)
    attempts = {a["name"]: [r for r in rows if r["arm"] == a["name"]] for a in arms}
    subs = {r["arm"]: r for r in reads.task_submissions(ledger, run_id, task_id)}
    return TaskView(
        ledger.run(run_id) or {},
        task,
        arms,
        attempts,
        {a["name"]: cell_of(a["name"], attempts[a["name"]], a) for a in arms},
        subs,
    )


# -- one attempt: diff, evidence, transcript ---------------------------------------------------
@dataclass(frozen=True)
class AttemptView:
    attempt: dict[str, Any]
    task: dict[str, Any]
    arm: dict[str, Any]
    run: dict[str, Any]
    grade: dict[str, Any] | None
    calls: list[dict[str, Any]]
    tool_calls: list[dict[str, Any]]
    files: dict[str, str | None]  # files_json: path -> final text, None if deleted
    fixture: dict[str, str] = field(default_factory=dict)  # path -> fixture text, where readable
    siblings: list[str] = field(default_factory=list)  # attempt ids of this arm and task, in order
    task_toml: dict[str, Any] = field(default_factory=dict[str, Any])  # the task folder's task.toml, where readable

    @property
    def limits(self) -> dict[str, Any]:
        """[run.limits] from the run's config TOML (empty if it cannot be read)."""
        config = loads(self.run.get("config_json"), {})
        try:
            limits: dict[str, Any] = tomllib.loads(config.get("toml") or "").get("run", {}).get("limits", {})
            return limits
        except (tomllib.TOMLDecodeError, AttributeError):
            return {}


def _read_fixture(task_path: str | None, paths: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    if not task_path:
        return out
    root = Path(task_path) / "workspace"
    for rel in paths:
        try:
            out[rel] = (root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return out


def _read_task_toml(task_path: str | None) -> dict[str, Any]:
    if not task_path:
        return {}
    try:
        return tomllib.loads((Path(task_path) / "task.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def load_attempt(ledger: Ledger, attempt_id: str) -> AttemptView:
    attempt = reads.attempt_row(ledger, attempt_id)
    if attempt is None:
        raise BrowseError(f"attempt {attempt_id}: not in the ledger {ledger.path}")
    run_id, task_id = attempt["run_id"], attempt["task_id"]
    files = loads(attempt["files_json"], {})
    files = files if isinstance(files, dict) else {}
    siblings = reads.sibling_attempts(ledger, run_id, task_id, attempt["arm"])
    task_row = reads.task_row(ledger, run_id, task_id) or {"task_id": task_id}
    return AttemptView(
        attempt,
        task_row,
        reads.arm_row(ledger, run_id, attempt["arm"]) or {"name": attempt["arm"]},
        ledger.run(run_id) or {},
        ledger.grade(attempt_id),
        ledger.calls(attempt_id),
        ledger.tool_calls(attempt_id),
        files,
        _read_fixture(task_row.get("path"), list(files)),
        siblings,
        _read_task_toml(task_row.get("path")),
    )
