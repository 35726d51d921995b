"""Running one task under a test-time strategy (agent/strategy_spec.py says what each strategy is
and its budget multiplier).

Every stage is an attempts row with its `stage` (and `candidate`), every call of it a calls row
with the same stage, all charged to the arm's quota like any attempt: the stages' tokens are
the arm's tokens. Agent stages (candidates, revise's initial attempt and revision) are graded
on the hidden tests like any attempt — that is coverage; only the stage marked `submitted`
is the arm's answer (agent/metrics/outcome.py). The submission and why it was chosen is one
`submissions` row, written with the `submitted` marks in one transaction.

Resume: the stages of a task that completed before a kill are read back and reused; the
missing ones run with the next attempt numbers. A task with a submissions row is done.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from agent import events as ev
from agent.classify import NOT_COUNTED, classify
from agent.config import ArmConfig, Limits
from agent.ledger import strategy_reads
from agent.ledger.ops import Op
from agent.ledger.rows import submission, submitted
from agent.ledger.store import LedgerError, capped, utc_now
from agent.run.attempt import AttemptRunner, StagePlan
from agent.run.loop import AttemptEnded
from agent.run.selection import (
    Candidate,
    VisibleScore,
    first_non_empty,
    scores_json,
    select_visible,
    visible_scores,
)
from agent.run.strategy_prompts import (
    critique_messages,
    judge_messages,
    parse_choice,
    parse_verdict,
    revision_message,
)
from agent.states import EndReason
from agent.strategy_spec import Stage, Strategy, select_rule
from verifiers.tasks import Task

if TYPE_CHECKING:
    from agent.run.arms import ArmRuntime
    from agent.run.host import RunHost

# A model stage that ended so was cut off by the run: its task is unfinished.
CUT_OFF = (EndReason.CENSORED, EndReason.ABORTED)


class TaskBudget:
    """m x every per-task cap of run.limits (seed 004 appendix A), drawn down by each stage."""

    def __init__(self, limits: Limits, multiplier: int):
        self.limits = limits
        self.tokens = limits.max_tokens_per_attempt * multiplier
        self.turns = limits.max_turns * multiplier
        self.seconds = limits.attempt_timeout_s * multiplier
        self.used_tokens, self.used_turns, self.used_seconds = 0, 0, 0.0

    def charge(self, row: dict[str, Any]) -> None:
        self.used_tokens += row.get("total_tokens") or 0
        self.used_turns += row.get("turns") or 0
        self.used_seconds += (row.get("duration_ms") or 0) / 1000

    def stage_limits(self, share: int = 1) -> Limits | None:
        """Direct's caps times `share`, cut to what is left of the task's budget; None: spent."""
        left_tokens, left_turns = self.tokens - self.used_tokens, self.turns - self.used_turns
        left_seconds = self.seconds - self.used_seconds
        if left_tokens <= 0 or left_turns <= 0 or left_seconds <= 0:
            return None
        lim = self.limits
        return replace(
            lim,
            max_turns=min(lim.max_turns * share, left_turns),
            max_tokens_per_attempt=min(lim.max_tokens_per_attempt * share, left_tokens),
            attempt_timeout_s=min(lim.attempt_timeout_s * share, left_seconds),
        )


@dataclass(frozen=True)
class Answer:
    """A model stage's reply (critique, judge): its text, or None with why."""

    text: str | None
    end_reason: str


class ModelStage(AttemptRunner):
    """A stage that is one model call without tools (critique, judge), charged like any call."""

    async def ask(self, messages: list[dict[str, Any]], limits: Limits) -> Answer:
        started = time.monotonic()
        await self.insert_row()
        text, end_reason, detail = None, EndReason.ANSWERED, ""
        try:
            completion = await self._query(messages, None, 1, started + limits.attempt_timeout_s)
            text = completion.text
        except AttemptEnded as ended:
            end_reason, detail = ended.reason, ended.detail
        except LedgerError:
            raise
        except Exception as exc:  # noqa: BLE001 — like an attempt: this stage's harness error, not the run's
            end_reason, detail = EndReason.HARNESS_ERROR, self._one_line(exc)
        except BaseException:
            await self._record_cancelled(None, started)
            raise
        await self._update_totals(
            end_reason=end_reason,
            end_detail=capped(detail, 2000) or None,
            ended_utc=utc_now(),
            status="done",
            turns=1,
            duration_ms=int((time.monotonic() - started) * 1000),
            failure_class=classify(end_reason, None) if end_reason in CUT_OFF else None,
        )
        return Answer(text, end_reason)


