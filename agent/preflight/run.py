"""Preflight every arm of a run (or of `quotabench preflight`): probe, conclude, record, print.

Arms that share an endpoint (two arms on one llama.cpp server) probe its model list, token
calibration, context and parallel slots once. Each arm gets a `preflights` row and its HTTP
tries are calls rows of kind `preflight`, written as each try ends: never charged to the arm's
cap and never part of an attempt's tokens.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from agent.config import DEFAULT_PREFLIGHT_BUDGET, RunConfig
from agent.endpoints.endpoint import CallTry
from agent.endpoints.llamacpp import configured_flags, process_argv
from agent.ledger.attempt_rows import preflight_call
from agent.ledger.rows import preflight_ended, preflight_started
from agent.ledger.store import new_id, to_json
from agent.ledger.writer import AsyncLedger
from agent.preflight.checks import (
    Check,
    Observed,
    context_check,
    model_check,
    tools_check,
    usage_check,
)
from agent.preflight.probes import Prober, ProbesStopped, observe
from agent.preflight.provider_check import provider_check
from agent.preflight.server_checks import effective_flags, flags_check, gguf_check, slots_check
from agent.run.arms import ArmRuntime, open_arm
from agent.run.first_request import largest
from verifiers.tasks import Task

FORCE_HINT = "`quotabench run --force` runs anyway"


@dataclass
class ArmPreflight:
    """One arm's preflight: its checks and what the probes cost."""

    arm: str
    kind: str
    protocol: str
    endpoint_url: str
    model: str
    checks: list[Check] = field(default_factory=list)
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    duration_ms: int = 0
    shared_with: str | None = None
    budget: int = DEFAULT_PREFLIGHT_BUDGET  # tokens the probes may spend (run.preflight_budget_tokens)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def invalidating(self) -> list[Check]:
        return [c for c in self.checks if c.invalidating]

    @property
    def verdict(self) -> str:
        if self.invalidating:
            return "invalidating"
        return "differs" if any(c.status == "differs" for c in self.checks) else "ok"


def checks_for(arm: ArmRuntime, obs: Observed) -> list[Check]:
    cfg, constants = arm.config, arm.constants
    llama = cfg.llamacpp if cfg.kind == "llamacpp" else None
    listed_as = None
    if llama is not None:  # the server lists its file's path, or the alias extra_args gave it
        listed_as = effective_flags(constants.get("server_args") or []).get("--model_alias", constants.get("gguf_path"))
    checks = [
        model_check(cfg, arm.client.settings.model, obs, listed_as),
        context_check(cfg, obs),
        usage_check(cfg, obs),
        tools_check(cfg, obs),
        slots_check(cfg, obs),
        provider_check(obs),
    ]
    if llama is not None:
        pid = constants.get("server_pid")
        checks.append(gguf_check(constants, llama.gguf_sha256))
        checks.append(
            flags_check(configured_flags(constants.get("gguf_path", ""), llama), process_argv(pid) if pid else None)
        )
    return checks


async def preflight_arms(
    arms: list[ArmRuntime],
    tasks: list[Task],
    ledger: AsyncLedger,
    run_id: str | None,
    *,
    forced: bool = False,
    log: Callable[[str, str], None] | None = None,
    stop: Callable[[], bool] = lambda: False,
    budget: int = DEFAULT_PREFLIGHT_BUDGET,
) -> list[ArmPreflight]:
    """Preflight each arm in turn (until `stop()` says the run is being aborted), each arm's
    probes spending at most `budget` tokens; `log(arm, line)` gets each arm's table as soon as
    it is done."""
    shared: dict[tuple[Any, ...], Observed] = {}
    results = []
    for arm in arms:
        if stop():
            break
        result = await _preflight_arm(arm, tasks, ledger, run_id, forced, shared, budget, stop)
        results.append(result)
        if log is not None:
            for line in table_lines(result):
                log(arm.name, line)
    return results


async def _preflight_arm(
    arm: ArmRuntime,
    tasks: list[Task],
    ledger: AsyncLedger,
    run_id: str | None,
    forced: bool,
    shared: dict[tuple[Any, ...], Observed],
    budget: int,
    stop: Callable[[], bool] = lambda: False,
) -> ArmPreflight:
    cfg, model = arm.config, arm.client.settings.model
    result = ArmPreflight(arm.name, cfg.kind, cfg.protocol, arm.endpoint_url, model, budget=budget)
    preflight_id, started = new_id(), time.monotonic()
    await ledger.write(preflight_started(preflight_id, run_id, arm.name, arm.endpoint_url, model, forced))

    async def record(probe: str, t: CallTry) -> None:
        result.calls += 1
        result.prompt_tokens += t.prompt_tokens
        result.completion_tokens += t.completion_tokens
        await ledger.write(preflight_call(run_id, arm.name, preflight_id, probe, arm.session_id, t))

    key = (arm.endpoint_url, model, cfg.context_limit)
    verdict = "stopped"  # what the row says when a stop-now cancels the probes
    try:
        first = largest(tasks, cfg.protocol)
        obs = await observe(
            Prober(cfg, arm.endpoint_url, model, record, budget, stop),
            cfg,
            (first.task_id, first.tokens),
            arm.quota.cap,
            shared.get(key),
        )
        if key not in shared and obs.reply is not None and obs.reply.ok:
            obs.shared_with = arm.name
            shared[key] = obs
        result.shared_with = obs.shared_with if obs.shared_with != arm.name else None
        result.checks = checks_for(arm, obs)
        verdict = result.verdict
    except ProbesStopped:
        pass  # the row says "stopped"; the arm's checks are left unknown
    finally:
        result.duration_ms = int((time.monotonic() - started) * 1000)
        with anyio.CancelScope(shield=True):
            ended = preflight_ended(
                preflight_id,
                verdict,
                to_json([c.to_dict() for c in result.checks]),
                prompt_tokens=result.prompt_tokens,
                completion_tokens=result.completion_tokens,
                calls=result.calls,
                duration_ms=result.duration_ms,
            )
            await ledger.write(ended)
    return result


