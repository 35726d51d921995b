"""The live view of a paired run: `make_app(config, ledger, engine)` over the run's controls.

It displays and sends commands, nothing else. One worker reads the engine's event stream,
folds the events into `RunState` (plain Python) and posts `RunChanged`, merged while one is
pending, at most ~20 a second; only message handlers touch widgets. The aggregate figures
(Wilson, bootstrap, projection) are recomputed once a second in a thread. The engine runs in
its own worker; its commands (pause, abort, stop an arm, raise a cap) are plain method calls.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Footer
from textual.worker import Worker, WorkerState

from agent import QuotabenchError
from agent.config import RunConfig
from tuiapp.live.controls import RunKeys
from tuiapp.live.figures import Figures, compute_figures, project
from tuiapp.live.grid import EventTail, TaskGrid
from tuiapp.live.messages import AutoPaused, FiguresReady, RunChanged, RunEnded
from tuiapp.live.modals import AttemptsModal, AutoPauseChoice, AutoPauseModal, FatalModal
from tuiapp.live.state import RunState
from tuiapp.live.widgets import ArmPanel, Fit, Legend, RunHeader, arm_label

FRAME_S = 1 / 20  # the event worker posts at most this often: >= 10 screen updates a second
FIGURES_S = 1.0  # aggregate figures are recomputed on this timer, never per event
LOG_TAIL = 100  # event-log lines handed to the tail widget (it shows those that fit)
RUN_CONTROLS = ("pause", "resume", "abort", "stop_arm", "stop_decided")
if TYPE_CHECKING:  # agent.ledger loads sqlite-utils and numpy: not on the first frame's path
    from agent.events import DecisionUpdated, RunControls
    from agent.ledger import Ledger
    from tuiapp.live.snapshot import Snapshot
Opener = Callable[[], "tuple[Ledger, RunControls]"]  # -> (the ledger, an engine: RunEngine or a stand-in)


class LiveApp(RunKeys):
    CSS_PATH = Path(__file__).with_name("live.tcss")  # absolute: subclasses elsewhere find it too
    TITLE = "quotabench live"
    ENABLE_COMMAND_PALETTE = False  # its footer entry would push the run's own keys off an 80-column screen
    # The screen's layout classes (live.tcss): 80x24 is -narrow -short; 120x40 and up -wide -tall.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    BINDINGS = [
        Binding("p", "pause", "pause", id="live-pause"),  # one of the two p keys is shown: the one that acts
        Binding("p", "resume", "resume", id="live-resume"),
        Binding("a", "abort", "abort", id="live-abort"),
        Binding("1", "stop_arm(0)", "stop arm 1", id="live-stop-arm-1"),
        Binding("2", "stop_arm(1)", "stop arm 2", id="live-stop-arm-2"),
        Binding("d", "stop_decided", "stop: decided", id="live-stop-decided"),
        Binding("enter", "open_task", "task attempts", show=False, id="live-attempts"),
        Binding("l", "toggle_log", "log", id="live-log"),
        Binding("question_mark", "toggle_legend", "legend", key_display="?", id="live-legend"),
        Binding("b", "browse", "browse run", id="live-browse"),
        Binding("q", "request_quit", "quit", id="live-quit"),
        # Ctrl-C as headless: once aborts (saying what it waits for), twice stops now; then the view closes
        Binding("ctrl+c", "interrupt", "abort", show=False, priority=True, id="live-ctrl-c"),
    ]

    def __init__(
        self,
        config: RunConfig,
        ledger: Ledger | None,
        engine: RunControls | None,
        *,
        clock: Callable[[], float] = time.time,
        opener: Opener | None = None,
    ):
        super().__init__()
        self.config, self.ledger, self.engine, self.clock = config, ledger, engine, clock
        self.opener = opener  # builds (ledger, engine) in a thread after the first frame, when engine is None
        self.startup_error: BaseException | None = None
        self.arm_names = [a.name for a in config.arms]
        self.state = RunState(
            self.arm_names, {a.name: a.cap_tokens for a in config.arms}, max_attempts=config.max_attempts
        )
        self.figures: Figures | None = None
        self.figures_seen = -1  # events folded when the shown figures were computed
        self.fatal: str | None = None
        self.quit_requested = False
        self._controls_key: tuple[bool | None, ...] = ()
        self._figures_worker: Worker[None] | None = None
        self._asking: dict[str, AutoPauseModal] = {}  # arm -> its open auto-pause window

    @classmethod
    def for_arms(cls, names: Sequence[str]) -> type[LiveApp]:
        """This app with the footer's stop keys named after the arms ("stop A", "stop B").
        Textual merges BINDINGS per class, so the names go into a subclass's BINDINGS (its
        public API) instead of into an instance's private binding map."""
        stops = [
            Binding(str(i + 1), f"stop_arm({i})", f"stop {name}", id=f"live-stop-arm-{i + 1}")
            for i, name in enumerate(names[:2])
        ]
        return type(cls.__name__, (cls,), {"BINDINGS": stops, "__module__": cls.__module__})

    @property
    def run_id(self) -> str:
        return self.state.run_id or getattr(self.engine, "run_id", "") or ""

    # -- layout ----------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        self.header = RunHeader("quotabench live · starting…", id="run-header")
        self.panels = {
            arm.name: ArmPanel(arm, self.config.auto_pause_share, id=f"arm-{i}")
            for i, arm in enumerate(self.config.arms)
        }
        self.gap = Fit(
            "paired gap: shown once tasks are decided on both arms", "paired gap: after paired tasks", id="gap"
        )
        self.grid = TaskGrid(
            self.arm_names, {a.name: f"{a.name} · {arm_label(a)}" for a in self.config.arms}, id="grid"
        )
        self.grid.border_title = "tasks (enter: attempts)"
        self.log_view = EventTail(id="log")
        self.log_view.border_title = "events"
        yield self.header
        with Horizontal(id="arms"):
            yield from self.panels.values()
        yield self.gap
        with Horizontal(id="lower"):
            yield self.grid
            yield self.log_view
        yield Legend(id="legend")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP):  # the default would end the process mid-write
            loop.add_signal_handler(signum, self.stop_on_signal)
        self.grid.focus()
        self._redraw()  # the configured caps and the task list are on the first frame
        self.call_after_refresh(self._start)  # the engine's start-up work comes after that frame

    def _start(self) -> None:
        self._run_engine()

    # -- workers ---------------------------------------------------------------------------------
    @work(exclusive=True, group="engine", description="the run engine", exit_on_error=False)
    async def _run_engine(self) -> str | None:
        if self.engine is None and self.opener is not None:
            try:  # the ledger and the engine (and their imports) come after the first frame
                self.ledger, self.engine = await anyio.to_thread.run_sync(self.opener)
            except Exception as exc:  # noqa: BLE001 — bad input found before anything was recorded:
                self.startup_error = exc  # the view closes and the terminal gets its one line
                self.exit(None)
                return None
            self.refresh_bindings()
        self._read_events()
        # the statistics (numpy, scipy: imported in the figures' thread) once the engine is built
        self.set_interval(FIGURES_S, self.refresh_figures, name="figures")
        self.refresh_figures()
        return await self.controls.run()

    @work(exclusive=True, group="events", description="read the engine's event stream", exit_on_error=False)
    async def _read_events(self) -> None:
        stream, ended = self.controls.events, False
        while not ended:
            try:
                batch = [await stream.receive()]
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                break
            while True:
                try:
                    batch.append(stream.receive_nowait())
                except anyio.WouldBlock:
                    break
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    ended = True
                    break
            started = self.state.started_at
            notices = [n for n in map(self.state.apply, batch) if n is not None]
            self.post_message(RunChanged())
            if started is None and self.state.started_at is not None:
                self.refresh_figures()  # elapsed, ETA and done for the task list that just arrived
            for notice in notices:
                if notice.kind == "auto_pause":
                    self.post_message(AutoPaused(notice.arm or "", notice.text, notice.tokens))
                elif notice.kind == "provider_quota":  # the engine paused: nothing to choose but to top up
                    self.notify(
                        f"arm {notice.arm}: {notice.text}. The run is paused: top up the account, then "
                        "press p to resume (the call is sent again), or a to abort.",
                        title="Provider quota spent",
                        severity="error",
                        timeout=60,
                    )
                elif notice.kind == "finished":
                    self.post_message(RunEnded(notice.text))
                elif notice.kind == "aborting":  # what the abort waits for, from the engine itself
                    self.notify(notice.text, title="Aborting", severity="warning", timeout=15)
                elif notice.kind == "decided":
                    self.notify(notice.text, title="Decided", timeout=20)
                    self.refresh_bindings()
                elif notice.kind in ("sandbox", "preflight_forced", "task_warning"):  # the header keeps the first two
                    title = {"sandbox": "Sandbox", "preflight_forced": "Preflight"}.get(notice.kind, "Task")
                    self.notify(notice.text, title=title, severity="warning", timeout=8 if title != "Task" else 30)
            await anyio.sleep(FRAME_S)

    def refresh_figures(self) -> None:
        """Recompute the aggregate figures in a thread (skipped while the last one still runs)."""
        if self._figures_worker is not None and self._figures_worker.is_running:
            return
        snap, seen = self.state.snapshot(self.clock()), self.state.events_seen
        self._figures_worker = self._compute_figures(snap, seen)

    @work(thread=True, group="figures", description="recompute the live figures", exit_on_error=False)
    def _compute_figures(self, snap: Snapshot, seen: int) -> None:
        self.post_message(FiguresReady(compute_figures(snap), seen))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state != WorkerState.ERROR:
            return
        error = worker.error
        text = str(error) if isinstance(error, QuotabenchError) else f"{type(error).__name__}: {error}"
        if worker.group == "engine":
            self.fatal = text
            self.state.note(f"the engine stopped with an error: {text}", self.clock(), prefix="")
            self._redraw()
            self.push_screen(FatalModal(text))
        else:
            self.notify(f"{worker.description} failed: {text}", title="live view", severity="error", timeout=8)

    # -- message handlers: the only code that touches widgets -------------------------------------
    def _shutting_down(self) -> bool:
        """Messages can still arrive while the app shuts down: no widgets to update then."""
        return not self.is_running or not self.screen_stack

    def on_run_changed(self, _: RunChanged) -> None:
        if not self._shutting_down():
            self._redraw()

    def _redraw(self) -> None:
        state = self.state
        dirty, cells = state.take_dirty()
        if "grid" in dirty:
            self.grid.sync_rows(state)
            self.query_one(Legend).controls = bool(state.controls)
        for arm, task_id in cells:
            self.grid.show_cell(state, arm, task_id)
        for name, panel in self.panels.items():
            if f"arm:{name}" in dirty:
                panel.show_quota(state.arms[name], state.arm_word(name))
                if name in self._asking:  # the window shows the meter's own numbers
                    meter = state.arms[name]
                    self._asking[name].show_quota(meter.used, meter.reserved, meter.cap)
            if f"activity:{name}" in dirty:
                panel.show_activity(state.arms[name], state.arm_word(name))
        if "header" in dirty:
            self.header.show_run(state, self.figures)
        if "gap" in dirty and self.figures is not None:  # the decision moved: no need to wait for the figures
            self.gap.show(*with_decision(self.figures.gap_wordings, state.decision))
        if "log" in dirty:
            self.log_view.show(list(state.log)[-LOG_TAIL:])
        controls = (
            self.check_action("pause", ()),
            self.check_action("resume", ()),
            self.check_action("abort", ()),
            *(self.check_action("stop_arm", (i,)) for i in range(min(2, len(self.arm_names)))),
            self.check_action("stop_decided", ()),
        )
        if controls != self._controls_key:  # the footer is rebuilt only when a control changes
            self._controls_key = controls
            self.refresh_bindings()

    def on_figures_ready(self, message: FiguresReady) -> None:
        if self._shutting_down():
            return
        self.figures, self.figures_seen = message.figures, message.seen
        for name, panel in self.panels.items():
            if name in message.figures.arms:
                panel.show_figures(message.figures.arms[name])
        self.gap.show(*with_decision(message.figures.gap_wordings, self.state.decision))
        self.header.show_run(self.state, self.figures)

    def on_auto_paused(self, message: AutoPaused) -> None:
        if self._shutting_down() or message.arm in self._asking:
            return
        arm = self.state.arms[message.arm]
        snap = self.state.snapshot(self.clock())
        arm_snap = next(a for a in snap.arms if a.name == message.arm)
        projection = project(arm_snap, len(snap.task_ids)).text
        modal = AutoPauseModal(
            message.arm,
            arm.used,
            arm.reserved,
            arm.cap,
            projection,
            next_call=message.next_call,
            pause_share=self.config.auto_pause_share,
        )
        self._asking[message.arm] = modal
        self.push_screen(modal, callback=partial(self._auto_pause_chosen, message.arm))

    def _auto_pause_chosen(self, arm: str, choice: AutoPauseChoice | None) -> None:
        self._asking.pop(arm, None)
        action = choice.action if choice else "continue"
        now = self.clock()
        if action == "abort":
            self.controls.abort()
            self.state.note(f"auto-pause of arm {arm}: abort", now)
        elif action == "stop":
            self.controls.stop_arm(arm)
            self.state.mark_stopping(arm)
            self.state.note(f"auto-pause of arm {arm}: stop the arm, the other goes on", now)
        elif action == "raise" and choice and choice.new_cap:
            try:
                self.controls.raise_cap(arm, choice.new_cap)
            except QuotabenchError as exc:
                self.notify(str(exc), title="cap not raised", severity="error")
            else:
                self.state.note(f"auto-pause of arm {arm}: cap raised to {choice.new_cap:,}", now)
        else:
            self.state.note(f"auto-pause of arm {arm}: continue", now)
        if action != "abort" and not self._asking:  # another arm's window still open: the run stays paused
            self.controls.resume()
        self._show_engine_state()

    def _show_engine_state(self) -> None:
        """A command changed the engine's state at once (pause, resume, abort): show it now, not
        when its event comes round the stream."""
        engine_state = getattr(self.engine, "state", None)
        if self.state.live and engine_state in ("running", "paused", "aborting"):
            self.state.engine_state = engine_state
            self.state.dirty.add("header")
        self._redraw()

    def on_run_ended(self, message: RunEnded) -> None:
        if self._shutting_down():
            return
        self.refresh_figures()
        if self.quit_requested:
            self.exit(self.run_id)
            return
        self.refresh_bindings()  # the header says "b browse · q quit + report"; no window over the grid
        if message.status == "crashed" and not self.fatal:
            self.notify(
                "the run crashed: q quits and says where the traceback is",
                title="run over",
                severity="error",
                timeout=10,
            )

    def on_task_grid_task_chosen(self, message: TaskGrid.TaskChosen) -> None:
        self._open_attempts(message.task_id)

    # -- actions ---------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Run controls: hidden once the run is over, greyed out while they cannot act."""
        if action == "browse":
            return not self.state.live and bool(self.run_id)
        if action not in RUN_CONTROLS:
            return True
        if not self.state.live or self.fatal:
            return False
        if self.engine is None:
            return None  # still starting
        if action == "stop_decided":  # shown once the test has decided and nothing stopped the arms yet
            decision = self.state.decision
            return bool(decision and decision.decided and not decision.stopped)
        if action == "stop_arm":
            index = parameters[0] if parameters else 0
            if not isinstance(index, int) or index >= len(self.arm_names):
                return False
            return True if self.state.arms[self.arm_names[index]].state in ("running", "waiting") else None
        if action == "resume":  # shown (as p) only while paused, in place of pause
            return self.state.engine_state == "paused"
        if action == "pause" and self.state.engine_state == "paused":
            return False
        return True if self.state.engine_state in ("running", "paused", "starting", "preflight") else None

    def action_browse(self) -> None:
        """The post-run browser's run screen, on top of the live view (b inside it goes back)."""
        from tuiapp.browse.app import browse_screen

        if self.ledger is not None:  # the key shows once the run is over, when the ledger is open
            self.push_screen(browse_screen(self.ledger, self.run_id))

    def action_toggle_log(self) -> None:
        """The event log: beside the grid on a wide screen, in its place on a narrow one."""
        shown = self.log_view.display
        self.screen.set_class(not shown, "-log-shown")
        self.screen.set_class(shown, "-log-hidden")

    def action_toggle_legend(self) -> None:
        shown = self.query_one(Legend).display
        self.screen.set_class(not shown, "-legend-shown")
        self.screen.set_class(shown, "-legend-hidden")

    def action_open_task(self) -> None:
        if self.grid.cursor_task is not None:
            self._open_attempts(self.grid.cursor_task)

    def _open_attempts(self, task_id: str) -> None:
        if not self.run_id or self.ledger is None:
            self.notify("the run has not started yet: no attempts to show", severity="warning")
            return
        self.push_screen(AttemptsModal(self.ledger.path, self.run_id, task_id))


def make_app(
    config: RunConfig,
    ledger: Ledger | None,
    engine: RunControls | None = None,
    *,
    clock: Callable[[], float] = time.time,
    opener: Opener | None = None,
) -> LiveApp:
    """The live view over a run's controls, for the CLI and tests: `engine` (the RunEngine the run
    command built, or a stand-in), or `opener`, which builds the ledger and the controls in a
    thread once the first frame is on screen. The view never builds an engine itself."""
    if (engine is None) == (opener is None):
        raise TypeError("make_app: pass one of the two: the run's controls (engine) or an opener that builds them")
    return LiveApp.for_arms([a.name for a in config.arms])(config, ledger, engine, clock=clock, opener=opener)


def with_decision(wordings: Sequence[str], decision: DecisionUpdated | None) -> tuple[str, ...]:
    """The paired-gap line's wordings (longest first) with the always-valid test's read after each."""
    if decision is None:
        return tuple(wordings)
    from agent.printer import decision_text

    compact = (
        f"decided: {decision.winner} better"
        if decision.decided
        else f"e = {decision.e_value:.1f}/{decision.threshold:g}"
    )
    return (f"{wordings[0]} · {decision_text(decision)}", *(f"{w} · {compact}" for w in wordings[1:]))
