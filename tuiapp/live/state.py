"""The live view's model: the engine's events folded into plain per-arm state.

Pure Python, no Textual: the event worker calls `RunState.apply(event)` for every event and
the message handlers read the state to update widgets. `apply` records what changed in
`dirty` / `dirty_cells` so a handler redraws only those parts, and returns a `Notice` for the
few events the app must react to (auto-pause, run finished). Aggregate figures (Wilson,
bootstrap, projections) are not computed here: `snapshot()` copies what they need so
`figures.compute_figures` can run in a thread on a timer.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agent import events as ev
from agent.printer import abort_line, format_event
from tuiapp.live.provider_side import ProviderSide
from tuiapp.live.snapshot import ArmSnapshot, CellSnapshot, Snapshot
from tuiapp.looks import CONTROL_LOOKS, CONTROL_STATUS

if TYPE_CHECKING:  # agent.metrics loads numpy: imported where the figures thread needs it, not at startup
    from agent.metrics.outcome import TaskOutcome

BUCKET_S = 10  # burn-rate buckets: tokens charged per 10 seconds of event time
TEXT_TAIL = 600  # characters of streamed model text kept per arm
LOG_LINES = 2000

# A running arm's panel says what the whole run is doing while it pauses, checks or aborts.
ENGINE_OVER_ARM = {"paused": "paused", "preflight": "preflight…", "aborting": "aborting"}


@dataclass
class TaskCell:
    """One task on one arm: its status and the attempts made so far. Whether it is decided is
    agent.metrics.outcome's call (`RunState.outcome`), the same one the report makes."""

    status: str = "pending"
    attempt: int = 0
    tokens: int = 0  # every call of every attempt, the one in progress included
    attempts: list[tuple[int, str, int]] = field(default_factory=list)  # (attempt, failure class, tokens)
    # A strategy arm's task: its stages' hidden grades, and the submission once made
    # (the submitted stage's class, or "no_submission"); the cell shows `2/3 ✓ → ✓`.
    staged: bool = False
    pool: list[bool] = field(default_factory=list)
    submitted: str | None = None
    submitted_attempt: int | None = None  # the submitted stage's attempt number
    grammar_gap: bool = False  # the latest grade's parse errors were the grammar's, not the model's

    @property
    def accepted_on(self) -> int | None:
        return next((n for n, cls, _ in self.attempts if cls == "accepted"), None)


@dataclass
class Activity:
    """What an arm is doing right now."""

    task_id: str | None = None
    attempt: int = 0
    turn: int = 0
    phase: str = "idle"  # idle | model | grading
    last_tool: str = ""
    text: str = ""  # the tail of the model's streamed text


@dataclass
class ArmState:
    name: str
    cap: int
    used: int = 0
    reserved: int = 0
    state: str = "waiting"  # waiting | running | stopping | finished | censored | stopped | aborted
    cells: dict[str, TaskCell] = field(default_factory=dict)
    activity: Activity = field(default_factory=Activity)
    buckets: dict[int, int] = field(default_factory=dict)  # bucket index -> tokens charged in it
    wasted: int = 0  # tokens of attempts that ended without an accepted patch
    provider: ProviderSide = field(default_factory=ProviderSide)  # the second meter

    @property
    def share(self) -> float:
        return (self.used + self.reserved) / self.cap if self.cap else 1.0


@dataclass(frozen=True)
class Notice:
    """An event the app reacts to beyond redrawing: "auto_pause" (arm, the next call's tokens),
    "provider_quota" (arm, text: the provider's reason), "finished" (text: the status),
    "aborting" (text: what the abort waits for) or "sandbox" (text)."""

    kind: str
    arm: str | None = None
    text: str = ""
    tokens: int = 0


