"""What a canary is made from: the tests of one hidden file (read with tree-sitter) and, in each,
the places where one change makes a wrong expectation.

A `Site` is one change: a span of the file and what replaces it. Its kind says what a correct
solution does with the changed test:
- `contradiction`: the expected side of an assertion changed, the call it checks unchanged, so
  any solution that passes the real test fails this copy, by the same assertion (the reference
  shows how);
- `new-input`: a literal the test feeds the code changed (an argument, a row of a table), so
  the copy asks about an input no real test uses. A correct solution still fails it (the
  reference does, and the value it expects is the one for another input), though not always
  the way the reference does; code that echoes the tests' expected values passes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node

from verifiers.mechanics import new_parser

CONTRADICTION, NEW_INPUT = "contradiction", "new-input"
MAX_SITES_PER_TEST = 6


@dataclass(frozen=True)
class Site:
    start: int  # byte offsets in the file
    end: int
    replacement: bytes
    kind: str  # CONTRADICTION | NEW_INPUT
    how: str  # what changed, in words ("number moved", "collection altered", ...)
    claim: tuple[int, int]  # the statement whose changed text is the canary's claim
    more: tuple[tuple[int, int, bytes], ...] = ()  # a new input's expected value changes too

    @property
    def edits(self) -> list[tuple[int, int, bytes]]:
        return sorted([(self.start, self.end, self.replacement), *self.more])


@dataclass(frozen=True)
class TestUnit:
    __test__ = False  # a record, not a test class for pytest to collect

    name: str  # as the runner names it (without qualifier)
    name_span: tuple[int, int]  # what a rename replaces
    start: int  # what a copy takes: decorators and attributes included
    end: int
    indent: bytes  # the unit's first line's indentation
    container: int  # the start byte of the block it sits in: siblings share it
    qualifier: str = ""  # pytest "TestX::", libtest "tests::": before the name in the runner's id
    sites: tuple[Site, ...] = ()


@dataclass(frozen=True)
class FileTests:
    path: str  # relative to the workspace root
    language: str  # the grammar
    units: tuple[TestUnit, ...]
    taken: frozenset[str]  # names a new test must not take (every test and definition)
    separator: bytes = b"\n\n"  # between two sibling tests (python's top level: two blank lines)
    top_separator: bytes = b"\n\n"
    notes: tuple[str, ...] = field(default_factory=tuple)


def parse(source: bytes, grammar: str) -> Node:
    """A parser of its own per call: grading runs on several threads, and a tree-sitter parser
    is not shared safely between them."""
    return new_parser(grammar).parse(source).root_node


def text(source: bytes, node: Node) -> bytes:
    return source[node.start_byte : node.end_byte]


def indent_of(source: bytes, offset: int) -> bytes:
    line_start = source.rfind(b"\n", 0, offset) + 1
    prefix = source[line_start:offset]
    return prefix if not prefix.strip() else b""


def walk(node: Node, stop: frozenset[str] = frozenset()) -> list[Node]:
    """Every node under `node` in document order, not descending into `stop` kinds."""
    found, stack = [], list(reversed(node.children))
    while stack:
        current = stack.pop()
        found.append(current)
        if current.type not in stop:
            stack.extend(reversed(current.children))
    return found


def named_children(node: Node) -> list[Node]:
    return [c for c in node.children if c.is_named and c.type not in ("comment", "line_comment", "block_comment")]
