"""The diff of an attempt's final workspace against the fixture, highlighted with pygments
(through rich.syntax), as a unified view or side by side.

The ledger's unified diff (attempts.diff) is the source of truth for what changed. Whole
files are highlighted where we have them (the fixture under tasks.path/workspace, the final
text in attempts.files_json) so a line inside a multi-line string still colours right; any
other line is highlighted on its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import zip_longest

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_for_filename
from pygments.util import ClassNotFound
from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

THEME = "monokai"
ADDED, REMOVED = "on #12331a", "on #3f1717"
MAX_LINES = 4000
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")


@dataclass
class Hunk:
    old_start: int
    new_start: int
    header: str
    lines: list[tuple[str, str]] = field(default_factory=list)  # (" ", "-", "+" or "\\", text)


@dataclass
class FileDiff:
    old_path: str | None
    new_path: str | None
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or "?"

    @property
    def status(self) -> str:
        return "new file" if self.old_path is None else "deleted" if self.new_path is None else "changed"


def _strip(path: str) -> str | None:
    path = path.split("\t")[0].strip()
    if path == "/dev/null":
        return None
    return path[2:] if path.startswith(("a/", "b/")) else path


def parse_unified(diff: str) -> list[FileDiff]:
    """Files and hunks of a unified diff; hunk bodies are read by their line counts, so a
    removed line that itself starts with '--' is not taken for a file header."""
    files: list[FileDiff] = []
    lines = diff.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            files.append(FileDiff(_strip(line[4:]), _strip(lines[i + 1][4:])))
            i += 2
            continue
        match = _HUNK.match(line)
        if match and files:
            old_left = int(match.group(2) or 1)
            new_left = int(match.group(4) or 1)
            hunk = Hunk(int(match.group(1)), int(match.group(3)), line)
            files[-1].hunks.append(hunk)
            i += 1
            while i < len(lines) and (old_left > 0 or new_left > 0 or lines[i].startswith("\\")):
                body = lines[i]
                tag, text = (body[:1] or " "), body[1:]
                if tag not in " -+\\":
                    break
                hunk.lines.append((tag, text))
                old_left -= tag in " -"
                new_left -= tag in " +"
                i += 1
            continue
        i += 1
    return files


def highlighter(path: str) -> Callable[[str], list[Text]]:
    """A function turning source text into highlighted lines, lexer picked by file name."""
    lexer: Lexer | str
    try:
        lexer = get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        lexer = "text"
    syntax = Syntax("", lexer, theme=THEME, background_color="default")

    def highlight(code: str) -> list[Text]:
        text = syntax.highlight(code)
        text.rstrip()
        return list(text.split("\n", allow_blank=True))

    return highlight


class _Lines:
    """Highlighted lines of one side of a file: from the whole text if known, else one by one."""

    def __init__(self, highlight: Callable[[str], list[Text]], whole: str | None):
        self.highlight = highlight
        self.lines = highlight(whole) if whole else []

    def get(self, number: int, raw: str) -> Text:
        if 0 < number <= len(self.lines) and self.lines[number - 1].plain == raw:
            return self.lines[number - 1].copy()
        return (self.highlight(raw) or [Text(raw)])[0]


def _cell(text: Text | str, background: str = "") -> Text:
    out = Text(style=background, justify="left", no_wrap=False, overflow="fold")
    out.append_text(text if isinstance(text, Text) else Text(text))
    return out


def _number(n: int | None, background: str = "") -> Text:
    return Text("" if n is None else str(n), style=f"bright_black {background}".strip(), justify="right")


def _file_header(fd: FileDiff) -> Text:
    title = Text(f" {fd.path} ", style="bold reverse")
    title.append(f"  {fd.status}", style="italic bright_black")
    return title


def render_unified(fd: FileDiff, old: str | None, new: str | None) -> RenderableType:
    highlight = highlighter(fd.path)
    before, after = _Lines(highlight, old), _Lines(highlight, new)
    table = Table.grid(padding=(0, 1), expand=True)
    table.add_column(width=5, justify="right")
    table.add_column(width=5, justify="right")
    table.add_column(ratio=1)
    for hunk in fd.hunks:
        table.add_row("", "", Text(hunk.header, style="cyan"))
        o, n = hunk.old_start, hunk.new_start
        for tag, raw in hunk.lines:
            if tag == "\\":
                table.add_row("", "", Text("\\" + raw, style="italic bright_black"))
            elif tag == "-":
                table.add_row(_number(o, REMOVED), "", _cell(Text("- ", style="red") + before.get(o, raw), REMOVED))
                o += 1
            elif tag == "+":
                table.add_row("", _number(n, ADDED), _cell(Text("+ ", style="green") + after.get(n, raw), ADDED))
                n += 1
            else:
                table.add_row(_number(o), _number(n), _cell(Text("  ") + after.get(n, raw)))
                o, n = o + 1, n + 1
    return Group(_file_header(fd), table, Text())


def render_side_by_side(fd: FileDiff, old: str | None, new: str | None) -> RenderableType:
    highlight = highlighter(fd.path)
    before, after = _Lines(highlight, old), _Lines(highlight, new)
    table = Table.grid(padding=(0, 1), expand=True)
    for ratio in (None, 1, None, 1):
        table.add_column(width=None if ratio else 5, ratio=ratio, justify="left" if ratio else "right")
    for hunk in fd.hunks:
        table.add_row("", Text(hunk.header, style="cyan"), "", "")
        o, n = hunk.old_start, hunk.new_start
        removed: list[tuple[int, str]] = []
        added: list[tuple[int, str]] = []

        def flush() -> None:
            for left, right in zip_longest(removed, added):  # noqa: B023 — flush() runs in this iteration
                table.add_row(
                    _number(left[0] if left else None, REMOVED if left else ""),
                    _cell(before.get(*left), REMOVED) if left else _cell(""),
                    _number(right[0] if right else None, ADDED if right else ""),
                    _cell(after.get(*right), ADDED) if right else _cell(""),
                )
            removed.clear()  # noqa: B023
            added.clear()  # noqa: B023

        for tag, raw in hunk.lines:
            if tag == "-":
                removed.append((o, raw))
                o += 1
            elif tag == "+":
                added.append((n, raw))
                n += 1
            elif tag == " ":
                flush()
                table.add_row(_number(o), _cell(before.get(o, raw)), _number(n), _cell(after.get(n, raw)))
                o, n = o + 1, n + 1
        flush()
    return Group(_file_header(fd), table, Text())


def render_diff(
    diff: str | None, files: dict[str, str | None], fixture: dict[str, str], *, side_by_side: bool, empty: str
) -> RenderableType:
    """The whole diff of an attempt; `empty` says why there is none."""
    parsed = parse_unified(diff or "")
    if not parsed:
        return Text(empty, style="italic")
    total = sum(len(h.lines) for fd in parsed for h in fd.hunks)
    render = render_side_by_side if side_by_side else render_unified
    parts: list[RenderableType] = []
    shown = 0
    for fd in parsed:
        if shown > MAX_LINES:
            parts.append(
                Text(f"… {total - shown:,} more diff lines not shown (files: see attempts.files_json)", style="italic")
            )
            break
        shown += sum(len(h.lines) for h in fd.hunks)
        parts.append(render(fd, fixture.get(fd.old_path or ""), files.get(fd.new_path or "")))
    return Group(*parts)
