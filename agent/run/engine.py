"""The run engine: paired arms over one frozen task list, in the same order and window.

Both arms walk the same task order concurrently (paired arms in the same time window); each
task gets up to max_attempts attempts per arm, stopping at the first accepted one. Commands
(pause, resume, abort, stop an arm, raise a cap) come from the headless printer or the TUI;
events go out on an anyio memory stream. The engine never imports the TUI.

Every way a run ends — finished, aborted, stopped now (cancelled), crashed — writes each arm's
final row (state, unfinished tasks including the one in flight, tokens_used, busy_ms) and the
run's status under a shielded finally.
"""

from __future__ import annotations

import contextlib
import math
import time
from typing import Any

import anyio

from agent import events as ev
from agent.classify import counts_toward_budget
from agent.config import PROMPT_TEMPLATE_VERSION, RunConfig
from agent.endpoints.endpoint import Completion
from agent.endpoints.provider import RateLimits
from agent.ledger.counts import LedgerCounts
from agent.ledger.rows import (
    arm_finished,
    arm_update,
    run_ended,
)
from agent.ledger.store import Ledger, LedgerError, new_id, to_json, utc_now
from agent.ledger.writer import AsyncLedger
from agent.manifest import load_average, machine_constants, manifest_sha256
from agent.preflight import preflight_for_run
from agent.run.arm_rows import register_arm
from agent.run.arms import ArmRuntime, open_arm
from agent.run.attempt import AttemptRunner
from agent.run.decision import DecisionWatch
from agent.run.inflight import InFlight
from agent.run.killpoints import kill_point
from agent.run.prepare import (
    RuntimeVersions,
    check_before_run,
    isolation_event,
    load_task_list,
    new_run_ops,
    sandbox_constants,
)
from agent.run.quota import CensoredBy
from agent.run.quota_stops import QuotaStops
from agent.run.replicate import Replicate
from agent.run.resume_plan import ResumePlan
from agent.run.runtime_gate import RuntimeGate
from agent.run.strategies import run_strategy_task
from agent.states import ArmState, EndReason, EngineState, RunStatus
from verifiers.executors import close_executor, make_executor
from verifiers.grading import Grader, SandboxGrader
from verifiers.scratch import clean_stale
from verifiers.tasks import Task

# An arm in one of these states starts nothing new: its attempt in flight ends at the next checkpoint.
STOPPING = (ArmState.STOPPED, ArmState.ABORTED, ArmState.DECIDED)


