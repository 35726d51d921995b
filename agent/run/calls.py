"""An attempt's model calls: quota reserved before each, one ledger row per HTTP try, what they spent.

One awaited write per model call: the in-flight row, committed before the request goes out; the
call's final row is queued to the writer thread, which commits it while the tool runs. A call
cancelled mid-request becomes `lost`, charged at its reservation, and the reservation is settled.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

import anyio

from agent import events as ev
from agent.endpoints.endpoint import (
    CallTry,
    Completion,
    ContextOverflow,
    DeadlinePassed,
    EndpointError,
    ProviderQuotaExhausted,
)
from agent.endpoints.tokens import estimate_messages_tokens
from agent.ledger.attempt_rows import AttemptKey, attempt_update, call_finished, call_in_flight, call_lost
from agent.ledger.ops import Op, Update
from agent.ledger.store import clean_text, new_id
from agent.run.arms import ArmRuntime
from agent.run.host import RunHost
from agent.run.killpoints import kill_point
from agent.run.loop import AttemptEnded
from agent.run.quota import QuotaExhausted
from agent.states import EndReason


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


class ModelCalls:
    """The model calls of one attempt and their running totals (the attempt row's columns).

    `paused(seconds)` moves the attempt's time limit by time spent paused and returns it;
    `emit(event_cls, **fields)` publishes an event of this attempt."""

    def __init__(
        self,
        host: RunHost,
        arm: ArmRuntime,
        key: AttemptKey,
        stage: str,
        *,
        seed: int | None,
        temperature: float | None,
        paused: Callable[[float], float],
        emit: Callable[..., None],
    ):
        self.host, self.arm, self.key, self.stage = host, arm, key, stage
        self.seed, self.temperature, self.paused, self.emit = seed, temperature, paused, emit
        self.tokens = {"prompt": 0, "completion": 0}
        self.calls = 0
        self.retries = 0
        self.provider: dict[str, float | None] = {}  # provider_sums over its tries
        self.in_flight: dict[str, int] = {}  # placeholder call row id -> reserved tokens
        self.pending: list[Op] = []  # tool rows, written with the next ledger batch

    @property
    def total_tokens(self) -> int:
        return self.tokens["prompt"] + self.tokens["completion"]

    async def query(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, turn: int, deadline: float
    ) -> Completion:
        """One model call of the loop: reserve its tokens, record every try, settle what it spent."""
        host, arm, key = self.host, self.arm, self.key
        deadline += self.paused(await host.checkpoint(arm))
        reserve = estimate_messages_tokens(messages, tools) + arm.config.max_tokens
        deadline += self.paused(await host.before_reserve(arm, reserve))  # auto-pause before censoring
        try:
            handle = arm.quota.reserve(reserve)
        except QuotaExhausted as exc:
            await host.censor(arm, str(exc))
            raise AttemptEnded(EndReason.CENSORED, str(exc)) from None
        host.quota_changed(arm)
        placeholder = new_id()
        spent = 0

        async def on_try(t: CallTry) -> None:
            nonlocal spent
            spent += t.prompt_tokens + t.completion_tokens
            self._record_try(t, turn, reserve, placeholder if t.retry_index == 0 else new_id(), t.retry_index == 0)
            if t.retry_index == 0:
                self.in_flight.pop(placeholder, None)

        def on_delta(text: str) -> None:
            self.emit(ev.ModelText, text=clean_text(text))

        try:
            await host.ledger.batch(self.take_pending() + [call_in_flight(key, placeholder, turn, reserve, self.stage)])
            self.in_flight[placeholder] = reserve  # only once its row is committed: a lost call has a row
            kill_point("call_row")
            limit = min(deadline - time.monotonic(), arm.config.request_timeout_s * (arm.config.max_retries + 1))
            while True:
                try:
                    with host.work.doing("a call", limit, arm.name, key.task_id, key.attempt_no):
                        async with arm.gate or contextlib.nullcontext():
                            completion = await arm.client.complete(
                                messages,
                                tools,
                                on_try=on_try,
                                on_delta=on_delta,
                                deadline=deadline,
                                seed=self.seed,
                                temperature=self.temperature,
                            )
                    break
                except ProviderQuotaExhausted as exc:  # ends the arm, or waits for a top-up and calls again
                    waiting = time.monotonic()
                    await host.provider_quota(arm, exc.reason)
                    deadline += self.paused(time.monotonic() - waiting)
        except DeadlinePassed as exc:
            raise AttemptEnded(EndReason.TIME_LIMIT, str(exc)) from None
        except ContextOverflow as exc:
            raise AttemptEnded(EndReason.CONTEXT_OVERFLOW, str(exc)) from None
        except EndpointError as exc:
            raise AttemptEnded(EndReason.HARNESS_ERROR, str(exc)) from None
        finally:
            if self.in_flight:  # a call cut off mid-request: its lost row is written, shielded
                with anyio.CancelScope(shield=True):
                    spent += await self.mark_lost()
            arm.quota.settle(handle, spent)
            host.quota_changed(arm)
        await host.observe_server(arm, completion)
        return completion

    async def mark_lost(self) -> int:
        """Calls still in flight (cancelled mid-request) become `lost`, charged at their reservation."""
        if not self.in_flight:
            return 0
        ops: list[Op] = []
        charged = 0
        for call_id, reserved in self.in_flight.items():
            ops.append(call_lost(call_id, reserved))
            self.tokens["prompt"] += reserved
            charged += reserved
        self.in_flight.clear()
        await self.host.ledger.batch(ops + [self.totals_op()])
        return charged

    def _record_try(self, t: CallTry, turn: int, reserve: int, row_id: str, is_placeholder: bool) -> None:
        self.calls += 1
        self.retries += 1 if t.retry_index > 0 else 0
        self.tokens["prompt"] += t.prompt_tokens
        self.tokens["completion"] += t.completion_tokens
        self.arm.busy_ms += t.latency_ms
        self.arm.paced_ms += t.paced_ms
        provider_sums(self.provider, t)
        op = call_finished(
            self.key,
            row_id,
            t,
            turn=turn,
            reserved=reserve,
            server_session_id=self.arm.session_id,
            stage=self.stage,
            in_flight_row=is_placeholder,
        )
        # Queued, not awaited: the writer commits it at once, in order, while the loop runs the
        # tool; the next awaited write (the next call's in-flight row) waits for it.
        self.host.ledger.batch_queued([op, self.totals_op()])
        self.emit(
            ev.CallFinished,
            attempt=self.key.attempt_no,
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

    def totals_op(self, **extra: Any) -> Update:
        """The attempt row's totals so far, and `extra` columns."""
        fields = {
            "prompt_tokens": self.tokens["prompt"],
            "completion_tokens": self.tokens["completion"],
            "total_tokens": self.total_tokens,
            "calls": self.calls,
            "transport_retries": self.retries,
            **self.provider,
            **extra,
        }
        return attempt_update(self.key.id, **fields)

    def take_pending(self) -> list[Op]:
        pending, self.pending = self.pending, []
        return pending

    async def update_totals(self, **extra: Any) -> None:
        await self.host.ledger.batch(self.take_pending() + [self.totals_op(**extra)])