class StrategyTask:
    """One task of one strategy arm, from its first stage (or where a killed run left it) to its submission."""

    def __init__(self, host: RunHost, arm: ArmRuntime, task: Task, strategy: Strategy):
        self.host, self.arm, self.task, self.strategy = host, arm, task, strategy
        self.budget = TaskBudget(host.config.limits, strategy.multiplier)
        self.rows: list[dict[str, Any]] = []
        self.next_no = 1

    # -- the ledger ------------------------------------------------------------------------
    def _read(self) -> tuple[list[dict[str, Any]], bool]:
        db, run_id = self.host.ledger_sync, self.host.run_id
        return (
            strategy_reads.task_stages(db, run_id, self.arm.name, self.task.id),
            strategy_reads.submitted_already(db, run_id, self.arm.name, self.task.id),
        )

    async def _row(self, attempt_id: str) -> dict[str, Any]:
        row: dict[str, Any] = await self.host.ledger.run(strategy_reads.attempt, self.host.ledger_sync, attempt_id)
        return row

    def _reused(self, stage: Stage, candidate: int | None = None) -> dict[str, Any] | None:
        """A completed stage of a killed run, to use instead of running it again."""
        for row in self.rows:
            if (
                row["stage"] == stage
                and row["candidate"] == candidate
                and row["status"] == "done"
                and row["failure_class"] not in NOT_COUNTED
            ):
                return row
        return None

    # -- stages ------------------------------------------------------------------------------
    async def agent_stage(
        self,
        stage: Stage,
        candidate: int | None,
        seed: int | None,
        limits: Limits,
        start_files: dict[str, str | None] | None = None,
        messages: tuple[dict[str, Any], ...] = (),
    ) -> dict[str, Any] | None:
        """Run (or reuse) an agent stage; None when the arm stopped in it (the task is unfinished)."""
        row = self._reused(stage, candidate)
        if row is None:
            if not await self.host.wait_to_start(self.arm):  # paused: waits; aborted or stopped: unfinished
                return None
            plan = StagePlan(stage, candidate, seed, limits, start_files or {}, messages)
            no, self.next_no = self.next_no, self.next_no + 1
            result = await AttemptRunner(self.host, self.arm, self.task, no, plan).run()
            row = await self._row(result.attempt_id)
            self.budget.charge(row)
        return None if row["failure_class"] in NOT_COUNTED else row

    async def model_stage(self, stage: Stage, messages: list[dict[str, Any]], limits: Limits) -> Answer | None:
        """Ask (or reuse the answer of) a critique or judge; None when the arm stopped in it."""
        row = self._reused(stage)
        if row is not None:
            return Answer(row.get("answer"), row["end_reason"])
        if not await self.host.wait_to_start(self.arm):
            return None
        no, self.next_no = self.next_no, self.next_no + 1
        runner = ModelStage(self.host, self.arm, self.task, no, StagePlan(stage))
        answer = await runner.ask(messages, limits)
        self.budget.charge(await self._row(runner.id))
        return None if answer.end_reason in CUT_OFF else answer

    # -- the protocol ------------------------------------------------------------------------
    async def run(self) -> str:
        self.rows, done = await self.host.ledger.run(self._read)
        if done:
            return "accepted" if any(r["submitted"] == 1 and r["accepted"] for r in self.rows) else "failed"
        for row in self.rows:
            if row["failure_class"] not in NOT_COUNTED:
                self.budget.charge(row)
        self.next_no = max((r["attempt_no"] for r in self.rows), default=0) + 1
        return await (self._parallel() if self.strategy.kind == "parallel" else self._revise())

    def _candidate(self, row: dict[str, Any], number: int) -> Candidate:
        files = json.loads(row["files_json"] or "{}")
        return Candidate(
            row["id"],
            row["attempt_no"],
            row["stage"],
            number,
            files,
            row["diff"] or "",
            row["end_reason"] or "",
            row["failure_class"],
            bool(row["accepted"]),
            row["total_tokens"] or 0,
        )

    async def _parallel(self) -> str:
        base = self.arm.config.seed or 0
        candidates: list[Candidate] = []
        for i in range(1, self.strategy.k + 1):
            limits = self.budget.stage_limits()
            if limits is None and self._reused(Stage.CANDIDATE, i) is None:
                break  # the task's budget is spent: fewer candidates
            row = await self.agent_stage(Stage.CANDIDATE, i, base + i - 1, limits or self.host.config.limits)
            if row is None:
                return "unfinished"
            candidates.append(self._candidate(row, i))
        scored = await visible_scores(self.host.grader, self.task, candidates)
        scores = [s for s, _ in scored]
        rule = self.arm.config.select or "visible"
        parse_route = None
        if rule == "visible":
            choice = select_visible(scores)
        else:
            answer_or_none = await self._judge(candidates, scores)
            if answer_or_none is None:
                return "unfinished"
            choice, parse_route = answer_or_none
        return await self._submit(candidates, choice, rule, parse_route, scores)

    async def _judge(self, candidates: list[Candidate], scores: list[VisibleScore]) -> tuple[int | None, str] | None:
        limits = self.budget.stage_limits()
        if limits is None and self._reused(Stage.JUDGE) is None:
            return None, "no_budget"
        answer = await self.model_stage(
            Stage.JUDGE,
            judge_messages(self.task, [(c.diff, s.summary) for c, s in zip(candidates, scores)]),
            limits or self.host.config.limits,
        )
        if answer is None:
            return None
        if answer.text is None:
            return None, answer.end_reason  # the endpoint failed: no choice
        parsed = parse_choice(answer.text, len(candidates))
        number = parsed.value if isinstance(parsed.value, int) else None
        if number is not None and candidates[number - 1].empty:
            return None, "empty_choice"
        return number, parsed.route

    async def _revise(self) -> str:
        limits = self.budget.stage_limits() or self.host.config.limits
        row = await self.agent_stage(Stage.INITIAL, None, None, limits)
        if row is None:
            return "unfinished"
        initial = self._candidate(row, 1)
        ((score, output),) = await visible_scores(self.host.grader, self.task, [initial])
        limits_or_none = self.budget.stage_limits()
        if limits_or_none is None and self._reused(Stage.CRITIQUE) is None:
            return await self._submit([initial], 1, "critique", "no_budget", [score], route="no_budget")
        answer = await self.model_stage(
            Stage.CRITIQUE,
            critique_messages(self.task, initial.diff, output or score.summary),
            limits_or_none or self.host.config.limits,
        )
        if answer is None:
            return "unfinished"
        verdict = parse_verdict(answer.text)
        if verdict.value == "PASS":
            return await self._submit([initial], 1, "critique", verdict.route, [score], route="critique_pass")
        limits_or_none = self.budget.stage_limits(share=self.strategy.multiplier)
        if limits_or_none is None and self._reused(Stage.REVISION) is None:
            return await self._submit([initial], 1, "critique", verdict.route, [score], route="no_budget")
        row = await self.agent_stage(
            Stage.REVISION,
            None,
            None,
            limits_or_none or self.host.config.limits,
            start_files=initial.files,
            messages=(revision_message(answer.text or ""),),
        )
        if row is None:
            return "unfinished"
        revision = self._candidate(row, 2)
        rev_score = VisibleScore(2, revision.empty, False, None, None, "not run (revise submits the revision)")
        choice = None if revision.empty else 2
        return await self._submit(
            [initial, revision], choice, "critique", verdict.route, [score, rev_score], route="revision"
        )

    async def _submit(
        self,
        candidates: list[Candidate],
        choice: int | None,
        rule: str,
        parse_route: str | None,
        scores: list[VisibleScore],
        route: str | None = None,
    ) -> str:
        fallback = 0
        route = route or rule
        if choice is None:
            if self.arm.config.fallback and first_non_empty(candidates) is not None:
                choice, fallback, route = first_non_empty(candidates), 1, "fallback"
            else:
                route = "none"
        chosen = candidates[choice - 1] if choice is not None else None
        reason = _reason(route, choice, parse_route, scores)
        ops: list[Op] = [submitted(c.attempt_id, c is chosen) for c in candidates]
        ops.append(
            submission(
                self.host.run_id,
                self.arm.name,
                self.task.id,
                strategy=self.strategy.name,
                select_rule=rule,
                candidates=len(candidates),
                submitted_attempt_id=chosen.attempt_id if chosen else None,
                route=route,
                reason=reason,
                parse_route=parse_route,
                fallback=fallback,
                scores_json=scores_json(scores),
            )
        )
        await self.host.ledger.batch(ops)
        accepted = bool(chosen and chosen.accepted)
        self.host.emit(
            ev.Submitted(
                self.host.run_id,
                arm=self.arm.name,
                task_id=self.task.id,
                attempt=chosen.attempt_no if chosen else None,
                accepted=accepted,
                candidates=len(candidates),
                covered=sum(c.accepted for c in candidates),
                route=route,
            )
        )
        return "accepted" if accepted else "failed"


