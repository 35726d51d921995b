"""What happens as an arm's quota runs out: the auto-pause choice point before its cap (the live
view pauses for the user; headless, run.auto_pause_policy decides), censoring when a call does
not fit, and the provider saying the account's quota is spent (pause for a top-up, or end the arm).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from agent import events as ev
from agent.ledger.rows import arm_censored, arm_uncensored
from agent.run.quota import CensoredBy
from agent.states import ArmState, EndReason, EngineState

if TYPE_CHECKING:
    from agent.config import RunConfig
    from agent.ledger.writer import AsyncLedger
    from agent.run.arms import ArmRuntime


class Controls(Protocol):
    """What the quota stops use of the engine: its state, its commands and its outputs."""

    run_id: str
    config: RunConfig
    ledger: AsyncLedger
    state: EngineState
    auto_pause: bool  # under the live view: the user chooses

    def emit(self, event: ev.Event) -> None: ...
    def log(self, text: str, level: str = "info", arm: str | None = None, kind: str = "") -> None: ...
    def pause(self, reason: str = "paused") -> None: ...
    def abort(self) -> None: ...
    def stop_arm(self, name: str, why: str = "by the user") -> None: ...
    async def checkpoint(self, arm: ArmRuntime) -> float: ...
    async def wait_while_paused(self) -> None: ...


class QuotaStops:
    def __init__(self, engine: Controls):
        self.engine = engine
        self.auto_paused: set[str] = set()  # arms past their choice point (until a raised cap)

    # -- the choice point before an arm's cap ------------------------------------------------
    def due(self, arm: ArmRuntime, next_call: int) -> bool:
        q, engine = arm.quota, self.engine
        after = (q.used + q.reserved + next_call) / q.cap if q.cap else 1.0
        return (
            engine.state in (EngineState.RUNNING, EngineState.PAUSED)
            and arm.state == ArmState.RUNNING
            and arm.name not in self.auto_paused
            and after >= engine.config.auto_pause_share
        )

    async def before_reserve(self, arm: ArmRuntime, tokens: int) -> float:
        """Before a call reserves `tokens`: when that would cross the auto-pause share or not fit
        under the cap, the choice point comes first, so nothing is censored without it. Under the
        live view the run pauses until the user chooses (a raised cap is checked again); headless,
        run.auto_pause_policy decides. After "continue" the arm runs on to its cap, as before.
        Returns the seconds it waited paused."""
        waited = 0.0
        while self.due(arm, tokens):
            self.choice_point(arm, tokens)
            waited += await self.engine.checkpoint(arm)
        return waited

    def choice_point(self, arm: ArmRuntime, next_call: int) -> None:
        q, engine = arm.quota, self.engine
        self.auto_paused.add(arm.name)
        policy = None if engine.auto_pause else engine.config.auto_pause_policy
        engine.emit(
            ev.AutoPaused(
                engine.run_id,
                arm=arm.name,
                used=q.used,
                reserved=q.reserved,
                cap=q.cap,
                share=q.share,
                next_call=next_call,
                policy=policy,
            )
        )
        if policy is None:
            engine.pause(
                reason=f"auto-pause: arm {arm.name} at {q.share:.0%} of its cap"
                + (f", its next call reserves {next_call:,} tokens" if next_call else "")
            )
        elif policy == "stop-arm":
            engine.stop_arm(arm.name, why="by auto_pause_policy = stop-arm")
        elif policy == "abort":
            engine.log(f"auto-pause policy abort: arm {arm.name} near its cap", level="warning", arm=arm.name)
            engine.abort()

    # -- censoring ---------------------------------------------------------------------------
    async def censor(self, arm: ArmRuntime, reason: str, by: CensoredBy = CensoredBy.CAP) -> None:
        if arm.state == ArmState.RUNNING:
            arm.state = ArmState.CENSORED
            await self.engine.ledger.write(arm_censored(arm.arm_id, reason, str(by)))
            self.engine.log(f"arm {arm.name} censored: {reason}", level="warning", arm=arm.name)

    async def provider_quota(self, arm: ArmRuntime, reason: str) -> None:
        """The provider says the arm's quota is spent (its first such reply: no retries). The arm is
        censored by the provider's quota. Under the live view the run pauses with the reason; when
        the user resumes (after topping up) the arm runs again and this returns, so the call is
        sent again. Headless, run.auto_pause_policy decides: abort ends the run; continue and
        stop-arm let the other arm go on. Either way `quotabench resume` continues the arm later.
        Raises AttemptEnded("censored") when the arm stays censored."""
        from agent.run.loop import AttemptEnded

        engine = self.engine
        await self.censor(arm, reason, CensoredBy.PROVIDER_QUOTA)
        policy = None if engine.auto_pause else engine.config.auto_pause_policy
        engine.emit(ev.ProviderQuotaSpent(engine.run_id, arm=arm.name, reason=reason, policy=policy))
        if policy == "abort":
            engine.abort()
        if policy is not None:
            raise AttemptEnded(EndReason.CENSORED, reason)
        engine.pause(reason=f"auto-pause: arm {arm.name} {reason} — top up the account, then resume")
        await engine.wait_while_paused()
        if engine.state != EngineState.RUNNING or arm.state != ArmState.CENSORED:
            raise AttemptEnded(EndReason.CENSORED, reason)
        arm.state = ArmState.RUNNING
        await engine.ledger.write(arm_uncensored(arm.arm_id))
        engine.log(f"arm {arm.name} resumed after the provider's quota was topped up", arm=arm.name)
        engine.emit(ev.ArmStateChanged(engine.run_id, arm=arm.name, state=ArmState.RUNNING))
