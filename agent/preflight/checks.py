"""What preflight concludes from what the probes observed: one `Check` per line of an arm's table.

Pure functions of the arm's config and an `Observed` record (filled by probes.py), so every
rule can be tested without a server. A check is ok, differs or unknown; a difference that would
invalidate the run (a held constant nobody measures is not held) is marked
`invalidating`: a different model than configured, a context smaller than the suite's largest
first request, a first request the arm's cap cannot pay for, an endpoint that failed every probe,
or a tools arm whose endpoint never returns native tool calls.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.config import ArmConfig
from agent.endpoints.provider import RateLimits

STATUSES = ("ok", "differs", "unknown")
# A model name the endpoint reports for the configured one when it is a dated or versioned
# snapshot of it (OpenAI answers "gpt-4.1-mini" with "gpt-4.1-mini-2025-04-14").
_SNAPSHOT = re.compile(r"^-(\d{4}-?\d{2}-?\d{2}|\d{4}|v?\d+(\.\d+)*)$")


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # ok | differs | unknown
    expected: str  # what the config says
    observed: str  # what the endpoint did
    fix: str = ""  # what to change; "" when nothing needs to
    invalidating: bool = False  # the run would not measure what the config says

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.name,
            "status": self.status,
            "expected": self.expected,
            "observed": self.observed,
            "fix": self.fix,
            "invalidating": self.invalidating,
        }


@dataclass(frozen=True)
class Outcome:
    """How one probe request ended: `ok`, `context_overflow`, or the failing try's status."""

    status: str
    error: str | None = None
    model: str | None = None
    usage: str = "none"  # usage_source of the successful try
    prompt_tokens: int = 0
    tool_calls: int = 0
    latency_ms: int = 0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class Observed:
    """What the probes of one arm saw (None: that probe did not run)."""

    reply: Outcome | None = None  # a tiny request at the arm's own settings
    listed: list[str] = field(default_factory=list)  # GET /models
    ratio: float | None = None  # real tokens per estimated token (None: not calibrated)
    need: int | None = None  # real tokens of the suite's largest first request + max_tokens
    need_probe: Outcome | None = None  # a prompt of `need` tokens
    near: tuple[int, Outcome] | None = None  # (tokens, outcome) just under the configured limit
    over: tuple[int, Outcome] | None = None  # (tokens, outcome) clearly over it
    tools: list[tuple[str, Outcome]] = field(default_factory=list)  # (tool_choice label, outcome), in order tried
    pairs: list[tuple[int, int, int]] = field(default_factory=list)  # (solo ms, faster ms, slower ms) of two at once
    shared_with: str | None = None  # the arm whose endpoint probes were reused
    server_argv: list[str] | None = None  # the llama.cpp server's command line, as the process runs it
    provides: set[str] = field(default_factory=set)  # usage details any reply reported (UsageDetails.reported)
    limits: RateLimits | None = None  # the last rate limits a response announced
    first: tuple[str, int] | None = None  # (task id, estimated tokens) of the suite's largest first request
    cap: int | None = None  # the arm's cap_tokens: the first request + max_tokens must fit it


