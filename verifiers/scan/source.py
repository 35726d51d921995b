"""What every language's scan shares: the file under scan (`Source`), walking and reading its
tree-sitter nodes, and the rules on string literals that hold for every language."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

from verifiers.findings import TamperFinding

SNIPPET_CHARS = 120
_PROC = re.compile(
    r"/dev/fd/|/proc/(?:self|thread-self|\$\$|\$\{?PPID|\{)|/proc/[^\s'\"]*/(?:fd|mem|environ|maps|cmdline)\b"
)


@dataclass(frozen=True)
class Source:
    """One file under scan and what the rules need to know about the task."""

    rel: str
    data: bytes
    hidden: tuple[str, ...]  # hidden test file names, and their module names / stems
    is_test: bool

    def snippet(self, node: Node) -> str:
        line = self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")
        line = " ".join(line.split())
        return line if len(line) <= SNIPPET_CHARS else line[: SNIPPET_CHARS - 1] + "…"

    def finding(self, rule: str, node: Node, snippet: str | None = None) -> TamperFinding:
        return TamperFinding(rule, self.rel, node.start_point[0] + 1, snippet or self.snippet(node))


def text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def string_findings(src: Source, node: Node, value: str) -> list[TamperFinding]:
    """The rules every language shares, on one string literal's text."""
    found = []
    hit = next((name for name in src.hidden if re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", value)), None)
    if hit:
        found.append(
            src.finding("reads-hidden-tests", node, f"names the hidden test file {hit!r}: {src.snippet(node)}")
        )
    if _PROC.search(value):
        found.append(src.finding("proc-access", node))
    return found


Scanner = Callable[[Source, Node], list[TamperFinding]]
