"""Edit-mechanics checks with tree-sitter: did the model leave files that parse?

For every file an attempt created or changed, parse it with its language's grammar (the
per-language wheels; tree-sitter-language-pack downloads grammars at run time and fails
offline). A file that parsed clean in the fixture (or is new) but now has ERROR or MISSING
nodes is a finding. So are literal `\\n` runs where newlines belong, an emptied or truncated
file, and a file written in another language than its extension says (failures of editing,
kept apart from failures of reasoning).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tree_sitter import Language, Node, Parser, Tree

from verifiers.tasks import iter_files

EXTENSIONS = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".rs": "rust",
    ".sh": "bash",
    ".bash": "bash",
    ".go": "go",
    ".java": "java",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".h": "cpp",
}
_OTHER_LANGUAGES = ("python", "javascript", "rust", "typescript")
_ESCAPED_NEWLINE = re.compile(
    r"\\n(?:[ \t]{2,}|(?:def|class|return|import|from|function|const|let|var|fn|pub|use|impl|if|for|while|fi|done)\b|[})\]])"
)
CONTEXT_LINES = 2
MAX_ERRORS_PER_FILE = 5
FIXTURE_TREES = 256  # fixture files whose parse is kept (a few KB of tree each)


@functools.cache
def _language(name: str) -> Language:
    if name == "python":
        import tree_sitter_python

        return Language(tree_sitter_python.language())
    if name == "javascript":
        import tree_sitter_javascript

        return Language(tree_sitter_javascript.language())
    if name in ("typescript", "tsx"):
        import tree_sitter_typescript

        return Language(
            tree_sitter_typescript.language_typescript()
            if name == "typescript"
            else tree_sitter_typescript.language_tsx()
        )
    if name == "rust":
        import tree_sitter_rust

        return Language(tree_sitter_rust.language())
    if name == "bash":
        import tree_sitter_bash

        return Language(tree_sitter_bash.language())
    if name == "go":
        import tree_sitter_go

        return Language(tree_sitter_go.language())
    if name == "java":
        import tree_sitter_java

        return Language(tree_sitter_java.language())
    if name == "cpp":
        import tree_sitter_cpp

        return Language(tree_sitter_cpp.language())
    raise KeyError(name)


@functools.cache
def _parser(name: str) -> Parser:
    return Parser(_language(name))


def new_parser(grammar: str) -> Parser:
    """A parser of its own: tree-sitter parsers are not shared safely between threads."""
    return Parser(_language(grammar))


def parse(source: bytes, grammar: str) -> Tree:
    """One file's syntax tree with its language's grammar (the tamper scan reads these too)."""
    return _parser(grammar).parse(source)


def grammar_for(path: Path | str) -> str | None:
    return EXTENSIONS.get(Path(path).suffix.lower())


@dataclass(frozen=True)
class Finding:
    file: str
    flag: str  # syntax_error | missing_node | escaped_newlines | emptied | truncated | wrong_language
    line: int | None = None
    column: int | None = None
    node_kind: str | None = None
    message: str = ""
    context: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}" if self.line else self.file
        return f"{where}: {self.flag}: {self.message}"


def walk(node: Node) -> Iterator[Node]:
    """`node` and every node under it, in document order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def syntax_problems(source: bytes, grammar: str) -> list[Node]:
    """ERROR and MISSING nodes in document order (at most a few)."""
    root = _parser(grammar).parse(source).root_node
    if not root.has_error:
        return []
    found: list[Node] = []
    stack = [root]
    while stack and len(found) < MAX_ERRORS_PER_FILE:
        node = stack.pop()
        if node.is_error or node.is_missing:
            found.append(node)
            continue
        if node.has_error:
            stack.extend(reversed(node.children))
    return found


def parses_clean(source: bytes, grammar: str) -> bool:
    return not _parser(grammar).parse(source).root_node.has_error


@functools.lru_cache(maxsize=FIXTURE_TREES)
def _fixture_tree(source: bytes, grammar: str) -> Tree:
    """The parse of a fixture file, kept: every attempt of every arm compares against the same one."""
    return _parser(grammar).parse(source)


