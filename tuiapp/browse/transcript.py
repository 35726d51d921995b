"""The transcript of an attempt: per turn, the tokens and HTTP tries, the model's text, and each
executed tool call (arguments and result) in a Collapsible, collapsed by default."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.widgets import Collapsible, Static

from tuiapp.browse import labels
from tuiapp.browse.data import AttemptView
from tuiapp.browse.diffview import highlighter

MAX_ARGUMENT_CHARS = 20_000


def turn_header(turn: int, calls: list[dict[str, Any]]) -> Text:
    prompt = sum(c["prompt_tokens"] or 0 for c in calls)
    completion = sum(c["completion_tokens"] or 0 for c in calls)
    out = Text(f"Turn {turn}", style="bold")
    out.append(
        f"  ·  {labels.tokens(prompt)} in / {labels.tokens(completion)} out tokens  ·  "
        f"{len(calls)} HTTP tr{'y' if len(calls) == 1 else 'ies'}",
        style="bright_black",
    )
    for c in calls:
        if c["status"] in ("in_flight", "lost"):
            out.append(
                f"\n  {c['status'].replace('_', ' ')}: no response recorded — the run stopped before this "
                f"call returned ({labels.tokens(c['reserved_tokens'])} tokens reserved)",
                style="bold yellow",
            )
        elif c["status"] != "ok":
            out.append(
                f"\n  {'retry ' + str(c['retry_index']) if c['retry_index'] else 'first try'}: ", style="bright_black"
            )
            out.append(f"{c['status']}" + (f" HTTP {c['http_status']}" if c["http_status"] else ""), style="bold red")
            if c["error"]:
                out.append(f" — {c['error']}", style="red")
    return out


def model_text(calls: list[dict[str, Any]]) -> Text | None:
    """The model's text of the turn; None when the turn never got an answer (its header says why)."""
    answered = [c for c in calls if c["status"] == "ok"]
    if not answered and calls and all(c["status"] in ("in_flight", "lost") for c in calls):
        return None
    text = (answered[-1]["response_text"] if answered else None) or ""
    if not text.strip():
        requested = json.loads(answered[-1]["tool_calls_json"] or "[]") if answered else []
        note = "(no text: tool calls only)" if requested else "(no response recorded)"
        return Text(note, style="italic bright_black")
    return Text(text.rstrip())


def tool_title(call: dict[str, Any]) -> str:
    mark = "✓" if call["ok"] else "✗ malformed:"
    path = f" {call['path']}" if call["path"] else ""
    error = f" — {call['error'][:80]}" if not call["ok"] and call["error"] else ""
    return escape(f"{mark} {call['tool']}{path}{error}")


def tool_body(call: dict[str, Any]) -> RenderableType:
    raw = call["arguments_json"] or ""
    parts: list[RenderableType] = [Text("arguments", style="bold")]
    try:
        args = json.loads(raw) if raw else {}
    except ValueError:
        args = None
    if args == {}:
        parts.append(Text("  (none)", style="bright_black"))
    elif isinstance(args, dict):
        for key, value in args.items():
            if isinstance(value, str) and "\n" in value:
                parts.append(Text(f"  {key}:", style="cyan"))
                code = value[:MAX_ARGUMENT_CHARS]
                lines = (
                    highlighter(str(args.get("path") or "x.txt"))(code)
                    if key in ("content", "old", "new")
                    else [Text(line) for line in code.splitlines()]
                )
                parts.extend(Text("    ") + line for line in lines)
            else:
                parts.append(Text(f"  {key}: ", style="cyan").append(json.dumps(value)[:MAX_ARGUMENT_CHARS], style=""))
    else:
        parts.append(Text(f"  {raw[:MAX_ARGUMENT_CHARS] or '(none)'}", style="yellow"))
    parts.append(Text("result" if call["ok"] else "error", style="bold"))
    parts.append(Text((call["result"] if call["ok"] else call["error"] or call["result"] or "").rstrip() or "(empty)"))
    return Group(*parts)


class Transcript(VerticalScroll):
    """The whole conversation of one attempt, turn by turn."""

    def __init__(self, view: AttemptView, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.view = view

    def compose(self) -> ComposeResult:
        calls: dict[int, list[dict[str, Any]]] = {}
        for c in self.view.calls:
            calls.setdefault(c["turn"] or 0, []).append(c)
        tools: dict[int, list[dict[str, Any]]] = {}
        for t in self.view.tool_calls:
            tools.setdefault(t["turn"] or 0, []).append(t)
        turns = sorted(set(calls) | set(tools))
        if not turns:
            yield Static(Text("No turns recorded for this attempt.", style="italic"))
        for turn in turns:
            yield Static(turn_header(turn, calls.get(turn, [])), classes="turn-header")
            text = model_text(calls.get(turn, []))
            if text is not None:
                yield Static(text, classes="model-text")
            for call in tools.get(turn, []):
                yield Collapsible(
                    Static(tool_body(call)),
                    title=tool_title(call),
                    collapsed=True,
                    classes="tool-call" if call["ok"] else "tool-call malformed",
                )

    def set_expanded(self, expanded: bool) -> None:
        for c in self.query(Collapsible):
            c.collapsed = not expanded
