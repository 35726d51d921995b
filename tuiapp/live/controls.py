"""The keys that command the run (pause, resume, abort, stop an arm, stop on a decision, quit,
Ctrl-C): a mixin of the live view's app. Each sends one command through the engine's
RunControls, notes it in the event log and shows the new state at once."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from textual.app import App

from tuiapp.live.modals import ConfirmModal

if TYPE_CHECKING:
    from agent.events import RunControls
    from tuiapp.live.state import RunState


class RunKeys(App[str | None]):
    """The run's controls; LiveApp supplies the engine, the state, the clock and the redraw."""

    engine: RunControls | None  # None while the view is still starting
    state: RunState
    arm_names: list[str]
    quit_requested: bool
    fatal: str | None
    clock: Callable[[], float]

    @property
    def run_id(self) -> str:
        raise NotImplementedError

    @property
    def controls(self) -> RunControls:
        """The engine, for a key that commands it: such keys are off until it is built."""
        if self.engine is None:
            raise RuntimeError("a run control was used before the engine was built")
        return self.engine

    def _redraw(self) -> None: ...
    def _show_engine_state(self) -> None: ...

    def action_stop_decided(self) -> None:
        self.controls.stop_decided()  # its DecisionUpdated (stopped) takes the key away

    def action_pause(self) -> None:
        self.controls.pause("paused by the user (p resumes)")
        self.state.note("pause", self.clock())
        self._show_engine_state()

    def action_resume(self) -> None:
        self.controls.resume()
        self.state.note("resume", self.clock())
        self._show_engine_state()

    def action_abort(self) -> None:
        self.push_screen(
            ConfirmModal(
                "Abort the run?\n\nIn-flight calls finish and are recorded; nothing new starts. "
                "Everything recorded so far stays in the ledger, the report and the browser.",
                yes="Abort",
            ),
            callback=self._abort_confirmed,
        )

    def _abort_confirmed(self, yes: bool | None) -> None:
        if yes and self.state.live:
            self.controls.abort()
            self.state.note("abort", self.clock())
            self._show_engine_state()

    def action_stop_arm(self, index: int) -> None:
        name = self.arm_names[index]
        self.push_screen(
            ConfirmModal(
                f"Stop arm {name}?\n\nIts attempt in flight ends before its next model call and "
                "its remaining tasks are not run: the arm is reported as censored (not "
                "comparable). The other arm goes on.",
                yes=f"Stop {name}",
            ),
            callback=partial(self._stop_confirmed, name),
        )

    def _stop_confirmed(self, name: str, yes: bool | None) -> None:
        if yes and self.state.live:
            self.controls.stop_arm(name)
            self.state.mark_stopping(name)
            self.state.note(f"stop arm {name}", self.clock())
            self._redraw()

    async def action_quit(self) -> None:  # ctrl+q, Textual's own quit key, asks like q does
        self.action_request_quit()

    def action_request_quit(self) -> None:
        if not self.state.live or self.fatal:
            self.exit(self.run_id)
        elif self.engine is None:
            self.exit(None)  # nothing started yet: nothing to abort
        elif self.quit_requested:
            self.engine.stop_now()
            self.notify("stopping now: calls in flight are cancelled and recorded as lost", severity="warning")
        else:
            self.push_screen(
                ConfirmModal(
                    "The run is still live. Quit?\n\nQuitting aborts the run: in-flight calls "
                    "finish and are recorded (press q again to stop them now). Everything "
                    "recorded stays in the ledger and the report.",
                    yes="Abort and quit",
                ),
                callback=self._quit_confirmed,
            )

    def action_interrupt(self) -> None:
        """Ctrl-C: abort and close the view once the run has stopped; again: stop now."""
        if not self.state.live or self.fatal or self.engine is None:
            self.action_request_quit()
        elif self.quit_requested or self.state.engine_state == "aborting":
            self.quit_requested = True
            self.engine.stop_now()
            self.state.note("Ctrl-C again: stopping now", self.clock())
            self.notify(
                "stopping now: calls in flight are recorded as lost, no grade is waited for", severity="warning"
            )
        else:
            self.quit_requested = True
            self.controls.abort()
            self.state.note("Ctrl-C: aborting, the view closes when the run has stopped", self.clock())
        self._show_engine_state()

    def stop_on_signal(self) -> None:
        """SIGTERM, or SIGHUP when the terminal closed: stop now, as headless does (calls in flight
        recorded as lost); the view closes when the run has stopped, and the ledger is closed whole."""
        self.quit_requested = True
        if not self.state.live or self.fatal or self.engine is None:
            self.exit(self.run_id or None)
        else:
            self.engine.stop_now()

    def _quit_confirmed(self, yes: bool | None) -> None:
        if not yes:
            return
        if not self.state.live:
            self.exit(self.run_id)
            return
        self.quit_requested = True
        self.controls.abort()  # its event says what it waits for (a notification)
        self.state.note("quit: aborting, the view closes when the run has stopped (q again stops now)", self.clock())
        self._redraw()