def _int(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


def same_model(expected: str, reported: str) -> bool:
    """The reported model is the configured one, or a dated/versioned snapshot of it."""
    if reported == expected:
        return True
    return reported.startswith(expected) and bool(_SNAPSHOT.match(reported[len(expected) :]))


def _listing(model: str, listed: list[str]) -> str:
    """A note when /models does not list the model (an endpoint that lists it says nothing new)."""
    if not listed or model in listed:
        return ""
    return f"; /models does not list it (lists {', '.join(listed[:3])}{' ...' if len(listed) > 3 else ''})"


_UNKNOWN = (
    "not found",
    "does not exist",
    "no such",
    "unknown model",
    "invalid model",
    "not available",
    "not a valid model",
    "model_not_found",
)


def unknown_model(error: str) -> bool:
    """A refusal that says the model does not exist here (not one that merely mentions "model",
    such as "max_tokens is not supported with this model")."""
    text = error.lower()
    return text.startswith("http 404") or ("model" in text and any(p in text for p in _UNKNOWN))


# A probe that ends so (after the client's own retries) means the run would measure nothing:
# no server at base_url, or one that does not speak the chat protocol. One timeout, 5xx or 429
# may pass, and stays unknown (every probe failing so is DEAD below).
UNUSABLE = {
    "connect_error": "nothing answers at base_url: check it and that the server is up",
    "quota_exhausted": "the provider's quota or credits are spent: top up the account, then run again",
    "malformed_json": "the replies are not OpenAI chat completions: check base_url (the /v1 path) and the server",
}


# A probe that failed so says the endpoint is down or broken, not that the model is slow or
# rate-limited; when every probe failed so, the run would record only harness errors.
DEAD = {"http_5xx", "read_timeout", "stream_cut", "empty_response"}


def probe_outcomes(obs: Observed) -> list[Outcome]:
    """Every probe request's outcome that preflight kept (reply, context and tool-call probes)."""
    sized = [p[1] for p in (obs.near, obs.over) if p is not None]
    return [o for o in (obs.reply, obs.need_probe) if o is not None] + sized + [o for _, o in obs.tools]


def dead_endpoint(obs: Observed) -> str | None:
    """What every probe met, when every one failed with a 5xx, a timeout or an empty reply."""
    outcomes = [o for o in probe_outcomes(obs) if o.status != "over_budget"]
    if not outcomes or any(o.status not in DEAD for o in outcomes):
        return None
    # One failed probe may be a hiccup, unless it timed out: then probing stops (probes.observe),
    # since an endpoint that did not answer a tiny request in its deadline will not answer the run's.
    if len(outcomes) < 2 and outcomes[0].status != "read_timeout":
        return None
    seen = sorted({o.error or o.status for o in outcomes})
    n = len(outcomes)
    return f"{n} of {n} probe{'s' if n > 1 else ''} failed ({'; '.join(seen[:2])}{'; …' if len(seen) > 2 else ''})"


def model_check(arm: ArmConfig, model: str, obs: Observed, gguf_path: str | None = None) -> Check:
    """The model the endpoint reports (or, for a llama.cpp server, the file it lists) vs the config."""
    if gguf_path is not None:  # llama-cpp-python echoes the request's model: what it loaded is what it lists
        if not obs.listed:
            return Check("model", "unknown", gguf_path, "the server lists no model", "check the server log")
        if gguf_path in obs.listed:
            return Check("model", "ok", Path(gguf_path).name, "the server lists the file it was started with")
        return Check(
            "model",
            "differs",
            gguf_path,
            f"the server lists {', '.join(obs.listed[:3])}",
            "the server runs another model file: check model_path / model_package",
            invalidating=True,
        )
    listed = _listing(model, obs.listed)
    reply = obs.reply
    if reply is not None and reply.status in UNUSABLE:  # every call of the run would end the same way
        return Check(
            "model",
            "differs",
            model,
            f"no usable reply ({reply.error}){listed}",
            UNUSABLE[reply.status],
            invalidating=True,
        )
    dead = dead_endpoint(obs)
    if dead is not None:
        return Check(
            "model",
            "differs",
            model,
            f"no reply: {dead}{listed}",
            "the endpoint fails every request: check its server (log, base_url), then run again",
            invalidating=True,
        )
    if reply is None or (not reply.ok and reply.status != "http_4xx"):
        why = reply.error if reply is not None else "not probed"
        return Check("model", "unknown", model, f"no reply ({why}){listed}", "check base_url and that the server is up")
    if not reply.ok:  # a 4xx: does the endpoint know this model at all?
        if unknown_model(reply.error or ""):
            return Check(
                "model",
                "differs",
                model,
                f"refused: {reply.error}{listed}",
                "set model to one the endpoint serves",
                invalidating=True,
            )
        return Check(
            "model", "unknown", model, f"refused: {reply.error}{listed}", "check the api key and request settings"
        )
    if not reply.model:
        return Check("model", "unknown", model, f"replies name no model{listed}")
    if same_model(model, reply.model):
        note = "" if reply.model == model else " (a snapshot of it)"
        return Check("model", "ok", model, f"reports {reply.model}{note}{listed}")
    return Check(
        "model",
        "differs",
        model,
        f"reports {reply.model}{listed}",
        "the endpoint runs another model: fix model or base_url (or the server)",
        invalidating=True,
    )


OVER_BUDGET = "over_budget"  # a probe not sent: it would pass run.preflight_budget_tokens
BUDGET_FIX = "raise [run] preflight_budget_tokens to probe it"


def _outcome_text(tokens: int, outcome: Outcome, where: str) -> str:
    if outcome.status == OVER_BUDGET:
        return f"{tokens:,} ({where}): not sent, {outcome.error}"
    if outcome.ok:  # the endpoint's own count when it reported one, else the size aimed at
        measured = outcome.prompt_tokens if outcome.usage == "reported" else tokens
        return f"accepted {measured:,} ({where})"
    if outcome.status == "context_overflow":
        return f"refused {tokens:,} as too long ({where})"
    return f"{tokens:,} ({where}): {outcome.status}, {outcome.error or 'no detail'}"


def context_check(arm: ArmConfig, obs: Observed) -> Check:
    """The context the endpoint accepts vs the configured limit and the suite's largest first request.

    Just under the limit must be accepted; clearly over it must be refused as a context overflow
    (what the run recognises); a context below `need` invalidates the run."""
    limit, need = arm.context_limit, obs.need
    expected = f"{_int(limit)} tokens" if limit else "not configured"
    estimated = "" if obs.ratio is not None else "; token counts estimated (no usage reported)"
    unaffordable = first_over_cap(arm, obs)
    if unaffordable is not None:
        return unaffordable
    if limit is not None and need is not None and limit < need:
        return Check(
            "context",
            "differs",
            expected,
            f"below the suite's largest first request + max_tokens ({need:,})",
            "raise n_ctx / context_tokens, or lower max_tokens",
            True,
        )
    holds = obs.need_probe is not None and obs.need_probe.ok
    if obs.need_probe is not None and obs.need_probe.status == "context_overflow":
        return Check(
            "context",
            "differs",
            expected,
            f"refused the suite's largest first request + max_tokens ({need:,} tokens){estimated}",
            "the server's context is smaller than the run needs: restart it "
            "with a larger one (or fix n_ctx / context_tokens)",
            invalidating=True,
        )
    if obs.need_probe is not None and obs.need_probe.status == OVER_BUDGET:
        return Check(
            "context",
            "unknown",
            expected,
            _outcome_text(need or 0, obs.need_probe, "the suite's largest first request + max_tokens"),
            BUDGET_FIX,
        )
    if limit is None:
        if holds:
            return Check(
                "context",
                "unknown",
                expected,
                f"holds the suite's largest first request + max_tokens ({need:,}){estimated}",
                "add context_tokens = N to check the limit itself",
            )
        return Check("context", "unknown", expected, "not probed", "add context_tokens = N to check it")
    if obs.near is None:
        return Check("context", "unknown", expected, "not probed (no reply to the first probe)")
    near_n, near = obs.near
    if near.status == "context_overflow":
        seen = _outcome_text(near_n, near, "just under the limit")
        seen += f"; holds what the suite needs ({need:,})" if holds else ""
        return Check(
            "context",
            "differs",
            expected,
            seen + estimated,
            "the server runs a smaller context than "
            "configured: set n_ctx / context_tokens to what it runs, or restart it with the configured one",
        )
    if not near.ok or obs.over is None:
        return Check(
            "context",
            "unknown",
            expected,
            _outcome_text(near_n, near, "just under the limit") + estimated,
            BUDGET_FIX
            if near.status == OVER_BUDGET
            else "the near-limit probe failed for another reason: see the error",
        )
    over_n, over = obs.over
    seen = f"{_outcome_text(near_n, near, 'just under')}; {_outcome_text(over_n, over, 'clearly over')}{estimated}"
    if over.ok:
        return Check(
            "context",
            "differs",
            expected,
            seen,
            "the server accepts more than configured: set n_ctx / "
            "context_tokens to what it runs (the ledger would record the wrong limit)",
        )
    if over.status != "context_overflow":
        return Check(
            "context",
            "differs",
            expected,
            seen,
            "an over-long prompt is not refused as a context overflow: "
            "the run would retry it and end the attempt as a harness error",
        )
    return Check("context", "ok", expected, seen)


def first_over_cap(arm: ArmConfig, obs: Observed) -> Check | None:
    """A context line that invalidates the run when the suite's largest first request + max_tokens
    passes the arm's cap, else None. Checked locally, with the estimate a call reserves, and never
    sent: the run would spend the cap on the other tasks and then be censored at that one's first
    call, a run that cannot finish its suite (`run --force` runs it anyway)."""
    if obs.first is None or obs.cap is None or obs.first[1] + arm.max_tokens <= obs.cap:
        return None
    task, tokens = obs.first
    expected = f"{_int(arm.context_limit)} tokens" if arm.context_limit else "not configured"
    return Check(
        "context",
        "differs",
        expected,
        f"the suite's largest first request (task {task}, ~{tokens:,} tokens) + max_tokens {arm.max_tokens:,} "
        f"passes cap_tokens {obs.cap:,}: the arm will be censored at that task's first call (not sent)",
        "shorten that task's prompt, leave it out (run.tasks), or raise cap_tokens",
        invalidating=True,
    )


def usage_check(arm: ArmConfig, obs: Observed) -> Check:
    if not arm.stream:
        return Check("stream usage", "ok", "stream = false", "not used (the run does not stream)")
    reply = obs.reply
    if reply is None or not reply.ok:
        return Check("stream usage", "unknown", "stream = true", "no reply to the streamed probe")
    if reply.usage == "reported":
        return Check("stream usage", "ok", "stream = true", "usage comes in the stream")
    return Check(
        "stream usage",
        "differs",
        "stream = true",
        "no usage in the stream: tokens will be estimated",
        "set stream = false for reported counts, or accept estimated ones",
    )


def choice_label(choice: object) -> str:
    if choice is None:
        return "auto (not sent)"
    if isinstance(choice, dict):
        return f"function {(choice.get('function') or {}).get('name', '?')}"
    return str(choice)


def _not_about_tools(outcome: Outcome) -> bool:
    """A 4xx that refuses the caller or the model, whatever the request held."""
    return (outcome.error or "").lower().startswith(("http 401", "http 403", "http 404"))


def tools_check(arm: ArmConfig, obs: Observed) -> Check:
    expected = f"tool_choice {choice_label(arm.tool_choice)}"
    if arm.protocol != "tools":
        return Check("tool calls", "ok", "protocol = text", "not used (text action protocol)")
    if not obs.tools:
        return Check("tool calls", "unknown", expected, "not probed")
    # Only a refusal of the tool request itself says the endpoint lacks tool calls: when the plain
    # probe failed too (a 401, an unknown model), or the tools did not fit the context, the
    # failure is that one, and "use protocol = text" would be the wrong advice.
    if obs.reply is not None and not obs.reply.ok:
        return Check("tool calls", "unknown", expected, f"not judged: the plain probe failed too ({obs.reply.error})")
    if all(o.status == "context_overflow" for _, o in obs.tools):
        return Check(
            "tool calls",
            "unknown",
            expected,
            "not judged: the tool probes did not fit the context",
            "give the server a larger context (or set context_tokens to what it has)",
        )
    answered = [(label, o) for label, o in obs.tools if o.ok or (o.status == "http_4xx" and not _not_about_tools(o))]
    if not answered:
        return Check("tool calls", "unknown", expected, f"no reply ({obs.tools[-1][1].error})")
    working = [label for label, o in obs.tools if o.ok and o.tool_calls]
    tried = ", ".join(label for label, _ in obs.tools)
    if working and working[0] == obs.tools[0][0]:
        return Check("tool calls", "ok", expected, f"tool calls come back with {working[0]}")
    if working:
        return Check(
            "tool calls",
            "differs",
            expected,
            f"none with {obs.tools[0][0]}; they come back with {working[0]}",
            f"set tool_choice to {working[0]} (or keep it: the run then measures a model that answers in prose)",
        )
    return Check(
        "tool calls",
        "differs",
        expected,
        f"never returned native tool calls (tried {tried})",
        'use protocol = "text" for this endpoint',
        invalidating=True,
    )
