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
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

TOOL_NAMES = ("list_files", "read_file", "write_file", "edit_file", "run_tests", "finish")
_FENCE = re.compile(r"^(?P<fence>`{3,})(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S)
_INLINE = re.compile(r"(?<!`)```(?P<info>[A-Za-z_]+(?: [^`\n]*)?)```")
_EDIT = re.compile(r"<<<<<<< OLD\n(?P<old>.*?)\n?=======\n(?P<new>.*?)\n?>>>>>>> NEW", re.S)

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
    arguments: dict
    error: str | None = None  # set when the block names a tool but is malformed


def _parse_info(info: str) -> tuple[str, dict]:
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


def parse_actions(text: str) -> list[TextAction]:
    """Every action block in a reply, in order. Blocks in other languages (```python) are ignored."""
    found: list[tuple[int, TextAction]] = []
    for m in _FENCE.finditer(text):
        tool, args = _parse_info(m.group("info").strip())
        if tool not in TOOL_NAMES:
            if args:  # `name key=value` looks like an action, not a code block: an unknown tool
                found.append((m.start(), TextAction(tool, args, f"unknown action {tool!r}; actions are {', '.join(TOOL_NAMES)}")))
            continue
        body = m.group("body")
        if tool == "write_file":
            args["content"] = body
        elif tool == "edit_file":
            em = _EDIT.search(body)
            if em is None:
                found.append((m.start(), TextAction(tool, args, "edit_file body needs <<<<<<< OLD / ======= / >>>>>>> NEW markers")))
                continue
            args["old"], args["new"] = em.group("old"), em.group("new")
        found.append((m.start(), TextAction(tool, args)))
    covered = [(m.start(), m.end()) for m in _FENCE.finditer(text)]
    for m in _INLINE.finditer(text):
        if any(a <= m.start() < b for a, b in covered):
            continue
        tool, args = _parse_info(m.group("info").strip())
        if tool in TOOL_NAMES:
            found.append((m.start(), TextAction(tool, args)))
        elif args:
            found.append((m.start(), TextAction(tool, args, f"unknown action {tool!r}; actions are {', '.join(TOOL_NAMES)}")))
    return [action for _, action in sorted(found, key=lambda pair: pair[0])]


def format_action(tool: str, arguments: dict) -> str:
    """The block a well-behaved model would write for this action (used by the scripted server)."""
    if tool == "write_file":
        content = arguments["content"]
        fence = "`" * max(3, _longest_backtick_run(content) + 1)
        body = content if content.endswith("\n") else content + "\n"
        return f"{fence}write_file path={arguments['path']}\n{body}{fence}"
    if tool == "edit_file":
        return (f"```edit_file path={arguments['path']}\n<<<<<<< OLD\n{arguments['old']}\n=======\n"
                f"{arguments['new']}\n>>>>>>> NEW\n```")
    if tool == "read_file":
        return f"```read_file path={arguments['path']}```"
    return f"```{tool}```"


def _longest_backtick_run(text: str) -> int:
    runs = re.findall(r"`+", text)
    return max((len(r) for r in runs), default=0)
