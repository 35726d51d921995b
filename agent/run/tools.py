"""The agent's tools, confined to one attempt's workspace copy.

Every path is resolved inside the workspace: absolute paths, `..` and symlinks that escape
are refused with an error the model sees. A failing call raises ToolError; the loop turns it
into an error message for the model and counts it. Whatever the model sends — a NUL byte, a
300-character name, a path through a file, a lone surrogate, arguments nested thousands deep,
a 100 MB file — is a ToolError, never an exception that leaves the attempt (mini-swe-agent's
"the model sees it and goes on" kind).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from agent.tool_names import Tool
from verifiers.tasks import relative_files

R = TypeVar("R")
MAX_READ_CHARS = 20_000
MAX_WRITE_CHARS = 1_000_000  # one file's content (or edit text) per call
MAX_ARGUMENT_CHARS = 2_000_000  # one call's raw arguments
MAX_PATH_CHARS = 1_024
MAX_NAME_BYTES = 255  # one path component (Linux NAME_MAX)


def _schema(tool: Tool, description: str, **properties: str) -> dict[str, Any]:
    """A tool as the chat API declares it; `properties` maps each argument to "required" or "optional"."""
    return {
        "type": "function",
        "function": {
            "name": str(tool),
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {name: {"type": "string"} for name in properties},
                "required": [name for name, need in properties.items() if need == "required"],
            },
        },
    }


TOOL_SCHEMAS: list[dict[str, Any]] = [
    _schema(Tool.LIST_FILES, "List every file in the workspace."),
    _schema(Tool.READ_FILE, "Read a file of the workspace.", path="required"),
    _schema(
        Tool.WRITE_FILE, "Create or overwrite a file with the given full content.", path="required", content="required"
    ),
    _schema(
        Tool.EDIT_FILE,
        "Replace the exact text `old` (must occur exactly once) with `new`.",
        path="required",
        old="required",
        new="required",
    ),
    _schema(Tool.RUN_TESTS, "Run the task's visible tests and return their output."),
    _schema(Tool.FINISH, "Declare the task done.", summary="optional"),
]
REQUIRED_ARGS: dict[str, tuple[str, ...]] = {
    s["function"]["name"]: tuple(s["function"]["parameters"]["required"]) for s in TOOL_SCHEMAS
}


class ToolError(Exception):
    """A tool call the model got wrong; the message is shown to the model."""


@dataclass(frozen=True)
class ToolOutcome:
    tool: str
    ok: bool
    output: str
    path: str | None = None
    malformed: bool = False  # bad JSON, unknown tool, missing argument, old text not found


def parse_arguments(tool: str, raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """Arguments as a dict, or ToolError naming what is wrong with them."""
    if tool not in REQUIRED_ARGS:
        raise ToolError(f"unknown tool {tool!r}; tools are {', '.join(REQUIRED_ARGS)}")
    if isinstance(raw, dict):
        args = raw
    else:
        if raw is not None and len(raw) > MAX_ARGUMENT_CHARS:
            raise ToolError(f"arguments of {tool} are {len(raw)} characters; the limit is {MAX_ARGUMENT_CHARS}")
        try:
            args = json.loads(raw) if raw and raw.strip() else {}
        except json.JSONDecodeError as exc:
            raise ToolError(
                f"arguments of {tool} are not valid JSON ({exc.msg} at char {exc.pos}); send a JSON object"
            ) from None
        except RecursionError:
            raise ToolError(f"arguments of {tool} are nested too deeply to read; send a flat JSON object") from None
    if not isinstance(args, dict):
        raise ToolError(f"arguments of {tool} must be a JSON object, got {type(args).__name__}")
    missing = [name for name in REQUIRED_ARGS[tool] if not isinstance(args.get(name), str)]
    if missing:
        raise ToolError(f"{tool} needs the string argument(s) {', '.join(missing)}")
    for name in ("content", "old", "new"):
        value = args.get(name)
        if isinstance(value, str) and len(value) > MAX_WRITE_CHARS:
            raise ToolError(
                f"{name} of {tool} is {len(args[name])} characters; the limit is {MAX_WRITE_CHARS} — "
                "write smaller files"
            )
    return args


def _plain_text(what: str, text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(
            f"{what} holds {text[exc.start]!r} at character {exc.start}, which is not valid UTF-8 text "
            "(a lone surrogate); send plain text"
        ) from None


def _file_errors(method: Callable[..., R]) -> Callable[..., R]:
    """OS-level failures of a file operation (a path through a file, a name too long, no
    permission, a symlink loop) become ToolErrors the model sees."""

    @functools.wraps(method)
    def wrapper(self: Workspace, path: str, *args: Any) -> R:
        try:
            return method(self, path, *args)
        except ToolError:
            raise
        except (OSError, RuntimeError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            raise ToolError(f"{method.__name__} {path!r} failed: {reason}") from None

    return wrapper


class Workspace:
    """File operations inside `root`; nothing outside it is reachable."""

    def __init__(self, root: Path):
        self.root = Path(root).resolve()

    def resolve(self, path: str) -> Path:
        if not path or not path.strip():
            raise ToolError("path is empty; give a path relative to the workspace, e.g. 'src/main.py'")
        if "\0" in path:
            raise ToolError(f"path {path[:80]!r} holds a NUL byte; give a plain relative path")
        if len(path) > MAX_PATH_CHARS:
            raise ToolError(f"path is {len(path)} characters; the limit is {MAX_PATH_CHARS}")
        _plain_text("path", path)
        candidate = Path(path)
        long_name = next((part for part in candidate.parts if len(part.encode()) > MAX_NAME_BYTES), None)
        if long_name is not None:
            raise ToolError(
                f"a name in path {path[:80]!r}... is {len(long_name.encode())} bytes; "
                f"file names are at most {MAX_NAME_BYTES}"
            )
        if candidate.is_absolute():
            raise ToolError(f"path {path!r} is absolute; paths are relative to the workspace")
        if ".." in candidate.parts:
            raise ToolError(f"path {path!r} contains '..'; stay inside the workspace")
        try:
            full = (self.root / candidate).resolve()
        except (OSError, RuntimeError) as exc:  # a symlink loop
            raise ToolError(f"path {path!r} cannot be resolved ({exc})") from None
        if full != self.root and self.root not in full.parents:
            raise ToolError(f"path {path!r} leads outside the workspace (through a symlink)")
        return full

    def list_files(self) -> str:
        try:
            return self._list_files()
        except (OSError, RuntimeError) as exc:
            raise ToolError(f"list_files failed: {exc}") from None

    def _list_files(self) -> str:
        return "\n".join(relative_files(self.root)) or "(the workspace is empty)"

    @_file_errors
    def read_file(self, path: str) -> str:
        full = self.resolve(path)
        if not full.is_file():
            raise ToolError(f"no file {path!r}; call list_files to see what exists")
        text = full.read_text(encoding="utf-8", errors="replace")
        if len(text) > MAX_READ_CHARS:
            return text[:MAX_READ_CHARS] + f"\n[... {len(text) - MAX_READ_CHARS} more characters cut]"
        return text

    @_file_errors
    def write_file(self, path: str, content: str) -> str:
        if len(content) > MAX_WRITE_CHARS:
            raise ToolError(
                f"content is {len(content)} characters; the limit is {MAX_WRITE_CHARS} — write smaller files"
            )
        _plain_text("content", content)
        full = self.resolve(path)
        if full.is_dir():
            raise ToolError(f"{path!r} is a directory")
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(content, encoding="utf-8")
        return f"wrote {path} ({len(content)} characters)"

    @_file_errors
    def edit_file(self, path: str, old: str, new: str) -> str:
        _plain_text("new", new)
        full = self.resolve(path)
        if not full.is_file():
            raise ToolError(f"no file {path!r}; call list_files to see what exists")
        text = full.read_text(encoding="utf-8", errors="replace")
        count = text.count(old) if old else 0
        if count != 1:
            where = "not found" if count == 0 else f"found {count} times"
            raise ToolError(f"old text {where} in {path}; `old` must match exactly once (copy it from read_file)")
        result = text.replace(old, new, 1)
        if len(result) > MAX_WRITE_CHARS:
            raise ToolError(f"the edit would make {path} {len(result)} characters; the limit is {MAX_WRITE_CHARS}")
        full.write_text(result, encoding="utf-8")
        return f"edited {path}"
