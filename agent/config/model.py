"""The run configuration's types: the frozen dataclasses a TOML config loads into, their field
bounds (`Annotated[..., Meta(...)]`, checked by msgspec in strict mode), the arm kinds and the
named constants every floor shares. Loading and checking is agent/config/load.py."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from msgspec import Meta

from agent import QuotabenchError
from agent.strategy_spec import Strategy, parse_strategy

SAMPLING = {"sampling": True}  # field metadata: the knob is recorded in arms.sampling_json


class ArmKind(StrEnum):
    """How an arm's endpoint comes to exist (agent/run/arms.py has a factory for each)."""

    OPENAI = "openai"  # an OpenAI-compatible endpoint that is already running (base_url)
    LLAMACPP = "llamacpp"  # a llama.cpp server quotabench starts and stops itself
    SCRIPTED = "scripted"  # the in-package scripted server, started on loopback for the run


ARM_KINDS: tuple[str, ...] = tuple(ArmKind)
PROTOCOLS = ("tools", "text")
PROMPT_TEMPLATE_VERSION = "v1"  # the agent loop's prompt (agent/run/loop.py), recorded in every run's manifest
PREFLIGHT_MODES = ("on", "force", "off")  # check and refuse / check, warn and run anyway / skip
MAX_CONCURRENCY = 64
MAX_CAP_TOKENS = 10**13
DEFAULT_COST_MARGIN = 0.05  # run.cost_margin: a cost ratio within 1 ± this is "the same cost"
DEFAULT_PREFLIGHT_BUDGET = 100_000  # tokens one arm's preflight probes may spend (run.preflight_budget_tokens)
# what a headless run does at an arm's auto-pause choice point (the live view asks instead)
AutoPausePolicy = Literal["continue", "stop-arm", "abort"]
AUTO_PAUSE_POLICIES: tuple[str, ...] = get_args(AutoPausePolicy)
# The keys of an arm's price table (docs/config.md): per token ($ per million) or self-hosted.
PRICE_KEYS = (
    "input_per_mtok",
    "output_per_mtok",
    "cached_input_per_mtok",
    "cache_write_per_mtok",
    "gpu_hour",
    "utilization",
)
_TOKEN_PRICES = ("input_per_mtok", "output_per_mtok", "cached_input_per_mtok", "cache_write_per_mtok")
PRICE_EXAMPLE = (
    "price = { input_per_mtok = 0.15, output_per_mtok = 0.60 } (or { gpu_hour = 1.6 } for a self-hosted one)"
)
_INT64 = 2**63 - 1
_DAY_S = 86_400.0


class ConfigError(QuotabenchError):
    pass


def price_problem(table: dict[str, Any]) -> tuple[str, str] | None:
    """(what is wrong, the fix) with a non-empty price table whose keys are all PRICE_KEYS, or
    None when a cost can be computed from it: per token (input and output, optionally the cache
    rates) or self-hosted (gpu_hour, optionally a utilization in (0, 1]), not both."""
    tokens = [k for k in _TOKEN_PRICES if k in table]
    if "gpu_hour" in table and tokens:
        return f"mixes gpu_hour with {tokens[0]}", "keep one kind: per-token prices or gpu_hour, e.g. " + PRICE_EXAMPLE
    if "gpu_hour" not in table:
        missing = [k for k in ("input_per_mtok", "output_per_mtok") if k not in table]
        if "utilization" in table:
            return "utilization without gpu_hour", "add gpu_hour = N ($ per GPU-hour), or remove utilization"
        if missing:
            return f"lacks {' and '.join(missing)}", "a per-token price needs both, e.g. " + PRICE_EXAMPLE
    util = table.get("utilization")
    if isinstance(util, (int, float)) and not 0 < util <= 1:
        return f"utilization = {util!r} is not in (0, 1]", "the GPU's busy share, e.g. utilization = 0.55"
    return None


@dataclass(frozen=True)
class Limits:
    max_turns: Annotated[int, Meta(ge=1, le=10_000)] = 20
    max_tokens_per_attempt: Annotated[int, Meta(ge=1, le=10**10)] = 60_000
    attempt_timeout_s: Annotated[float, Meta(gt=0, le=7 * _DAY_S)] = 600.0
    tool_output_chars: Annotated[int, Meta(ge=100, le=1_000_000)] = 6_000