def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return ["  " + "  ".join([c.ljust(w) for c, w in zip(r, widths)] + [r[-1]]).rstrip() for r in rows]


def table_lines(result: ArmPreflight) -> list[str]:
    """The arm's table: one line per check (ok / differs / unknown), what to change, the cost."""
    head = (
        f"preflight arm {result.arm} ({result.kind}, {result.protocol}) at {result.endpoint_url}, model {result.model}:"
    )
    rows = [["check", "status", "config", "endpoint", "what to change"]]
    for c in result.checks:
        status = c.status + ("!" if c.invalidating else "")
        rows.append([c.name, status, c.expected, c.observed, c.fix])
    reuse = f"; endpoint measurements shared with arm {result.shared_with}" if result.shared_with else ""
    foot = (
        f"  {result.calls} calls, {result.tokens:,} tokens ({result.prompt_tokens:,} prompt + "
        f"{result.completion_tokens:,} completion) of a {result.budget:,}-token budget, not charged to the cap, "
        f"{result.duration_ms / 1000:.1f} s"
        f"{reuse}; verdict: {result.verdict}" + (" (! = invalidates the run)" if result.invalidating else "")
    )
    return [head, *_aligned(rows), foot]


REFUSED = "preflight refused the run"
WOULD_REFUSE = "preflight found what would invalidate a run"


def refusal_line(invalid: list[tuple[str, Check]], lead: str = REFUSED) -> str | None:
    """One line naming every invalidating difference and its fix, or None when there is none."""
    if not invalid:
        return None
    parts = [f"arm {arm} {c.name}: {c.observed} — {c.fix}" for arm, c in invalid]
    return f"{lead}: {'; '.join(parts)} — {FORCE_HINT}"


def refusal(results: list[ArmPreflight], lead: str = REFUSED) -> str | None:
    return refusal_line([(r.arm, c) for r in results for c in r.invalidating], lead)


def _recorded_checks(rows: list[dict[str, Any]]) -> list[tuple[str, Check]]:
    """(arm, check) for every check in a run's `preflights` rows, in order."""
    out = []
    for row in rows:
        for c in json.loads(row.get("checks_json") or "[]"):
            check = Check(c["check"], c["status"], c["expected"], c["observed"], c["fix"], bool(c.get("invalidating")))
            out.append((row["arm"], check))
    return out


def recorded_refusal(rows: list[dict[str, Any]]) -> str | None:
    """The refusal line from a run's `preflights` rows (what the CLI prints after a refused run)."""
    return refusal_line([(arm, c) for arm, c in _recorded_checks(rows) if c.invalidating])


def recorded_differences(rows: list[dict[str, Any]]) -> list[str]:
    """Every check that differed, one line each (`!` when it invalidates the run), from a run's
    `preflights` rows; what a user needs after the live view's log has scrolled away."""
    lines = [
        f"preflight arm {arm} {c.name} differs{'!' if c.invalidating else ''}: {c.observed} — {c.fix}"
        for arm, c in _recorded_checks(rows)
        if c.status == "differs"
    ]
    return lines or ["preflight: no check differed"]


def spent_line(results: list[ArmPreflight]) -> str:
    calls = sum(r.calls for r in results)
    tokens = sum(r.tokens for r in results)
    budget = f"; budget {results[0].budget:,} tokens per arm (run.preflight_budget_tokens)" if results else ""
    return (
        f"preflight spent {tokens:,} tokens in {calls} calls (recorded as calls of kind 'preflight', "
        f"not charged to any cap{budget})"
    )


async def preflight_standalone(
    config: RunConfig, tasks: list[Task], ledger: AsyncLedger, log: Callable[[str, str], None]
) -> list[ArmPreflight]:
    """`quotabench preflight CONFIG`: start the arms' endpoints as a run would, probe, stop them."""
    async with contextlib.AsyncExitStack() as stack:
        arms = [
            await stack.enter_async_context(open_arm(a, [Path(s) for s in config.suites], a.cap_tokens))
            for a in config.arms
        ]
        return await preflight_arms(arms, tasks, ledger, None, log=log, budget=config.preflight_budget_tokens)


async def preflight_for_run(
    mode: str,
    arms: list[ArmRuntime],
    tasks: list[Task],
    ledger: AsyncLedger,
    run_id: str,
    *,
    log: Callable[..., None],
    stop: Callable[[], bool],
    budget: int = DEFAULT_PREFLIGHT_BUDGET,
) -> str | None:
    """The checks at the start of a run (run.preflight: on / force / off), logged as they come;
    the one-line refusal when the run must not start, else None (`force` logs it and runs)."""
    if mode == "off":
        return None
    log(
        f"tiny requests to each endpoint, compared with its config (not charged to the caps; at most {budget:,} "
        "tokens per arm)",
        "preflight",
        None,
    )
    results = await preflight_arms(
        arms,
        tasks,
        ledger,
        run_id,
        forced=mode == "force",
        log=lambda arm, line: log(line, "preflight", arm),
        stop=stop,
        budget=budget,
    )
    log(spent_line(results), "preflight", None)
    line = refusal(results)
    if line is not None and mode == "force":
        log(f"--force: running anyway; {line}", "warning", None, "preflight_forced")
        return None
    if line is not None:
        log(line, "error", None)
    return line
