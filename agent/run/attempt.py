"""One attempt of one arm on one task: fresh workspace copy, the agent loop, then grading.

Ledger order (nothing spent goes unrecorded): the attempt row is inserted when the attempt starts, every HTTP try
is a calls row as soon as it ends, and the attempt's tokens, end reason and diff are written
before grading starts; the grade and the attempt's class are one transaction. One awaited
write per model call: the in-flight row, committed before the request goes out; the call's
final row is queued to the writer thread, which commits it while the tool runs. A cancelled
attempt still records what it spent (shielded writes), and its quota reservation is settled.

Nothing inside one attempt ends the run: an exception the loop did not expect ends this attempt
as `harness_error` with its traceback in `attempts.error_traceback`, and the arm goes on. Only a
ledger that cannot be written (`LedgerError`) and cancellation leave the attempt.
"""

from __future__ import annotations

import contextlib
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
from agent.endpoints.endpoint import (
    CallTry,
    Completion,
    ContextOverflow,
    DeadlinePassed,
    EndpointError,
    ProviderQuotaExhausted,
)
from agent.endpoints.provider import RateLimits
from agent.endpoints.tokens import estimate_messages_tokens
from agent.ledger.store import ROW_TEXT_CHARS, LedgerError, capped, clean_text, new_id, to_json, utc_now
from agent.run.arms import ArmRuntime
from agent.run.host import RunHost
from agent.run.inflight import off_loop
from agent.run.killpoints import kill_point
from agent.run.loop import AgentLoop, AttemptEnded
from agent.run.quota import QuotaExhausted
from agent.run.tools import ToolOutcome, Workspace
from agent.run.workspace_diff import apply_changes, changed_files, unified_diff
from agent.states import EndReason
from agent.strategy_spec import Stage
from verifiers.mechanics import check_workspace
from verifiers.scratch import remove, scratch_dir
from verifiers.tasks import Task, copy_with_overlays

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


@dataclass(frozen=True)
class AttemptResult:
    attempt_id: str
    end_reason: str
    verdict: str | None
    failure_class: str
    tokens: int

    @property
    def accepted(self) -> bool:
        return self.failure_class == FailureClass.ACCEPTED


def call_columns(t: CallTry) -> dict[str, Any]:
    """The calls-row columns one HTTP try fills, for attempts and preflight alike."""
    return {
        "retry_index": t.retry_index,
        "started_utc": t.started_utc,
        "latency_ms": t.latency_ms,
        "status": t.status,
        "http_status": t.http_status,
        "prompt_tokens": t.prompt_tokens,
        "completion_tokens": t.completion_tokens,
        "usage_source": t.usage_source,
        "model_reported": t.model_reported,
        "system_fingerprint": t.system_fingerprint,
        "finish_reason": t.finish_reason,
        "error": t.error,
        "response_text": capped(t.text),
        "tool_calls_json": to_json(
            [
                {"id": capped(c.id, 200), "name": capped(c.name, 200), "arguments": capped(c.arguments)}
                for c in t.tool_calls
            ]
        ),
        "request_sha256": t.request_sha256,
        "response_sha256": t.response_sha256,
        "cached_tokens": t.details.cached_tokens,
        "cache_write_tokens": t.details.cache_write_tokens,
        "reasoning_tokens": t.details.reasoning_tokens,
        "cost_usd": t.details.cost_usd,
        "cost_source": t.details.cost_source,
        **(t.limits or RateLimits()).columns(),
        "paced_ms": t.paced_ms,
    }


def provider_sums(sums: dict[str, float | None], t: CallTry) -> None:
    """Add one try's provider-reported details to an attempt's sums (the attempts columns of the
    same names; one stays NULL until a try reports it)."""
    for key, value in (
        ("cached_tokens", t.details.cached_tokens),
        ("cache_write_tokens", t.details.cache_write_tokens),
        ("reasoning_tokens", t.details.reasoning_tokens),
        ("cost_usd", t.details.cost_usd),
        ("paced_ms", t.paced_ms),
    ):
        if value is not None:
            sums[key] = (sums.get(key) or 0) + value