@dataclass(frozen=True)
class LlamaCppSettings:
    model_path: str | None = None
    model_package: str | None = None
    n_ctx: Annotated[int, Meta(ge=256, le=1 << 21)] = 8192
    n_threads: Annotated[int, Meta(ge=1, le=1024)] = 2
    chat_format: str = "gemma"
    startup_timeout_s: Annotated[float, Meta(gt=0, le=_DAY_S)] = 120.0
    extra_args: tuple[str, ...] = ()
    gguf_sha256: Annotated[str, Meta(pattern=r"^[0-9a-f]{64}$")] | None = None  # pins the model file (preflight)


@dataclass(frozen=True)
class ScriptedSettings:
    """How the in-package scripted server that quotabench starts for a `scripted` arm misbehaves
    (agent/endpoints/scripted_server.py): what an endpoint says it is vs what it runs, for preflight tests
    and demos, and a session seed per start (replicate k plays session_seeds[k-1], cycling)."""

    report_model: str | None = None
    context_limit: Annotated[int, Meta(ge=16, le=1 << 24)] | None = None
    tool_calls: bool = True
    stream_usage: bool = True
    slots: Annotated[int, Meta(ge=1, le=MAX_CONCURRENCY)] | None = None
    delay_s: Annotated[float, Meta(ge=0, le=3600)] = 0.0
    session_seeds: tuple[Annotated[int, Meta(ge=0, le=_INT64)], ...] = ()


