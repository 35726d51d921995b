"""The tiny requests preflight sends to one arm's endpoint, and what each observed.

Every request carries PROBE_MARKER in its first user message, asks for a few tokens at most,
and goes through the same `ChatClient` the run uses (so an over-long prompt is refused, or not,
exactly the way the run would see it). Every HTTP try is handed to `record` as it ends: the
ledger keeps it as a call of kind `preflight`. Nothing here raises: a probe that fails is an
outcome (its status and error), and a check built on it says `unknown`. The arm's probes spend
at most run.preflight_budget_tokens: a request (each of its tries) the budget left cannot pay
for at its estimated size is not sent, and its check says so.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import anyio

from agent.config import ArmConfig
from agent.endpoints.endpoint import CallTry, ChatClient, ContextOverflow, EndpointError
from agent.endpoints.provider import RateLimits
from agent.endpoints.scripted_models import PROBE_MARKER
from agent.endpoints.tokens import CHARS_PER_TOKEN, estimate_messages_tokens
from agent.preflight.checks import OVER_BUDGET, UNUSABLE, Observed, Outcome, choice_label
from agent.run.arms import settings_for
from agent.run.tools import TOOL_SCHEMAS

Record = Callable[[str, CallTry], Awaitable[None]]
SENTENCE = "The quick brown fox jumps over the lazy dog near the quiet river bank. "
CALIBRATION_SENTENCES = 20  # ~360 estimated tokens: fits any context worth running
PROBE_MAX_TOKENS = 8
TOOLS_MAX_TOKENS = 48
PAIRS = 3  # a median of three: one pair disturbed by a busy machine does not decide
MAX_PROBE_RETRIES = 1
# A tiny probe that has not answered in a minute will not: an endpoint that trickles keep-alive
# bytes must not hold the preflight for the arm's whole request_deadline_s (up to a day). The
# context probes, whose prompts are as long as the context, keep the arm's own deadline.
PROBE_DEADLINE_S = 60.0


def near_limit(limit: int) -> int:
    """Prompt tokens "just under" a context limit: what a full context must still accept."""
    return limit - max(64, limit // 32) - PROBE_MAX_TOKENS


def over_limit(limit: int) -> int:
    """Prompt tokens "clearly over" a context limit: what it must refuse."""
    return limit + max(256, limit // 4)


def _ask(what: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"{PROBE_MARKER}: {what}"}]


def filled(tokens: int, ratio: float, what: str = "the context probe; reply with OK") -> list[dict[str, Any]]:
    """A one-message prompt of about `tokens` real tokens (`ratio` real tokens per estimated one)."""
    base = _ask(f"{what}.\n")
    missing = tokens / ratio - estimate_messages_tokens(base)
    count = max(0, math.floor(missing * CHARS_PER_TOKEN / len(SENTENCE)))
    return _ask(f"{what}.\n" + SENTENCE * count)


class ProbesStopped(Exception):
    """The run was aborted while its preflight probed: the probes left are not sent."""


class Prober:
    """Probes one endpoint at one arm's settings; `record(probe, try)` sees every HTTP try."""

    def __init__(
        self,
        arm: ArmConfig,
        base_url: str,
        model: str,
        record: Record,
        budget: int,
        stop: Callable[[], bool] = lambda: False,
    ):
        self.arm, self.record, self.stop = arm, record, stop
        self.provides: set[str] = set()  # usage details any reply reported
        self.limits: RateLimits | None = None  # the last rate limits announced
        self.budget, self.spent = budget, 0  # tokens this arm's probes may spend, and have
        self.ratio = 1.0  # real tokens per estimated one, once calibrated
        self.settings = replace(
            settings_for(arm, base_url, model),
            max_tokens=PROBE_MAX_TOKENS,
            max_retries=min(arm.max_retries, MAX_PROBE_RETRIES),
            max_concurrency=1,
            request_deadline_s=min(arm.request_deadline_s, PROBE_DEADLINE_S),
        )

    async def ask(
        self, probe: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **changes: Any
    ) -> Outcome:
        """One request; its outcome (never raises). Sent only with as many tries as the budget
        left can pay for at this request's size (prompt estimate + max_tokens per try): else
        its outcome is OVER_BUDGET and nothing is sent."""
        if self.stop():  # the run is being aborted (Ctrl-C): no probe starts after it
            raise ProbesStopped(probe)
        client: ChatClient | None = None
        started = time.monotonic()
        settings = replace(self.settings, **changes)
        prompt = math.ceil(estimate_messages_tokens(messages, tools) * self.ratio)
        tries = self.tries_within_budget(prompt + settings.max_tokens)
        if isinstance(tries, Outcome):
            return tries

        async def on_try(t: CallTry) -> None:
            self.provides.update(t.details.reported())
            self.limits = t.limits or self.limits
            self.spent += t.prompt_tokens + t.completion_tokens
            await self.record(probe, t)

        try:
            client = ChatClient(replace(settings, max_retries=min(settings.max_retries, tries - 1)))
            done = await client.complete(messages, tools, on_try=on_try)
            return Outcome(
                "ok",
                model=done.model_reported,
                usage=done.usage_source,
                prompt_tokens=done.prompt_tokens,
                tool_calls=len(done.tool_calls),
                latency_ms=_ms(started),
            )
        except ContextOverflow as exc:
            return Outcome("context_overflow", _last_error(exc), latency_ms=_ms(started))
        except EndpointError as exc:
            status = exc.tries[-1].status if exc.tries else "error"
            return Outcome(status, _last_error(exc), latency_ms=_ms(started))
        except Exception as exc:  # noqa: BLE001 — a probe never ends the run: its check says unknown
            return Outcome(
                "error", f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}", latency_ms=_ms(started)
            )
        finally:
            if client is not None:
                with anyio.CancelScope(shield=True):
                    await client.aclose()

    def tries_within_budget(self, size: int) -> int | Outcome:
        """How many tries of `size` tokens the budget left pays for, or an OVER_BUDGET outcome."""
        tries = (self.budget - self.spent) // max(1, size)
        if tries >= 1:
            return tries
        left = max(0, self.budget - self.spent)
        return Outcome(OVER_BUDGET, f"~{size:,} tokens with {left:,} left of preflight_budget_tokens {self.budget:,}")

    async def listed(self) -> list[str]:
        client = ChatClient(self.settings)
        try:
            return await client.list_models()
        finally:
            await client.aclose()

    # -- the probes ---------------------------------------------------------------------------
    async def reply(self) -> Outcome:
        """A tiny request at the arm's own settings (stream or not): model reported, usage."""
        return await self.ask("reply", _ask("reply with the single word OK."))

    async def calibrate(self) -> float | None:
        """Real prompt tokens per estimated token, from a non-streamed request's reported usage."""
        messages = _ask("calibration; reply with OK.\n" + SENTENCE * CALIBRATION_SENTENCES)
        outcome = await self.ask("calibrate", messages, stream=False, max_tokens=1)
        if not outcome.ok or outcome.usage != "reported" or outcome.prompt_tokens <= 0:
            return None
        return outcome.prompt_tokens / estimate_messages_tokens(messages)

    async def prompt_of(self, probe: str, tokens: int, ratio: float) -> Outcome:
        """A prompt of about `tokens` real tokens, at the arm's stream setting (as the run sends);
        not even built when the budget cannot pay for it."""
        over = self.tries_within_budget(tokens + self.settings.max_tokens)
        if isinstance(over, Outcome):
            return over
        return await self.ask(probe, filled(tokens, ratio), request_deadline_s=self.arm.request_deadline_s)

    async def tools(self, choices: list[object]) -> list[tuple[str, Outcome]]:
        """The tools the run offers, with each tool_choice in turn until tool calls come back."""
        seen: list[tuple[str, Outcome]] = []
        messages = _ask("call the list_files tool now.")
        for choice in choices:
            outcome = await self.ask("tools", messages, TOOL_SCHEMAS, tool_choice=choice, max_tokens=TOOLS_MAX_TOKENS)
            seen.append((choice_label(choice), outcome))
            if outcome.ok and outcome.tool_calls:
                break
        return seen

    async def pairs(self) -> list[tuple[int, int, int]]:
        """(alone ms, faster ms, slower ms) of a call alone and then two at once, PAIRS times."""
        messages = _ask("count from 1 to 20, separated by spaces.")
        out: list[tuple[int, int, int]] = []
        for _ in range(PAIRS):
            solo = await self.ask("slots", messages, max_tokens=16)
            if not solo.ok:
                return out
            both: list[Outcome] = []

            async def one() -> None:
                both.append(await self.ask("slots", messages, max_tokens=16))  # noqa: B023 — awaited in this iteration

            async with anyio.create_task_group() as tg:
                tg.start_soon(one)
                tg.start_soon(one)
            if not all(o.ok for o in both):
                return out
            faster, slower = sorted(o.latency_ms for o in both)
            out.append((solo.latency_ms, faster, slower))
        return out