class AttemptRunner:
    """Runs one attempt; the engine supplies the arm (client, quota) and its own controls."""

    def __init__(self, host: RunHost, arm: ArmRuntime, task: Task, attempt_no: int, plan: StagePlan | None = None):
        self.host, self.arm, self.task, self.attempt_no = host, arm, task, attempt_no
        self.plan = plan or StagePlan()
        self.id = new_id()
        self.tokens = {"prompt": 0, "completion": 0}
        self.calls = 0
        self.retries = 0
        self.provider: dict[str, float | None] = {}  # provider_sums over its tries
        self.in_flight: dict[str, int] = {}  # placeholder call row id -> reserved tokens
        self.pending: list[tuple[Any, ...]] = []  # tool rows, written with the next ledger batch
        self.loop: AgentLoop | None = None

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
        await self.host.ledger.insert(
            "attempts",
            {
                "id": self.id,
                "run_id": self.host.run_id,
                "arm_id": self.arm.arm_id,
                "arm": self.arm.name,
                "task_id": self.task.id,
                "attempt_no": self.attempt_no,
                "started_utc": utc_now(),
                "status": "running",
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "total_tokens": 0,
                "calls": 0,
                "transport_retries": 0,
                "malformed_tool_calls": 0,
                "turns": 0,
                "accepted": 0,
                "edited": 0,
                "stage": self.plan.stage,
                "candidate": self.plan.candidate,
            },
        )
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

    # -- the model call, with quota reservation and one ledger row per try -------------------
    async def _query(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, turn: int, deadline: float
    ) -> Completion:
        deadline += self._paused(await self.host.checkpoint(self.arm))
        reserve = estimate_messages_tokens(messages, tools) + self.arm.config.max_tokens
        deadline += self._paused(await self.host.before_reserve(self.arm, reserve))  # auto-pause before censoring
        try:
            handle = self.arm.quota.reserve(reserve)
        except QuotaExhausted as exc:
            await self.host.censor(self.arm, str(exc))
            raise AttemptEnded(EndReason.CENSORED, str(exc)) from None
        self.host.quota_changed(self.arm)
        placeholder = new_id()
        spent = 0

        async def on_try(t: CallTry) -> None:
            nonlocal spent
            spent += t.prompt_tokens + t.completion_tokens
            self._record_try(t, turn, reserve, placeholder if t.retry_index == 0 else new_id(), t.retry_index == 0)
            if t.retry_index == 0:
                self.in_flight.pop(placeholder, None)

        def on_delta(text: str) -> None:
            self._emit(ev.ModelText, text=clean_text(text))

        try:
            await self.host.ledger.batch(
                self._take_pending()
                + [
                    (
                        "insert",
                        "calls",
                        {
                            "id": placeholder,
                            "attempt_id": self.id,
                            "run_id": self.host.run_id,
                            "arm": self.arm.name,
                            "turn": turn,
                            "retry_index": 0,
                            "started_utc": utc_now(),
                            "status": "in_flight",
                            "reserved_tokens": reserve,
                            "prompt_tokens": 0,
                            "completion_tokens": 0,
                            "usage_source": "none",
                            "stage": self.plan.stage,
                        },
                    )
                ]
            )
            self.in_flight[placeholder] = reserve  # only once its row is committed: a lost call has a row
            kill_point("call_row")
            limit = min(
                deadline - time.monotonic(), self.arm.config.request_timeout_s * (self.arm.config.max_retries + 1)
            )
            while True:
                try:
                    with self.host.work.doing("a call", limit, self.arm.name, self.task.id, self.attempt_no):
                        async with self.arm.gate or contextlib.nullcontext():
                            completion = await self.arm.client.complete(
                                messages,
                                tools,
                                on_try=on_try,
                                on_delta=on_delta,
                                deadline=deadline,
                                seed=self._seed(),
                                temperature=self._temperature(),
                            )
                    break
                except ProviderQuotaExhausted as exc:  # ends the arm, or waits for a top-up and calls again
                    waiting = time.monotonic()
                    await self.host.provider_quota(self.arm, exc.reason)
                    deadline += self._paused(time.monotonic() - waiting)
        except DeadlinePassed as exc:
            raise AttemptEnded(EndReason.TIME_LIMIT, str(exc)) from None
        except ContextOverflow as exc:
            raise AttemptEnded(EndReason.CONTEXT_OVERFLOW, str(exc)) from None
        except EndpointError as exc:
            raise AttemptEnded(EndReason.HARNESS_ERROR, str(exc)) from None
        finally:
            with anyio.CancelScope(shield=True):
                spent += await self._mark_lost()
                self.arm.quota.settle(handle, spent)
                self.host.quota_changed(self.arm)
        await self.host.observe_server(self.arm, completion)
        return completion

    async def _mark_lost(self) -> int:
        """Calls still in flight (cancelled mid-request) become `lost`, charged at their reservation."""
        if not self.in_flight:
            return 0
        ops, charged = [], 0
        for call_id, reserved in self.in_flight.items():
            ops.append(
                (
                    "update_if",
                    "calls",
                    call_id,
                    {"status": "lost", "prompt_tokens": reserved, "usage_source": "reserved"},
                )
            )
            self.tokens["prompt"] += reserved
            charged += reserved
        self.in_flight.clear()
        await self.host.ledger.batch(ops + [self._totals_op()])
        return charged

    def _record_try(self, t: CallTry, turn: int, reserve: int, row_id: str, is_placeholder: bool) -> None:
        self.calls += 1
        self.retries += 1 if t.retry_index > 0 else 0
        self.tokens["prompt"] += t.prompt_tokens
        self.tokens["completion"] += t.completion_tokens
        self.arm.busy_ms += t.latency_ms
        self.arm.paced_ms += t.paced_ms
        provider_sums(self.provider, t)
        row = {
            "attempt_id": self.id,
            "run_id": self.host.run_id,
            "arm": self.arm.name,
            "turn": turn,
            "reserved_tokens": reserve,
            "server_session_id": self.arm.session_id,
            "stage": self.plan.stage,
            **call_columns(t),
        }
        op = ("update", "calls", row_id, row) if is_placeholder else ("insert", "calls", {"id": row_id, **row})
        # Queued, not awaited: the writer commits it at once, in order, while the loop runs the
        # tool; the next awaited write (the next call's in-flight row) waits for it.
        self.host.ledger.batch_queued([op, self._totals_op()])
        self._emit(
            ev.CallFinished,
            attempt=self.attempt_no,
            status=t.status,
            retry_index=t.retry_index,
            prompt_tokens=t.prompt_tokens,
            completion_tokens=t.completion_tokens,
            usage_source=t.usage_source,
            latency_ms=t.latency_ms,
            cached_tokens=t.details.cached_tokens or 0,
            reasoning_tokens=t.details.reasoning_tokens or 0,
            paced_ms=t.paced_ms,
        )
        if t.limits is not None:
            self.host.provider_limits(self.arm, t.limits)

    def _totals_op(self, **extra: Any) -> tuple[Any, ...]:
        return (
            "update",
            "attempts",
            self.id,
            {
                "prompt_tokens": self.tokens["prompt"],
                "completion_tokens": self.tokens["completion"],
                "total_tokens": self.total_tokens,
                "calls": self.calls,
                "transport_retries": self.retries,
                **self.provider,
                **extra,
            },
        )

    def _take_pending(self) -> list[tuple[Any, ...]]:
        pending, self.pending = self.pending, []
        return pending

    async def _update_totals(self, **extra: Any) -> None:
        await self.host.ledger.batch(self._take_pending() + [self._totals_op(**extra)])

    @property
    def total_tokens(self) -> int:
        return self.tokens["prompt"] + self.tokens["completion"]

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
        self.pending.append(
            (
                "insert",
                "tool_calls",
                {  # call_id as calls.tool_calls_json has it: joinable
                    "id": new_id(),
                    "attempt_id": self.id,
                    "call_id": capped(call_id, 200),
                    "turn": turn,
                    "tool": capped(tool, 200),
                    "arguments_json": capped(raw_args),
                    "ok": int(outcome.ok),
                    "error": None if outcome.ok else capped(outcome.output, 4000),
                    "path": outcome.path,
                    "result": capped(outcome.output, 4000),
                },
            )
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
            await self._mark_lost()
            await self._update_totals(
                end_reason=EndReason.ABORTED,
                ended_utc=utc_now(),
                status="done",
                failure_class=FailureClass.ABORTED,
                turns=loop.state.turns if loop else 0,
                malformed_tool_calls=loop.state.malformed if loop else 0,
                duration_ms=int((time.monotonic() - started) * 1000),
            )


async def grade_attempt(
    host: RunHost,
    arm: str,
    attempt_id: str,
    task: Task,
    work: Path,
    attempt_no: int,
    *,
    end_reason: str,
    edited: bool,
    malformed: int,
    changed: list[str],
    tokens: int,
) -> AttemptResult:
    """Hidden verdict + mechanics findings -> grades row, attempt class. Also used by resume.
    The grades row and the attempt's update are one transaction: a kill leaves both or neither."""
    with host.work.doing("the grade", task.timeout_s, arm, task.id, attempt_no):
        grade = await off_loop(host.grader.grade, task, work, name="grade")
    findings = await anyio.to_thread.run_sync(check_workspace, task.workspace, work, changed)
    failure_class = classify(
        end_reason,
        grade.verdict,
        findings=len(findings),
        edited=edited,
        malformed=malformed,
        environment=grade.environment,
    )
    accepted = failure_class == FailureClass.ACCEPTED
    await host.ledger.batch(
        [
            (
                "insert",
                "grades",
                {
                    "id": new_id(),
                    "attempt_id": attempt_id,
                    "created_utc": utc_now(),
                    "verdict": grade.verdict,
                    "exit_status": grade.exit_status,
                    "duration_ms": grade.duration_ms,
                    "passed": grade.passed,
                    "failed": grade.failed,
                    "output": capped(grade.output),
                    "isolation_json": to_json(grade.isolation),
                    "failing_tests_json": to_json(list(grade.failing_tests)),
                    "environment": grade.environment,
                    "timeout_s": grade.timeout_s,
                    "mechanics_json": to_json([f.to_dict() for f in findings]),
                    "sandbox": grade.isolation.get("sandbox"),
                    "expected_tests": grade.expected_tests,
                    "integrity": grade.integrity,
                    "restored_json": to_json(list(grade.restored)),
                    "executor": grade.placement.get("executor"),
                    "node": grade.placement.get("node"),
                    "queue_ms": grade.placement.get("queue_ms"),
                    "retries": grade.placement.get("retries"),
                    "tampering_json": to_json([f.as_dict() for f in grade.tampering]),
                    "runner": grade.runner,
                },
            ),
            (
                "update",
                "attempts",
                attempt_id,
                {"verdict": grade.verdict, "failure_class": failure_class, "accepted": int(accepted), "status": "done"},
            ),
        ]
    )
    kill_point("graded")
    host.emit(
        ev.TaskGraded(
            host.run_id,
            arm=arm,
            task_id=task.id,
            attempt=attempt_no,
            verdict=grade.verdict,
            failure_class=failure_class,
            accepted=accepted,
            tokens=tokens,
        )
    )
    return AttemptResult(attempt_id, end_reason, grade.verdict, failure_class, tokens)
