"""One attempt of one arm on one task: fresh workspace copy, the agent loop, then grading.

Ledger order (nothing spent goes unrecorded): the attempt row is inserted when the attempt
starts, every HTTP try is a calls row as soon as it ends (agent/run/calls.py), and the
attempt's tokens, end reason and diff are written before grading starts; the grade and the
attempt's class are one transaction (agent/run/grading.py). A cancelled attempt still records
what it spent (shielded writes), and its quota reservation is settled.

Nothing inside one attempt ends the run: an exception the loop did not expect ends this attempt
as `harness_error` with its traceback in `attempts.error_traceback`, and the arm goes on. Only a
ledger that cannot be written (`LedgerError`) and cancellation leave the attempt.
"""

from __future__ import annotations

import functools
import json
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from agent import events as ev
from agent.classify import FailureClass, classify
from agent.config import Limits
from agent.endpoints.endpoint import Completion
from agent.ledger.attempt_rows import AttemptKey, attempt_started, tool_call
from agent.ledger.store import ROW_TEXT_CHARS, LedgerError, capped, clean_text, new_id, utc_now
from agent.run.arms import ArmRuntime
from agent.run.calls import ModelCalls
from agent.run.grading import AttemptResult, grade_attempt
from agent.run.host import RunHost
from agent.run.inflight import off_loop
from agent.run.killpoints import kill_point
from agent.run.loop import AgentLoop
from agent.run.tools import ToolOutcome, Workspace
from agent.run.workspace_diff import apply_changes, changed_files, unified_diff
from agent.states import EndReason
from agent.strategy_spec import Stage
from verifiers.scratch import remove, scratch_dir
from verifiers.tasks import Task, copy_with_overlays

__all__ = ["NOT_GRADED", "AttemptResult", "AttemptRunner", "StagePlan", "grade_attempt"]

# end reasons that leave nothing to grade: the attempt is classed by its end reason alone
NOT_GRADED = (EndReason.HARNESS_ERROR, EndReason.CENSORED, EndReason.ABORTED, EndReason.LOST)
DIFF_CHARS = 4 * ROW_TEXT_CHARS


@dataclass(frozen=True)
class StagePlan:
    """What a strategy stage changes in an attempt (agent/run/strategies.py): its stage
    name and candidate number, the request seed, the stage's share of the task budget, the
    files it starts from and messages appended to the first prompt. The default is a plain attempt."""

    stage: Stage = Stage.ATTEMPT
    candidate: int | None = None
    seed: int | None = None
    limits: Limits | None = None
    start_files: dict[str, str | None] = field(default_factory=dict)
    messages: tuple[dict[str, Any], ...] = ()