def _reason(route: str, choice: int | None, parse_route: str | None, scores: list[VisibleScore]) -> str:
    """One line: why this candidate (or none) was submitted."""
    if route == "visible":
        best = next(s for s in scores if s.number == choice)
        return f"candidate {choice}: most visible tests passed ({best.summary}); ties go to the earlier"
    if route == "judge":
        return f"candidate {choice}: the judge chose it (reply parsed {parse_route})"
    if route == "critique_pass":
        return f"the initial attempt: the critique passed it (verdict parsed {parse_route})"
    if route == "revision":
        return f"the revision: the critique asked for one (verdict parsed {parse_route or 'unparseable'})"
    if route == "no_budget":
        return "the initial attempt: the task's budget was spent before the critique or revision"
    if route == "fallback":
        return f"candidate {choice}: fallback, the first non-empty candidate (selection gave no choice: {parse_route})"
    return f"nothing submitted: no valid selection ({parse_route or 'every candidate empty'})"


def strategy_columns(arm: ArmConfig) -> dict[str, Any]:
    """The arms row's strategy, select_rule and fallback (NULL for an arm without a strategy)."""
    return {
        "strategy": arm.strategy,
        "select_rule": select_rule(arm.strategy_plan, arm.select),
        "fallback": None if arm.strategy is None else int(arm.fallback),
    }


async def run_strategy_task(host: RunHost, arm: ArmRuntime, task: Task, strategy: Strategy) -> str:
    """The task's outcome on the arm from its SUBMITTED stage: accepted, failed, or unfinished."""
    return await StrategyTask(host, arm, task, strategy).run()