class RunEngine:
    def __init__(
        self,
        config: RunConfig,
        ledger: Ledger,
        *,
        grader: Grader | None = None,
        auto_pause: bool = False,
        config_text: str | None = None,
        replicate: Replicate | None = None,
    ):
        self.config, self.ledger_sync = config, ledger
        self.ledger = AsyncLedger(ledger)
        self._owns_grader = grader is None
        self.grader: Grader = grader or SandboxGrader(
            make_executor(config.executor, ray_address=config.ray_address, require_sandbox=config.require_sandbox),
            counts=LedgerCounts(ledger),
        )
        self.auto_pause = auto_pause
        self.config_text = config_text if config_text is not None else config.path.read_text()
        self.run_id = ""
        self.arms: dict[str, ArmRuntime] = {}
        self.tasks: list[Task] = []
        self._send, self.events = anyio.create_memory_object_stream[ev.Event](math.inf)
        self.state = EngineState.RUNNING
        self._resume = anyio.Event()
        self._resume.set()
        self.quota_stops = QuotaStops(self)
        self._stop_now: anyio.CancelScope | None = None
        self.resume_state: ResumePlan | None = None  # set by agent.run.resume for a resumed run
        self._finished_arms: set[str] = set()  # arms whose final row is written
        self.decision_watch: DecisionWatch | None = None
        self.replicate = replicate
        self.refusal: str | None = None  # the preflight's one line when it refused the run
        self.work = InFlight()  # calls, visible tests and grades in progress: what an abort waits for
        self.runtime_gate = RuntimeGate()  # tasks this machine lacks a runtime for

    # -- events -----------------------------------------------------------------------------
    def emit(self, event: ev.Event) -> None:
        try:
            self._send.send_nowait(event)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    def log(self, text: str, level: str = "info", arm: str | None = None, kind: str = "") -> None:
        self.emit(ev.LogMessage(self.run_id, level=level, text=text, arm=arm, kind=kind))

    def quota_changed(self, arm: ArmRuntime) -> None:
        q = arm.quota
        self.emit(ev.QuotaChanged(self.run_id, arm=arm.name, used=q.used, reserved=q.reserved, cap=q.cap))
        if self.quota_stops.due(arm, 0):  # usage above its reservation can still cross the share
            self.quota_stops.choice_point(arm, 0)

    async def before_reserve(self, arm: ArmRuntime, tokens: int) -> float:
        return await self.quota_stops.before_reserve(arm, tokens)

    def mask(self, text: str) -> str:
        """`text` with every arm's api key masked (for tracebacks and messages that reach the ledger)."""
        for arm in self.arms.values():
            text = arm.client.mask(text) or ""
        return text

    async def observe_server(self, arm: ArmRuntime, completion: Completion) -> None:
        if arm.model_reported is None and completion.model_reported:
            arm.model_reported = completion.model_reported
            arm.system_fingerprint = completion.system_fingerprint
            await self.ledger.write(
                arm_update(arm.arm_id, model_reported=arm.model_reported, system_fingerprint=arm.system_fingerprint)
            )

    # -- commands ---------------------------------------------------------------------------
    def pause(self, reason: str = "paused") -> None:
        if self.state == EngineState.RUNNING:
            self.state = EngineState.PAUSED
            self._resume = anyio.Event()
            self.emit(ev.EngineStateChanged(self.run_id, state=EngineState.PAUSED))
            self.log(reason)

    def resume(self) -> None:
        if self.state == EngineState.PAUSED:
            self.state = EngineState.RUNNING
            self._resume.set()
            self.emit(ev.EngineStateChanged(self.run_id, state=EngineState.RUNNING))

    def abort(self) -> None:
        """Graceful: in-flight calls, visible tests and grades finish and are recorded, nothing new
        starts; the event says what it waits for."""
        if self.state in (EngineState.RUNNING, EngineState.PAUSED):
            self.state = EngineState.ABORTING
            self._resume.set()
            self.emit(
                ev.EngineStateChanged(self.run_id, state=EngineState.ABORTING, waiting_for=self.work.waiting_for())
            )

    def stop_now(self) -> None:
        """Cancel in-flight calls too; they are recorded as lost, charged at their reservation."""
        self.abort()
        if self._stop_now is not None:
            self._stop_now.cancel()

    def stop_arm(self, name: str, why: str = "by the user") -> None:
        arm = self.arms.get(name)
        if arm and arm.state == ArmState.RUNNING:
            arm.state = ArmState.STOPPED
            self.log(f"arm {name} stopped {why}", arm=name)

    def stop_decided(self) -> None:
        """Stop both arms cleanly on the paired test's decision, as its watch holds it (nothing
        when it has not decided or the arms were stopped on it already); what they did not run
        is listed, not censored, and left out of pairing."""
        taken = self.decision_watch.take_stop() if self.decision_watch is not None else None
        if taken is None:
            return
        decision, saved = taken
        for arm in self.arms.values():
            if arm.state == ArmState.RUNNING:
                arm.state = ArmState.DECIDED
        spared = " and ".join(f"~{n:,} tokens of {arm}" for arm, n in saved.items())
        self.log(f"{decision.line}: stopping both arms" + (f", saving {spared}" if spared else ""))

    def raise_cap(self, name: str, new_cap: int) -> None:
        arm = self.arms[name]
        before = arm.quota.cap
        arm.quota.raise_cap(new_cap)
        self.quota_stops.auto_paused.discard(name)  # the next call is checked against the new cap (before_reserve)
        arm.cap_raises.append({"from": before, "to": new_cap, "utc": utc_now(), "used": arm.quota.used})
        self.ledger_sync.batch([arm_update(arm.arm_id, cap_tokens=new_cap, cap_raises_json=to_json(arm.cap_raises))])
        q = arm.quota
        self.emit(ev.QuotaChanged(self.run_id, arm=arm.name, used=q.used, reserved=q.reserved, cap=q.cap))

    async def checkpoint(self, arm: ArmRuntime) -> float:
        """Called before every model call and visible-test run: waits while paused, ends the
        attempt when stopping. Returns the seconds it waited (not the attempt's time: its limit
        moves by as much)."""
        from agent.run.loop import AttemptEnded

        started = time.monotonic()
        while True:
            if self.state == EngineState.ABORTING or arm.state in STOPPING:
                raise AttemptEnded(EndReason.ABORTED)
            if arm.state == ArmState.CENSORED:
                raise AttemptEnded(EndReason.CENSORED)
            if self.state != EngineState.PAUSED:
                return time.monotonic() - started
            await self._resume.wait()

    async def wait_to_start(self, arm: ArmRuntime) -> bool:
        """Before an attempt starts: waits while paused; False once the run is aborting or the arm
        no longer runs, so no attempt starts after a pause or an abort was asked for."""
        while self.state == EngineState.PAUSED and arm.state == ArmState.RUNNING:
            await self._resume.wait()
        return self.state != EngineState.ABORTING and arm.state == ArmState.RUNNING

    async def censor(self, arm: ArmRuntime, reason: str, by: CensoredBy = CensoredBy.CAP) -> None:
        await self.quota_stops.censor(arm, reason, by)

    def provider_limits(self, arm: ArmRuntime, limits: RateLimits) -> None:
        """A response announced the provider's rate limits: the live view's second meter."""
        self.emit(
            ev.ProviderLimits(
                self.run_id,
                arm=arm.name,
                limit_tokens=limits.limit_tokens,
                remaining_tokens=limits.remaining_tokens,
                reset_tokens_s=limits.reset_tokens_s,
                limit_requests=limits.limit_requests,
                remaining_requests=limits.remaining_requests,
                reset_requests_s=limits.reset_requests_s,
                paced_ms=arm.paced_ms,
            )
        )

    async def provider_quota(self, arm: ArmRuntime, reason: str) -> None:
        await self.quota_stops.provider_quota(arm, reason)

    async def wait_while_paused(self) -> None:
        while self.state == EngineState.PAUSED:
            await self._resume.wait()

    # -- the run ----------------------------------------------------------------------------
    async def run(self) -> str:
        """Start a new run and drive it to the end; returns the run id."""
        check_before_run(self.config)
        versions = RuntimeVersions()
        try:
            await anyio.to_thread.run_sync(clean_stale)  # scratch folders of killed runs
            self.tasks, broken = load_task_list(
                self.config, log=lambda text: self.log(text, "warning", kind="task_warning")
            )
            self.run_id = self.run_id or new_id()
            manifest = manifest_sha256(self.tasks, self.config, PROMPT_TEMPLATE_VERSION)
            constants = await anyio.to_thread.run_sync(machine_constants)
            constants |= sandbox_constants(self.grader, self.log)
            await self.ledger.batch(
                new_run_ops(
                    self.config,
                    self.config_text,
                    self.run_id,
                    self.tasks,
                    broken,
                    manifest,
                    constants | (self.replicate.columns() if self.replicate else {}),
                )
            )
            versions.record(self.ledger, self.run_id)
            kill_point("run_row")
            run_id = await self.drive(manifest, constants, fresh=True)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await versions.settle(quiet=True)  # the error that ended the run is the one to report
            raise
        await versions.settle()
        return run_id

    async def drive(self, manifest: str, constants: dict[str, Any], fresh: bool) -> str:
        """Open the arms and run them to the end; `fresh` is False when resuming (agent/run/resume.py)."""
        status = RunStatus.CRASHED
        try:
            async with contextlib.AsyncExitStack() as stack:
                for arm_cfg in self.config.arms:
                    cap = arm_cfg.cap_tokens
                    if self.resume_state:
                        cap = self.resume_state.caps.get(arm_cfg.name, cap)
                    number = self.replicate.number if self.replicate else 1
                    arm = await stack.enter_async_context(open_arm(arm_cfg, list(self.config.suites), cap, number))
                    self.arms[arm.name] = arm
                    await register_arm(self, arm)
                kill_point("arms_open")
                if len(self.arms) == 2:  # the always-valid paired test, watched live
                    self.decision_watch = DecisionWatch(  # impossible controls are not part of the comparison
                        self,
                        [t.id for t in self.tasks if t.control is None],
                        self.config.decision_alpha,
                        self.config.stop_when_decided,
                    )
                self.emit(
                    ev.RunStarted(
                        self.run_id,
                        manifest_sha256=manifest,
                        arms=tuple(self.arms),
                        task_ids=tuple(t.id for t in self.tasks),
                        caps={a.name: a.quota.cap for a in self.arms.values()},
                        isolation=isolation_event(constants),
                        controls=tuple(t.id for t in self.tasks if t.control is not None),
                    )
                )
                go = False
                with anyio.CancelScope() as self._stop_now:  # a stop-now cancels the preflight too
                    go = await self._preflight()
                    if go:
                        async with anyio.create_task_group() as tg:
                            for arm in self.arms.values():
                                tg.start_soon(self._run_arm, arm)
                stopped = self.state == EngineState.ABORTING or self._stop_now.cancel_called
                if not go and not stopped:
                    status = RunStatus.REFUSED
                    return self.run_id
                status = RunStatus.ABORTED if stopped else RunStatus.FINISHED
        except BaseException as exc:
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                status = RunStatus.ABORTED
            raise
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    for arm in self.arms.values():  # arms that never got to run (a crash while opening them)
                        if arm.arm_id and arm.name not in self._finished_arms:
                            await self._finish_arm(arm, [t.id for t in self.tasks], failed=True)
                    await self.ledger.write(run_ended(self.run_id, status, load_average()))
                except LedgerError:
                    if status != RunStatus.CRASHED:
                        raise  # else the error that crashed the run is the one to report
                finally:
                    self.emit(ev.RunFinished(self.run_id, status=status))
                    self._send.close()
                    if self._owns_grader:  # a local Ray started for this run stops with it
                        await anyio.to_thread.run_sync(close_executor, getattr(self.grader, "sandbox", None))
        return self.run_id

    async def _preflight(self) -> bool:
        """Probe every arm's endpoint against its config (run.preflight); False: refused. The
        views show a `preflight` state meanwhile."""
        if self.config.preflight == "off":
            return await self._probe()
        self.emit(ev.EngineStateChanged(self.run_id, state=EngineState.PREFLIGHT))
        limit = max(a.config.request_timeout_s for a in self.arms.values())  # it stops after the probe in flight
        try:
            with self.work.doing("the preflight's probe of each arm", limit):
                return await self._probe()
        finally:
            self.emit(ev.EngineStateChanged(self.run_id, state=self.state))

    async def _probe(self) -> bool:
        self.refusal = await preflight_for_run(
            self.config.preflight,
            list(self.arms.values()),
            self.tasks,
            self.ledger,
            self.run_id,
            log=self.log,
            stop=lambda: self.state == EngineState.ABORTING,
            budget=self.config.preflight_budget_tokens,
        )
        if self.refusal is None:
            return True
        for arm in self.arms.values():
            arm.state = ArmState.REFUSED
        return False

    async def _run_arm(self, arm: ArmRuntime) -> None:
        queue = list(self.tasks)
        unfinished: list[str] = []

        async def worker() -> None:
            while queue:
                task = queue.pop(0)
                if not await self.wait_to_start(arm):
                    unfinished.append(task.id)
                    continue
                outcome = "unfinished"
                try:
                    outcome = await self._run_task(arm, task)
                finally:  # a task in flight when the run is stopped now is unfinished too
                    if outcome == "unfinished":
                        unfinished.append(task.id)
                    if self.decision_watch is not None:
                        self.decision_watch.record(arm.name, task.id, outcome)

        ended = "ok"
        try:
            async with anyio.create_task_group() as tg:
                for _ in range(max(1, arm.config.max_concurrency)):
                    tg.start_soon(worker)
        except BaseException:
            ended = "failed"
            raise
        finally:
            with anyio.CancelScope(shield=True):
                await self._finish_arm(arm, unfinished + [t.id for t in queue], failed=ended == "failed")

    async def _finish_arm(self, arm: ArmRuntime, unfinished: list[str], failed: bool) -> None:
        """The arm's final row, on every path (shielded by the caller)."""
        self._finished_arms.add(arm.name)
        order = {t.id: i for i, t in enumerate(self.tasks)}
        unfinished = sorted(set(unfinished), key=lambda t: order.get(t, len(order)))
        if arm.state == ArmState.RUNNING:
            arm.state = ArmState.ABORTED if failed or self.state == EngineState.ABORTING else ArmState.FINISHED
        try:
            await self.ledger.write(
                arm_finished(arm.arm_id, arm.state, unfinished, arm.quota.used, arm.busy_ms, arm.paced_ms)
            )
        except LedgerError:
            if not failed:
                raise  # else the error that ended the arm is the one to report
        self.emit(ev.ArmStateChanged(self.run_id, arm=arm.name, state=arm.state, unfinished=tuple(unfinished)))

    async def _run_task(self, arm: ArmRuntime, task: Task) -> str:
        """Attempts until accepted or the budget is spent: "accepted", "failed" (budget spent)
        or "unfinished" (censored, stopped, aborted)."""
        if await self.runtime_gate.skip(self, arm, task):  # no runtime here: class environment, no tokens spent
            return "failed"
        if (strategy := arm.config.strategy_plan) and strategy.kind != "direct":  # Direct is the loop below
            return await run_strategy_task(self, arm, task, strategy)
        first, budget = 1, self.config.max_attempts
        if self.resume_state:
            done = self.resume_state.progress.get((arm.name, task.id))
            if done:
                if done.accepted:
                    return "accepted"
                if done.counted >= budget:
                    return "failed"
                first, budget = done.next_no, budget - done.counted
        for offset in range(budget):
            if not await self.wait_to_start(arm):
                return "unfinished"
            result = await AttemptRunner(self, arm, task, first + offset).run()
            if result.accepted:
                return "accepted"
            if not counts_toward_budget(result.failure_class):
                return "unfinished"
        return "failed"