class AttemptRunner:
    """Runs one attempt; the engine supplies the arm (client, quota) and its own controls."""

    def __init__(self, host: RunHost, arm: ArmRuntime, task: Task, attempt_no: int, plan: StagePlan | None = None):
        self.host, self.arm, self.task, self.attempt_no = host, arm, task, attempt_no
        self.plan = plan or StagePlan()
        self.id = new_id()
        self.key = AttemptKey(self.id, host.run_id, arm.arm_id, arm.name, task.id, attempt_no)
        self.loop: AgentLoop | None = None
        self.model = ModelCalls(
            host,
            arm,
            self.key,
            self.plan.stage,
            seed=self._seed(),
            temperature=self._temperature(),
            paused=self._paused,
            emit=self._emit,
        )

    def _seed(self) -> int | None:
        """The strategy's seed, or for a task's later attempt with retry_seed the configured seed
        plus the attempt's offset, so it is not a byte-identical request."""
        if self.plan.seed is not None or self.attempt_no <= 1 or not self.arm.config.retry_seed:
            return self.plan.seed
        return (self.arm.config.seed or 0) + self.attempt_no - 1

    def _temperature(self) -> float | None:
        return self.arm.config.retry_temperature if self.attempt_no > 1 else None

    def _emit(self, event_cls: Callable[..., ev.Event], **fields: Any) -> None:
        self.host.emit(event_cls(self.host.run_id, arm=self.arm.name, task_id=self.task.id, **fields))

    async def run(self) -> AttemptResult:
        scratch = scratch_dir(f"attempt-{self.arm.name}-{self.task.id}")
        try:
            return await self._run(scratch)
        finally:
            with anyio.CancelScope(shield=True):  # a stop-now must not leave the folder behind
                await anyio.to_thread.run_sync(remove, scratch)

    async def insert_row(self) -> None:
        """The attempt's row, inserted as it starts (a strategy's stage rows too)."""
        await self.host.ledger.batch([attempt_started(self.key, self.plan.stage, self.plan.candidate)])
        self._emit(ev.AttemptStarted, attempt=self.attempt_no, attempt_id=self.id, stage=self.plan.stage)

    async def _run(self, scratch: Path) -> AttemptResult:
        work = self.work = scratch / "work"
        started = time.monotonic()
        await self.insert_row()
        loop: AgentLoop | None = None
        error_traceback = None
        try:
            await anyio.to_thread.run_sync(copy_with_overlays, self.task.workspace, work)  # symlinks stay links
            if self.plan.start_files:  # a revision continues from the attempt it revises
                await anyio.to_thread.run_sync(apply_changes, work, self.plan.start_files)
            loop = self.loop = AgentLoop(
                self.task,
                Workspace(work),
                self.arm.config.protocol,
                self.plan.limits or self.host.config.limits,
                query=self._query,
                run_tests=self._run_tests,
                on_tool=self._on_tool,
            )
            for extra in self.plan.messages:  # into the first prompt: chat templates may refuse two user turns in a row
                loop.messages[-1] = {
                    **loop.messages[-1],
                    "content": f"{loop.messages[-1]['content']}\n\n{extra['content']}",
                }
            end_reason, detail = await loop.run()
        except LedgerError:
            raise
        except Exception as exc:  # noqa: BLE001 — anything unexpected ends this attempt, not the run
            end_reason, detail, error_traceback = (
                EndReason.HARNESS_ERROR,
                self._one_line(exc),
                self.host.mask(traceback.format_exc()),
            )
        except BaseException:  # cancelled (stop now)
            await self._record_cancelled(loop, started)
            raise
        try:
            return await self._finish(loop, work, end_reason, detail, started, error_traceback)
        except LedgerError:
            raise
        except Exception as exc:  # noqa: BLE001 — e.g. the grader failed: this attempt's harness error
            return await self._finish_broken(self._one_line(exc), self.host.mask(traceback.format_exc()))

    def _one_line(self, exc: BaseException) -> str:
        return capped(self.host.mask(" ".join(f"{type(exc).__name__}: {exc}".split())), 300) or ""

    def _paused(self, seconds: float) -> float:
        """Time spent paused is not the attempt's: its time limit moves by as much."""
        if seconds and self.loop is not None:
            self.loop.state.deadline += seconds
        return seconds

    # -- the model calls (agent/run/calls.py) -------------------------------------------------
    async def _query(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, turn: int, deadline: float
    ) -> Completion:
        return await self.model.query(messages, tools, turn, deadline)

    async def _update_totals(self, **extra: Any) -> None:
        await self.model.update_totals(**extra)

    @property
    def total_tokens(self) -> int:
        return self.model.total_tokens

    # -- tools ------------------------------------------------------------------------------
    async def _run_tests(self, seconds_left: float) -> tuple[bool, str]:
        """The visible tests, given at most the time left in the attempt; none start after an abort."""
        seconds_left += self._paused(await self.host.checkpoint(self.arm))
        run = functools.partial(self.host.grader.run_visible, self.task, self.work, timeout_s=seconds_left)
        limit = min(seconds_left, self.task.timeout_s)
        with self.host.work.doing("the visible tests", limit, self.arm.name, self.task.id, self.attempt_no):
            result = await off_loop(run, name="visible tests")
        limit = result.timeout_s if result.timeout_s is not None else self.task.timeout_s
        prefix = f"timed out after {limit:.0f} s\n" if result.verdict == "timeout" else ""
        return result.verdict == "pass", prefix + result.output

    async def _on_tool(self, turn: int, tool: str, raw_args: str, outcome: ToolOutcome, call_id: str | None) -> None:
        self.model.pending.append(
            tool_call(self.id, call_id, turn, tool, raw_args, outcome.ok, outcome.output, outcome.path)
        )
        summary = f"{tool[:80]}({outcome.path[:200]})" if outcome.path else tool[:80]
        self._emit(
            ev.ToolCalled,
            attempt=self.attempt_no,
            tool=clean_text(tool[:80]),
            ok=outcome.ok,
            summary=clean_text(summary if outcome.ok else f"{summary}: {outcome.output[:120]}"),
        )

    # -- the end of an attempt ----------------------------------------------------------------
    async def _finish(
        self,
        loop: AgentLoop | None,
        work: Path,
        end_reason: str,
        detail: str,
        started: float,
        error_traceback: str | None,
    ) -> AttemptResult:
        changes = await anyio.to_thread.run_sync(changed_files, self.task.workspace, work) if work.is_dir() else {}
        diff = await anyio.to_thread.run_sync(unified_diff, self.task.workspace, changes)
        edited = bool(changes)
        turns, malformed, visible = (
            (loop.state.turns, loop.state.malformed, loop.state.visible_passed) if loop else (0, 0, None)
        )
        # an attempt that is not graded gets its class in the same write: a stop-now cannot leave it `ended`
        not_graded = {"failure_class": classify(end_reason, None)} if end_reason in NOT_GRADED else {}
        await self._update_totals(
            end_reason=end_reason,
            end_detail=capped(detail, 2000) or None,
            error_traceback=capped(error_traceback),
            ended_utc=utc_now(),
            status="done" if not_graded else "ended",
            turns=turns,
            malformed_tool_calls=malformed,
            duration_ms=int((time.monotonic() - started) * 1000),
            visible_passed=None if visible is None else int(visible),
            edited=int(edited),
            diff=capped(diff, DIFF_CHARS),
            files_json=json.dumps(changes),
            **not_graded,
        )
        self._emit(ev.AttemptFinished, attempt=self.attempt_no, end_reason=end_reason, tokens=self.total_tokens)
        kill_point("attempt_ended")
        if not_graded:
            failure_class = not_graded["failure_class"]
            self._emit(
                ev.TaskGraded,
                attempt=self.attempt_no,
                verdict="",
                failure_class=failure_class,
                accepted=False,
                tokens=self.total_tokens,
            )
            return AttemptResult(self.id, end_reason, None, failure_class, self.total_tokens)
        return await grade_attempt(
            self.host,
            self.arm.name,
            self.id,
            self.task,
            work,
            self.attempt_no,
            end_reason=end_reason,
            edited=edited,
            malformed=malformed,
            changed=[k for k, v in changes.items() if v is not None],
            tokens=self.total_tokens,
        )

    async def _finish_broken(self, detail: str, error_traceback: str) -> AttemptResult:
        """The end of an attempt whose finishing (diff, grading) itself failed."""
        await self._update_totals(
            end_reason=EndReason.HARNESS_ERROR,
            end_detail=detail,
            error_traceback=capped(error_traceback),
            ended_utc=utc_now(),
            status="done",
            failure_class=FailureClass.HARNESS_ERROR,
            accepted=0,
        )
        self._emit(
            ev.TaskGraded,
            attempt=self.attempt_no,
            verdict="",
            failure_class=FailureClass.HARNESS_ERROR,
            accepted=False,
            tokens=self.total_tokens,
        )
        return AttemptResult(self.id, EndReason.HARNESS_ERROR, None, FailureClass.HARNESS_ERROR, self.total_tokens)

    async def _record_cancelled(self, loop: AgentLoop | None, started: float) -> None:
        with anyio.CancelScope(shield=True):
            await self.model.mark_lost()
            await self._update_totals(
                end_reason=EndReason.ABORTED,
                ended_utc=utc_now(),
                status="done",
                failure_class=FailureClass.ABORTED,
                turns=loop.state.turns if loop else 0,
                malformed_tool_calls=loop.state.malformed if loop else 0,
                duration_ms=int((time.monotonic() - started) * 1000),
            )
