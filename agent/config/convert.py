"""TOML values into the config dataclasses: msgspec in strict mode over the fields, and each
problem turned into one ConfigError line naming the file, the key, the value and the fix."""

from __future__ import annotations

import json
import re
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any, TypeVar, cast

import msgspec

from agent.config.model import AUTO_PAUSE_POLICIES, MAX_CONCURRENCY, ConfigError

T = TypeVar("T")

# How to write a key right, where "e.g. key = <default>" would not say it.
HINTS = {
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


def fail(path: Path, key: str, problem: str, fix: str) -> ConfigError:
    return ConfigError(f"config {path}: {key}: {problem} — {fix}")


def toml(value: Any) -> str:
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


def convert(cls: type[T], data: dict[str, Any], source: Path, prefix: str, **built: Any) -> T:
    """`cls(**data)` checked by msgspec (types and bounds of its fields, strict), else ConfigError.
    The fields in `built` come from elsewhere (the file's path, its [[arms]]): not keys of `data`."""
    known = {f.name: f for f in fields(cast(Any, cls)) if f.name not in built}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise fail(source, f"{prefix}{unknown[0]}", "unknown key", f"valid keys are {', '.join(sorted(known))}")
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
        fix = HINTS.get(name) or (
            f"e.g. {name} = {toml(default)}" if default not in (None, "", ()) else "see docs/config.md"
        )
        shown = "" if value is None else f" = {toml(value)[:80]}"
        key = prefix + ".".join(key_parts).replace(".[", "[")
        raise fail(source, f"{key}{shown}", problem.replace("`", ""), fix) from None


def table(value: Any, path: Path, key: str, example: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise fail(path, key, f"{toml(value)[:80]} is not a table", f"write it as a table, e.g. {example}")
    return dict(value)