def tool_choices(configured: object) -> list[object]:
    """The configured tool_choice first, then "required", then forcing list_files."""
    choices: list[object] = [configured]
    for extra in ("required", {"type": "function", "function": {"name": "list_files"}}):
        if extra != configured:
            choices.append(extra)
    return choices


async def observe(
    prober: Prober, arm: ArmConfig, first: tuple[str, int], cap: int, shared: Observed | None
) -> Observed:
    """Run every probe an arm needs (reusing `shared`'s endpoint measurements when another arm
    already probed the same endpoint) and return what they saw. `first` is the suite's largest
    first request (task id, estimated tokens): when it + max_tokens passes `cap` it is never sent."""
    need_estimate = first[1]
    reply = await prober.reply()
    obs = Observed(reply=reply, first=first, cap=cap)
    if reply.status in ("read_timeout", "error", *UNUSABLE):
        obs.provides, obs.limits = prober.provides, prober.limits
        return obs  # nothing answers (or nothing is left to spend): every check says unknown, no more tries spent
    if shared is not None:
        obs.listed, obs.ratio, obs.near, obs.over, obs.pairs = (
            shared.listed,
            shared.ratio,
            shared.near,
            shared.over,
            shared.pairs,
        )
        obs.shared_with = shared.shared_with
    else:
        obs.listed = await prober.listed()
        obs.ratio = await prober.calibrate()
    ratio = prober.ratio = obs.ratio or 1.0
    obs.need = math.ceil(need_estimate * ratio) + arm.max_tokens
    limit = arm.context_limit
    # A first request the cap cannot pay for is never sent by the run, so not by preflight either;
    # the context line then says so, and no context probe is spent on a line it would not show.
    affordable = need_estimate + arm.max_tokens <= cap
    if limit is not None and shared is None and limit >= obs.need and affordable:
        obs.near = (near_limit(limit), await prober.prompt_of("context_near", near_limit(limit), ratio))
        if obs.near[1].ok:  # a server that refuses less has answered the question already
            obs.over = (over_limit(limit), await prober.prompt_of("context_over", over_limit(limit), ratio))
    if affordable and (limit is None or (obs.near is not None and obs.near[1].status == "context_overflow")):
        obs.need_probe = await prober.prompt_of("context_need", obs.need - PROBE_MAX_TOKENS, ratio)
    if arm.protocol == "tools":
        obs.tools = await prober.tools(tool_choices(arm.tool_choice))
    if shared is None:
        obs.pairs = await prober.pairs()
    obs.provides, obs.limits = prober.provides, prober.limits
    return obs


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _last_error(exc: EndpointError) -> str:
    return (exc.tries[-1].error if exc.tries and exc.tries[-1].error else str(exc))[:300]