class RunState:
    def __init__(
        self, arms: Sequence[str], caps: dict[str, int], *, max_attempts: int = 2, task_ids: Sequence[str] = ()
    ):
        self.max_attempts = max_attempts
        self.run_id = ""
        self.manifest = ""
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self.last_at: float | None = None
        self.engine_state = (
            "starting"  # starting | preflight | running | paused | aborting | finished | aborted | crashed
        )
        self.paused_since: float | None = None  # when the current pause began (engine time)
        self.paused_total = 0.0  # seconds paused before it
        self.status: str | None = None  # the run's final status once RunFinished arrived
        self.sandbox_warning: str | None = None  # set when grades run without bubblewrap
        self.forced_warning: str | None = None  # set when the run goes on past an invalidating preflight
        self.decision: ev.DecisionUpdated | None = None  # the always-valid paired test
        self.task_ids: list[str] = []
        self.controls: set[str] = set()  # impossible controls (RunStarted): in the grid, not in the figures
        self.arms: dict[str, ArmState] = {name: ArmState(name, caps.get(name, 0)) for name in arms}
        self.log: deque[str] = deque(maxlen=LOG_LINES)
        self.log_total = 0
        self.events_seen = 0
        self.dirty: set[str] = set()
        self.dirty_cells: set[tuple[str, str]] = set()
        self._set_tasks(task_ids)
        self.dirty.update(
            {"header", *(f"arm:{name}" for name in self.arms)}
        )  # the configured caps, from the first frame

    # -- folding -------------------------------------------------------------------------------
    def apply(self, event: ev.Event) -> Notice | None:
        self.events_seen += 1
        self.last_at = event.at
        arm = self.arms.get(getattr(event, "arm", None) or "")
        line = log_line(event)
        if line is not None and not isinstance(event, ev.RunStarted):
            self._log(event.at, line)
        if arm and arm.provider.apply(event):
            self.dirty.add(f"arm:{arm.name}")
        match event:
            case ev.RunStarted():
                return self._run_started(event)
            case ev.QuotaChanged() if arm:
                self._quota(arm, event)
            case ev.ModelText() if arm:
                arm.activity.text = (arm.activity.text + event.text)[-TEXT_TAIL:]
                arm.activity.phase = "model"
                self.dirty.add(f"activity:{arm.name}")
            case ev.AttemptStarted() if arm:
                self._attempt_started(arm, event)
            case ev.CallFinished() if arm:
                self._call_finished(arm, event)
            case ev.ToolCalled() if arm:
                arm.activity.last_tool = event.summary if event.ok else f"{event.summary} (failed)"
                self.dirty.add(f"activity:{arm.name}")
            case ev.AttemptFinished() if arm:
                arm.activity.phase = "grading"
                self._cell(arm, event.task_id).status = "grading"
                self._touch(arm, event.task_id)
            case ev.TaskGraded() if arm:
                self._graded(arm, event)
            case ev.Submitted() if arm:
                self._submitted(arm, event)
            case ev.ArmStateChanged() if arm:
                self._arm_state(arm, event)
            case ev.LogMessage() if event.kind in ("preflight_forced", "task_warning"):  # notified
                self.forced_warning = (
                    "FORCED past preflight" if event.kind == "preflight_forced" else self.forced_warning
                )
                self.dirty.add("header")
                return Notice(event.kind, text=event.text)
            case ev.EngineStateChanged():
                return self._engine_state(event)
            case ev.DecisionUpdated():
                return self._decision(event)
            case ev.AutoPaused() if arm and event.policy is None:  # the engine waits for the user's choice
                return Notice("auto_pause", event.arm, f"auto-pause: arm {event.arm} near its cap", event.next_call)
            case ev.ProviderQuotaSpent() if arm and event.policy is None:  # paused until topped up and resumed
                return Notice("provider_quota", event.arm, event.reason)
            case ev.RunFinished():
                self.status = self.engine_state = event.status
                self.finished_at = event.at
                for a in self.arms.values():
                    a.activity = Activity(last_tool=a.activity.last_tool)
                    self.dirty.add(f"activity:{a.name}")
                self.dirty.add("header")
                return Notice("finished", text=event.status)
        return None

    def _engine_state(self, event: ev.EngineStateChanged) -> Notice | None:
        self.engine_state = event.state
        if event.state == "paused" and self.paused_since is None:
            self.paused_since = event.at
        elif event.state != "paused" and self.paused_since is not None:
            self.paused_total += max(0.0, event.at - self.paused_since)
            self.paused_since = None
        self.dirty.update({"header", *(f"arm:{a}" for a in self.arms), *(f"activity:{a}" for a in self.arms)})
        if event.state == "aborting":
            return Notice("aborting", text=abort_line(event.waiting_for))
        return None

    def arm_word(self, name: str) -> str:
        """The arm's state as its panel says it: a running arm reads as the engine's pause,
        preflight or abort while one is on."""
        state = self.arms[name].state
        if state in ("running", "waiting") and self.engine_state in ENGINE_OVER_ARM:
            return ENGINE_OVER_ARM[self.engine_state]
        return state

    def paused_s(self, now: float) -> float:
        """Seconds the run has been paused so far, the current pause included up to `now`."""
        return self.paused_total + (max(0.0, now - self.paused_since) if self.paused_since is not None else 0.0)

    def _decision(self, event: ev.DecisionUpdated) -> Notice | None:
        newly = event.decided and not (self.decision and self.decision.decided)
        self.decision = event
        self.dirty.add("gap")
        if newly:
            from agent.printer import decision_text

            return Notice(
                "decided", text=decision_text(event) + ("" if event.stopping else " — press d to stop both arms")
            )
        return None

    def _set_tasks(self, task_ids: Sequence[str]) -> None:
        self.task_ids = list(task_ids)
        for arm in self.arms.values():
            for task_id in self.task_ids:
                arm.cells.setdefault(task_id, TaskCell())
        self.dirty.add("grid")

    def _run_started(self, event: ev.RunStarted) -> Notice | None:
        self.run_id, self.manifest, self.started_at = event.run_id, event.manifest_sha256, event.at
        self.controls = set(event.controls)
        if self.engine_state == "starting":
            self.engine_state = "running"
        for name in event.arms:
            arm = self.arms.setdefault(name, ArmState(name, 0))
            arm.cap = event.caps.get(name, arm.cap)
            if arm.state == "waiting":
                arm.state = "running"
            self.dirty.add(f"arm:{name}")
        self._set_tasks(event.task_ids)
        caps = ", ".join(f"{k} {v:,}" for k, v in event.caps.items())
        self._log(event.at, f"run {event.run_id} started: {len(event.task_ids)} tasks, caps {caps}")
        sandbox = event.isolation.get("sandbox")
        if sandbox and sandbox != "bwrap":
            self.sandbox_warning = f"no full sandbox ({sandbox})"
            self._log(event.at, f"WARNING: grading without the full sandbox: {event.isolation.get('missing')}")
            return Notice("sandbox", text=f"Grading without the full sandbox: {event.isolation.get('missing')}")
        self.dirty.add("header")
        return None

    def _quota(self, arm: ArmState, event: ev.QuotaChanged) -> None:
        delta = event.used - arm.used
        if delta > 0:
            bucket = int(event.at // BUCKET_S)
            arm.buckets[bucket] = arm.buckets.get(bucket, 0) + delta
        arm.used, arm.reserved, arm.cap = event.used, event.reserved, event.cap
        self.dirty.add(f"arm:{arm.name}")

    def _attempt_started(self, arm: ArmState, event: ev.AttemptStarted) -> None:
        cell = self._cell(arm, event.task_id)
        cell.status, cell.attempt = "running", event.attempt
        cell.staged = cell.staged or event.stage != "attempt"
        arm.activity = Activity(task_id=event.task_id, attempt=event.attempt, turn=1, phase="model")
        self._touch(arm, event.task_id)

    def _call_finished(self, arm: ArmState, event: ev.CallFinished) -> None:
        self._cell(arm, event.task_id).tokens += event.prompt_tokens + event.completion_tokens
        act = arm.activity
        if act.task_id == event.task_id and event.retry_index == 0 and event.status == "ok":
            act.turn += 1  # the call of this turn is done: the next one is the next turn
        if act.text and not act.text.endswith("\n"):
            act.text += "\n"
        self._touch(arm, event.task_id)

    def _graded(self, arm: ArmState, event: ev.TaskGraded) -> None:
        cell = self._cell(arm, event.task_id)
        cls = event.failure_class or ("accepted" if event.accepted else "reasoning")
        cell.attempts.append((event.attempt, cls, event.tokens))
        cell.attempt = event.attempt
        cell.status = self._control_status(event.task_id, cls)
        cell.grammar_gap = event.grammar_gaps > 0
        if cell.staged:  # a stage of a strategy: the task is decided by its submission, not this grade
            cell.pool.append(event.accepted)
            cell.status = "running"
        if not event.accepted:
            arm.wasted += event.tokens
        if arm.activity.task_id == event.task_id:
            arm.activity.phase = "idle"
        self._touch(arm, event.task_id)

    def _submitted(self, arm: ArmState, event: ev.Submitted) -> None:
        cell = self._cell(arm, event.task_id)
        cls = (
            next((c for n, c, _ in cell.attempts if n == event.attempt), "reasoning")
            if event.attempt
            else "no_submission"
        )
        cell.submitted = "accepted" if event.accepted else cls
        cell.status = self._control_status(event.task_id, cell.submitted)
        cell.submitted_attempt = event.attempt
        self._touch(arm, event.task_id)

    def _arm_state(self, arm: ArmState, event: ev.ArmStateChanged) -> None:
        arm.state = event.state
        fill = "censored" if event.state == "censored" else "aborted"
        for task_id in event.unfinished:
            cell = self._cell(arm, task_id)
            if cell.status not in ("accepted", *CONTROL_LOOKS):
                cell.status = fill
                self.dirty_cells.add((arm.name, task_id))
        arm.activity = Activity(last_tool=arm.activity.last_tool)
        self.dirty.update({f"arm:{arm.name}", f"activity:{arm.name}", "header"})

    def _control_status(self, task_id: str, cls: str) -> str:
        """An impossible control's pass reads as the grader gamed, its failure as held."""
        return CONTROL_STATUS.get(cls, cls) if task_id in self.controls else cls

    def _cell(self, arm: ArmState, task_id: str) -> TaskCell:
        cell = arm.cells.get(task_id)
        if cell is None:
            cell = arm.cells[task_id] = TaskCell()
            if task_id not in self.task_ids:
                self.task_ids.append(task_id)
                self.dirty.add("grid")
        return cell

    def _touch(self, arm: ArmState, task_id: str) -> None:
        self.dirty_cells.add((arm.name, task_id))
        self.dirty.update({f"activity:{arm.name}", f"arm:{arm.name}"})

    def _log(self, at: float, text: str) -> None:
        offset = "" if self.started_at is None else _clock(at - self.started_at) + " "
        self.log.append(offset + text)
        self.log_total += 1
        self.dirty.add("log")

    # -- what the app does (recorded so the screen shows it before the engine confirms) ----------
    def note(self, text: str, at: float, prefix: str = "you: ") -> None:
        """A line in the event log from the app itself (a command sent, a choice made) at `at`,
        the time it was made (not the last engine event's)."""
        self._log(at, prefix + text)

    def mark_stopping(self, name: str) -> None:
        arm = self.arms.get(name)
        if arm and arm.state == "running":
            arm.state = "stopping"
            self.dirty.add(f"arm:{name}")

    @property
    def live(self) -> bool:
        return self.status is None

    # -- reading ---------------------------------------------------------------------------------
    def take_dirty(self) -> tuple[set[str], set[tuple[str, str]]]:
        dirty, cells = self.dirty, self.dirty_cells
        self.dirty, self.dirty_cells = set(), set()
        return dirty, cells

    def outcome(self, arm: str, task_id: str) -> TaskOutcome:
        """What the report would say of this task on this arm, given what happened so far."""
        snap = self._arm_snapshot(self.arms[arm])
        return next(o for o in snap.outcomes() if o.task_id == task_id)

    def _arm_snapshot(self, a: ArmState) -> ArmSnapshot:
        cells = tuple(
            CellSnapshot(
                t, c.status, c.attempt, c.tokens, tuple(c.attempts), c.submitted, c.staged, c.submitted_attempt
            )
            for t in self.task_ids
            if (c := a.cells.get(t)) is not None and t not in self.controls
        )
        return ArmSnapshot(
            a.name, a.cap, a.used, a.reserved, a.state, tuple(a.buckets.items()), a.wasted, cells, self.max_attempts
        )

    def snapshot(self, now: float) -> Snapshot:
        arms = tuple(self._arm_snapshot(a) for a in self.arms.values())
        ordinary = tuple(t for t in self.task_ids if t not in self.controls)  # controls: never in a figure
        return Snapshot(
            ordinary, arms, self.started_at, self.finished_at, now, self.max_attempts, self.status, self.paused_s(now)
        )


def log_line(event: ev.Event) -> str | None:
    """The event log's line: the line printer's, shorter for the frequent attempt events."""
    match event:
        case ev.AttemptStarted():
            return f"[{event.arm}] {event.task_id} #{event.attempt} started"
        case ev.AttemptFinished():
            return f"[{event.arm}] {event.task_id} #{event.attempt} ended: {event.end_reason}, {event.tokens:,} tok"
        case ev.TaskGraded():
            return f"[{event.arm}] {event.task_id} #{event.attempt} → {'ACCEPTED' if event.accepted else event.failure_class}"
        case ev.Submitted():
            what = f"#{event.attempt}" if event.attempt else "nothing"
            return (
                f"[{event.arm}] {event.task_id} submitted {what} ({event.route}; {event.covered}/{event.candidates} "
                f"candidates pass) → {'ACCEPTED' if event.accepted else 'not accepted'}"
            )
    return format_event(event)


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def clock(seconds: float | None) -> str:
    """ "mm:ss" (or "h:mm:ss"); "—" when unknown."""
    return "—" if seconds is None else _clock(seconds)
