"""The text action protocol, for models without native tool calling.

The model acts by writing fenced blocks whose info string is a tool name and `key=value`
arguments; a block's body is the file content (write_file) or an old/new pair (edit_file),
so code never has to be escaped inside JSON:

    ```write_file path=words.py
    def top_words(text, n): ...
    ```

    ```edit_file path=words.py
    <<<<<<< OLD
    return a - b
    =======
    return a + b
    >>>>>>> NEW
    ```

    ```run_tests```  ```list_files```  ```read_file path=words.py```  ```finish```

A fence may be longer than three backticks so content can itself hold ``` lines.
Parsing is linear in the reply's length (a line scan, no backtracking regex over the whole
reply), so no reply can stall the event loop.
"""

from __future__ import annotations

import bisect
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agent.tool_names import TOOL_NAMES, Tool

_OPENER = re.compile(r"(?P<fence>`{3,})(?P<info>[^`]*)")
_INLINE = re.compile(r"(?<!`)```(?P<info>[A-Za-z_]+(?: [^`\n]*)?)```")
_OLD, _MID, _NEW = "<<<<<<< OLD\n", "=======\n", ">>>>>>> NEW"

INSTRUCTIONS = """You act by writing fenced blocks. The info string is the tool name and its arguments.
Available actions:
```list_files```
```read_file path=FILE```
```write_file path=FILE
<the whole new file content>
```
```edit_file path=FILE
<<<<<<< OLD
<exact text to replace, must occur once>
=======
<replacement text>
>>>>>>> NEW
```
```run_tests```
```finish```
Write one or more actions per reply; they run in order and you see their results."""


@dataclass(frozen=True)
class TextAction:
    tool: str
    arguments: dict[str, Any]
    error: str | None = None  # set when the block names a tool but is malformed


def _parse_info(info: str) -> tuple[str, dict[str, Any]]:
    try:
        parts = shlex.split(info)
    except ValueError:
        parts = info.split()
    if not parts:
        return "", {}
    args = {}
    for part in parts[1:]:
        key, sep, value = part.partition("=")
        if sep:
            args[key] = value
    return parts[0], args


def _fenced_blocks(text: str) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, info, body) of every fenced block: an opener line of 3+ backticks and an info
    string, up to the next line that is exactly the same fence (trailing blanks allowed)."""
    lines = text.split("\n")
    offsets, position = [], 0
    for line in lines:
        offsets.append(position)
        position += len(line) + 1
    closers: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        bare = line.rstrip(" \t")
        if bare.startswith("```") and not bare.strip("`"):
            closers.setdefault(bare, []).append(i)
    i = 0
    while i < len(lines):
        m = _OPENER.fullmatch(lines[i])
        candidates = closers.get(m.group("fence"), []) if m else []
        k = bisect.bisect_right(candidates, i)
        if m is None or k == len(candidates):
            i += 1
            continue
        j = candidates[k]
        body = "\n".join(lines[i + 1 : j]) + "\n" if j > i + 1 else ""
        yield offsets[i], offsets[j] + len(lines[j]), m.group("info"), body
        i = j + 1


def _split_edit(body: str) -> tuple[str, str] | None:
    """(old, new) from the <<<<<<< OLD / ======= / >>>>>>> NEW markers, or None."""
    start = body.find(_OLD)
    if start < 0:
        return None
    start += len(_OLD)
    mid = body.find(_MID, start)
    if mid < 0:
        return None
    old = body[start : mid - 1] if mid - 1 >= start and body[mid - 1] == "\n" else body[start:mid]
    start = mid + len(_MID)
    end = body.find(_NEW, start)
    if end < 0:
        return None
    new = body[start : end - 1] if end - 1 >= start and body[end - 1] == "\n" else body[start:end]
    return old, new


def parse_actions(text: str) -> list[TextAction]:
    """Every action block in a reply, in order. Blocks in other languages (```python) are ignored."""
    found: list[tuple[int, TextAction]] = []
    blocks = list(_fenced_blocks(text))
    for start, _end, info, body in blocks:
        tool, args = _parse_info(info.strip())
        if tool not in TOOL_NAMES:
            if args:  # `name key=value` looks like an action, not a code block: an unknown tool
                found.append(
                    (start, TextAction(tool, args, f"unknown action {tool!r}; actions are {', '.join(TOOL_NAMES)}"))
                )
            continue
        if tool == Tool.WRITE_FILE:
            args["content"] = body
        elif tool == Tool.EDIT_FILE:
            pair = _split_edit(body)
            if pair is None:
                found.append(
                    (start, TextAction(tool, args, "edit_file body needs <<<<<<< OLD / ======= / >>>>>>> NEW markers"))
                )
                continue
            args["old"], args["new"] = pair
        found.append((start, TextAction(tool, args)))
    covered = [(start, end) for start, end, _info, _body in blocks]
    for m in _INLINE.finditer(text):
        k = bisect.bisect_right(covered, (m.start(), float("inf"))) - 1
        if k >= 0 and covered[k][0] <= m.start() < covered[k][1]:
            continue
        tool, args = _parse_info(m.group("info").strip())
        if tool in TOOL_NAMES:
            found.append((m.start(), TextAction(tool, args)))
        elif args:
            found.append(
                (m.start(), TextAction(tool, args, f"unknown action {tool!r}; actions are {', '.join(TOOL_NAMES)}"))
            )
    return [action for _, action in sorted(found, key=lambda pair: pair[0])]


def format_action(tool: str, arguments: dict[str, Any]) -> str:
    """The block a well-behaved model would write for this action (used by the scripted server)."""
    if tool == Tool.WRITE_FILE:
        content = arguments["content"]
        fence = "`" * max(3, _longest_backtick_run(content) + 1)
        body = content if content.endswith("\n") else content + "\n"
        return f"{fence}write_file path={arguments['path']}\n{body}{fence}"
    if tool == Tool.EDIT_FILE:
        return (
            f"```edit_file path={arguments['path']}\n<<<<<<< OLD\n{arguments['old']}\n=======\n"
            f"{arguments['new']}\n>>>>>>> NEW\n```"
        )
    if tool == Tool.READ_FILE:
        return f"```read_file path={arguments['path']}```"
    return f"```{tool}```"


def _longest_backtick_run(text: str) -> int:
    runs = re.findall(r"`+", text)
    return max((len(r) for r in runs), default=0)