def _shared_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix, by bisection over slice compares (memcmp, not a loop)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _shared_suffix(a: bytes, b: bytes, limit: int) -> int:
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid : len(a) - lo] == b[len(b) - mid : len(b) - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _point(source: bytes, offset: int) -> tuple[int, int]:
    return source.count(b"\n", 0, offset), offset - (source.rfind(b"\n", 0, offset) + 1)


def parses_clean_edited(before: bytes, after: bytes, grammar: str) -> bool:
    """Whether `after` parses clean, by re-parsing only what changed since the fixture's tree
    (tree-sitter's incremental parse): a one-line edit of a 500-line file costs a fraction of a
    full parse. Only a clean verdict is taken from it; a file with problems is parsed whole
    again for its findings."""
    tree = _fixture_tree(before, grammar).copy()
    start = _shared_prefix(before, after)
    tail = _shared_suffix(before, after, min(len(before), len(after)) - start)
    old_end, new_end = len(before) - tail, len(after) - tail
    tree.edit(
        start_byte=start,
        old_end_byte=old_end,
        new_end_byte=new_end,
        start_point=_point(before, start),
        old_end_point=_point(before, old_end),
        new_end_point=_point(after, new_end),
    )
    return not _parser(grammar).parse(after, tree).root_node.has_error


def _context(lines: list[str], line_no: int) -> str:
    lo, hi = max(0, line_no - 1 - CONTEXT_LINES), min(len(lines), line_no + CONTEXT_LINES)
    return "\n".join(f"{i + 1:>5}{'>' if i + 1 == line_no else ' '} {lines[i]}" for i in range(lo, hi))


def check_file(name: str, after: bytes, before: bytes | None = None) -> list[Finding]:
    """Findings for one created (before=None) or changed file."""
    grammar = grammar_for(name)
    findings: list[Finding] = []
    if before is not None and before.strip() and not after.strip():
        return [Finding(name, "emptied", message=f"file was {len(before)} bytes in the fixture and is now empty")]
    if before is not None and len(before) >= 200 and len(after) < 0.3 * len(before):
        findings.append(Finding(name, "truncated", message=f"file shrank from {len(before)} to {len(after)} bytes"))
    escaped_after = len(_ESCAPED_NEWLINE.findall(after.decode("utf-8", "replace")))
    escaped_before = len(_ESCAPED_NEWLINE.findall(before.decode("utf-8", "replace"))) if before else 0
    if escaped_after >= 2 and escaped_after > escaped_before:
        findings.append(
            Finding(name, "escaped_newlines", message=f"{escaped_after} literal \\n escape runs where newlines belong")
        )
    if grammar is None:
        return findings
    fixture_clean = before is not None and not _fixture_tree(before, grammar).root_node.has_error
    if fixture_clean and before is not None and parses_clean_edited(before, after, grammar):
        return findings
    problems = syntax_problems(after, grammar)
    if not problems:
        return findings
    if before is not None and not fixture_clean:
        return findings  # broken in the fixture already: not the model's doing
    error_bytes = sum(n.end_byte - n.start_byte for n in problems if n.is_error)
    wrong = None
    if problems[0].start_point[0] < 3 or error_bytes >= 0.6 * len(after):
        wrong = _detect_other_language(after, grammar)  # only when the file fails from the top or mostly
        if wrong:
            findings.append(
                Finding(
                    name,
                    "wrong_language",
                    message=f"{Path(name).suffix} file does not parse as {grammar} but parses as {wrong}",
                )
            )
    lines = after.decode("utf-8", "replace").splitlines()
    cut_short = before is not None and len(after) < len(before) and before.startswith(after.rstrip())
    for node in problems:
        row, col0 = node.start_point if node.is_missing or wrong else where_it_breaks(node, after, before)
        line, col = row + 1, col0 + 1
        if node.is_missing:
            flag, message = "missing_node", f"missing {node.type!r}"
        else:
            near = lines[row][col0 : col0 + 40].strip() if row < len(lines) else ""
            if cut_short and before is not None and row >= len(lines) - 1:
                more = len(before.splitlines()) - len(lines)
                message = f"unparseable {grammar}: the file breaks off here ({more} more lines in the fixture)"
            else:
                message = (
                    f"unparseable {grammar} near {near!r}" if near else f"unparseable {grammar} at the end of the line"
                )
            flag = "syntax_error"
        findings.append(Finding(name, flag, line, col, node.type, message, _context(lines, line)))
    return findings


def _first_difference(before: bytes, after: bytes) -> tuple[int, int] | None:
    """(row, column) of the first line where `after` departs from `before`, 0-based; a file cut
    short departs on its last line."""
    old, new = before.decode("utf-8", "replace").splitlines(), after.decode("utf-8", "replace").splitlines()
    for row, (a, b) in enumerate(zip(old, new)):
        if a != b:
            col = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            return row, col
    if len(new) < len(old):
        return max(0, len(new) - 1), 0
    return (len(old), 0) if len(new) > len(old) else None


def where_it_breaks(node: Node, after: bytes, before: bytes | None) -> tuple[int, int]:
    """Where the parse of an ERROR node really breaks, 0-based (row, column).

    Tree-sitter wraps an item it cannot finish in one ERROR node that starts at the item (often
    line 1). When the fixture parsed clean, the break lies where the model's change begins
    inside that node; in a new file, an ERROR node that runs to the end of the file breaks where
    the file stops (a truncated or unclosed file). Otherwise the node's start is the place.
    """
    start, end = node.start_point[0], node.end_point[0]
    if before is not None:
        first = _first_difference(before, after)
        if first is not None and start < first[0] <= end:
            return first
        return node.start_point
    content = after.rstrip()
    if node.end_byte >= len(content) and content:
        row = content.count(b"\n")
        if row > start:
            return row, len(content) - 1 - content.rfind(b"\n") - 1
    return node.start_point


def _detect_other_language(source: bytes, grammar: str) -> str | None:
    """Another grammar that parses the file clean. The first 40 lines decide cheaply whether
    to look at all: a file that starts out as its own language has a local error, not a wrong one."""
    if len(source.strip()) < 20:
        return None
    prefix = b"\n".join(source.splitlines()[:40]) + b"\n"
    if parses_clean(prefix, grammar):
        return None
    for other in _OTHER_LANGUAGES:
        if other == grammar or (grammar == "tsx" and other == "typescript"):
            continue
        if parses_clean(prefix, other) and parses_clean(source, other):
            return other
    return None


def check_workspace(fixture: Path, final: Path, changed: list[str] | None = None) -> list[Finding]:
    """Findings for every file in `final` that is new or differs from `fixture`."""
    findings: list[Finding] = []
    names = changed if changed is not None else [str(p.relative_to(final)) for p in iter_files(final)]
    for rel in names:
        after_path, before_path = final / rel, fixture / rel
        if after_path.is_symlink() or not after_path.is_file():
            continue  # never read through a link: its target may be outside the workspace
        after = after_path.read_bytes()
        before = before_path.read_bytes() if before_path.is_file() and not before_path.is_symlink() else None
        if before == after:
            continue
        findings.extend(check_file(rel, after, before))
    return findings