@dataclass(frozen=True, kw_only=True)
class EndpointKnobs:
    """How an arm talks to its endpoint, defined once: the config reads and bounds them here, the
    HTTP client takes them as agent.endpoints.chat.EndpointSettings (this plus where to send), and the
    ledger's arms.sampling_json holds the ones marked SAMPLING. docs/config.md lists each (a test
    checks). A new knob is one field here and one row there."""

    api_key_env: str | None = None  # the NAME of the environment variable holding the key
    temperature: Annotated[float, Meta(ge=0, le=2)] | None = field(default=0.0, metadata=SAMPLING)
    top_p: Annotated[float, Meta(ge=0, le=1)] | None = field(default=None, metadata=SAMPLING)
    max_tokens: Annotated[int, Meta(ge=1, le=10_000_000)] = field(default=1024, metadata=SAMPLING)
    seed: Annotated[int, Meta(ge=-_INT64 - 1, le=_INT64)] | None = field(default=None, metadata=SAMPLING)
    headers: dict[str, str] = field(default_factory=dict)
    request_timeout_s: Annotated[float, Meta(gt=0, le=_DAY_S)] = 120.0  # connect, and each read of the response
    request_deadline_s: Annotated[float, Meta(gt=0, le=_DAY_S)] = 600.0  # the whole try: connect, headers, body
    max_concurrency: Annotated[int, Meta(ge=1, le=MAX_CONCURRENCY)] = 1
    max_retries: Annotated[int, Meta(ge=0, le=100)] = 4  # retries after the first try
    backoff_base_s: Annotated[float, Meta(ge=0, le=3600)] = 0.5
    backoff_cap_s: Annotated[float, Meta(ge=0, le=_DAY_S)] = 20.0
    stream: bool = field(default=True, metadata=SAMPLING)
    pace: bool = True  # wait before a call the provider's announced rate limit cannot take (agent/endpoints/pacing.py)
    tool_choice: str | dict[str, Any] | None = field(default=None, metadata=SAMPLING)  # sent only with tools
    # A task's attempt 2, 3, ... sends seed + (attempt - 1), or this temperature: at temperature 0
    # a deterministic endpoint answers a byte-identical retry identically, so the retry buys nothing.
    retry_seed: bool = field(default=False, metadata=SAMPLING)
    retry_temperature: Annotated[float, Meta(ge=0, le=2)] | None = field(default=None, metadata=SAMPLING)

    def sampling(self) -> dict[str, Any]:
        """The knobs that shape the reply, as the ledger records them (arms.sampling_json)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.metadata.get("sampling")}


@dataclass(frozen=True)
class ArmConfig(EndpointKnobs):
    name: Annotated[str, Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")]
    kind: str = ArmKind.OPENAI
    protocol: str = "tools"
    base_url: Annotated[str, Meta(pattern=r"^https?://")] | None = None
    model: str = ""
    cap_tokens: Annotated[int, Meta(ge=1, le=MAX_CAP_TOKENS)] = 200_000
    max_attempts: Annotated[int, Meta(ge=1, le=100)] | None = None
    price: dict[str, Annotated[float, Meta(ge=0, le=1e9)]] = field(default_factory=dict)
    context_tokens: Annotated[int, Meta(ge=256, le=1 << 24)] | None = None  # the endpoint's context, if known
    llamacpp: LlamaCppSettings | None = None
    scripted: ScriptedSettings | None = None
    # the test-time protocol (agent/strategy_spec.py); None = no strategy (the retry loop)
    strategy: str | None = None
    select: str | None = None  # parallel@k only: visible (default) | judge
    fallback: bool = True  # when selection yields no choice, submit the first non-empty candidate

    @property
    def strategy_plan(self) -> Strategy | None:
        """The parsed strategy (checked on load), or None when the arm has none."""
        return None if self.strategy is None else parse_strategy(self.strategy)

    @property
    def context_limit(self) -> int | None:
        """The context window the endpoint should have: n_ctx of a llama.cpp arm, else context_tokens."""
        return self.llamacpp.n_ctx if self.llamacpp is not None else self.context_tokens


@dataclass(frozen=True)
class ValidateSettings:
    """`[validate]`: how `quotabench validate --config FILE` scores the hidden tests with mutants,
    and where a run looks for the cached scores it records in its ledger."""

    mutants: bool = False  # validate --config scores mutants instead of the gate checks
    weak_below: Annotated[float, Meta(gt=0, le=1)] = 0.8  # a task killing fewer of its mutants is weak
    max_mutants: Annotated[int, Meta(ge=1, le=10_000)] = 40  # per task, an even share of each kind
    cache_dir: Path | None = None  # default ~/.cache/quotabench/mutants; relative to the config's folder


@dataclass(frozen=True)
class RunConfig:
    path: Path
    suites: tuple[Path, ...]
    arms: tuple[ArmConfig, ...]
    max_attempts: Annotated[int, Meta(ge=1, le=100)] = 2
    tasks: tuple[str, ...] = ()
    db: Path = Path("quotabench.sqlite")
    limits: Limits = field(default_factory=Limits)
    auto_pause_share: Annotated[float, Meta(gt=0, le=1)] = 0.9
    auto_pause_policy: AutoPausePolicy = "continue"  # headless: continue (censor at the cap), stop-arm, abort
    prompt_template: str = PROMPT_TEMPLATE_VERSION  # checked: the loop has one template
    require_sandbox: bool = False  # refuse to start when the bubblewrap sandbox is unavailable
    stop_when_decided: bool = False  # stop both arms once the always-valid paired test decides
    decision_alpha: Annotated[float, Meta(gt=0, le=0.2)] = 0.05
    task_order_seed: Annotated[int, Meta(ge=0, le=_INT64)] = 1  # stop_when_decided runs: the seeded task shuffle
    executor: str = "local"  # where sandboxed commands run: local | ray (verifiers/executors.py)
    ray_address: str | None = None  # executor = "ray": "auto", "ray://host:10001", or unset for a local Ray
    preflight: str = "on"  # PREFLIGHT_MODES; --no-preflight / --force override it
    preflight_budget_tokens: Annotated[int, Meta(ge=1_000, le=MAX_CAP_TOKENS)] = DEFAULT_PREFLIGHT_BUDGET
    cost_margin: Annotated[float, Meta(gt=0, le=0.5)] = DEFAULT_COST_MARGIN
    validate: ValidateSettings = field(default_factory=ValidateSettings)

    def arm(self, name: str) -> ArmConfig:
        return next(a for a in self.arms if a.name == name)
