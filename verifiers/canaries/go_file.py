"""The facts of a Go test file that all its tests share: the Go grammar's names, its assertion
helpers, sentinel errors and struct types, and the literals a changed value may become."""

from __future__ import annotations

import random
import re

from tree_sitter import Node

from verifiers.canaries.mutate import Mutator
from verifiers.canaries.sites import text, walk

_TESTERS = frozenset({b"*testing.T", b"testing.TB"})
_FAILS = frozenset({b"Error", b"Errorf", b"Fatal", b"Fatalf", b"Fail", b"FailNow"})
EQUALS = frozenset({b"reflect.DeepEqual", b"bytes.Equal", b"errors.Is"})  # the second value is expected
BUILTINS = frozenset({b"len", b"cap"})
CONVERSIONS = frozenset(
    b"int int8 int16 int32 int64 uint uint8 uint16 uint32 uint64 uintptr byte rune "
    b"float32 float64 string bool []byte []rune time.Duration".split()
)
NUMBERS = frozenset({"int_literal", "float_literal"})
STRINGS = frozenset({"interpreted_string_literal", "raw_string_literal"})
DECIMAL = re.compile(rb"^(0|[1-9][0-9_]*)$")
SENTINEL_NAME = re.compile(r"^(?:\w+\.)?Err[A-Z0-9_]\w*$")


class GoValues(Mutator):
    """The file's changes, with Go's integer and string literals among the values a changed one
    may become (the mutator's own kinds are the other grammars' names)."""

    def __init__(self, rng: random.Random, source: bytes, root: Node):
        super().__init__(rng, source, root)
        for node in walk(root, frozenset({"import_declaration"})):
            if node.type == "int_literal" and DECIMAL.match(text(source, node)):
                self.numbers.setdefault(("int", ""), []).append(text(source, node))
            elif node.type in STRINGS:
                head, tail = node.children[0], node.children[-1]
                delimiters = text(source, head) + text(source, tail)
                self.strings.setdefault(delimiters, []).append(text(source, node))


def is_test(function: Node, source: bytes) -> bool:
    """`func TestX(t *testing.T)`: what go test runs (`TestMain` takes a *testing.M)."""
    name = text(source, function.child_by_field_name("name") or function).decode()
    params = function.child_by_field_name("parameters")
    declared = [p for p in params.named_children if p.type != "comment"] if params is not None else []
    if not re.match(r"^Test(?![a-z])", name) or len(declared) != 1:
        return False
    kind = declared[0].child_by_field_name("type")
    return kind is not None and text(source, kind).replace(b" ", b"") == b"*testing.T"


def params_of(function: Node, source: bytes) -> list[tuple[str, bytes]]:
    """(name, type) of each parameter, in order."""
    params = function.child_by_field_name("parameters")
    found = []
    for declared in params.named_children if params is not None else []:
        kind = declared.child_by_field_name("type")
        for named in declared.children_by_field_name("name"):
            found.append((text(source, named).decode(), text(source, kind).replace(b" ", b"") if kind else b""))
    return found


def expected_index(function: Node, source: bytes) -> int | None:
    """Which argument of a helper is the value it expects: a parameter named so, else unknown."""
    names = [n for n, _ in params_of(function, source)]
    return next((i for i, n in enumerate(names) if n.lower().startswith(("want", "exp"))), None)


def unwrap(node: Node) -> Node:
    while node.type in ("parenthesized_expression", "literal_element") and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def elements(value: Node) -> list[Node]:
    """The values of a literal_value (a keyed element's value; its key is never one)."""
    found = []
    for element in value.named_children:
        if element.type == "keyed_element" and element.named_children:
            found.append(unwrap(element.named_children[-1]))
        elif element.type == "literal_element":
            found.append(unwrap(element))
    return found


class GoFile:
    def __init__(self, source: bytes, root: Node, mutator: Mutator):
        self.source, self.root, self.mutator = source, root, mutator
        self.testers = {
            n
            for f in walk(root)
            if f.type in ("function_declaration", "func_literal")
            for n, t in params_of(f, source)
            if t in _TESTERS
        }
        self.structs = {
            text(source, s.child_by_field_name("name") or s): s.child_by_field_name("type")
            for s in walk(root)
            if s.type == "type_spec"
        }
        self.sentinels: dict[bytes, list[bytes]] = {}  # by qualifier: the file's Err* names
        for node in walk(root):
            written = text(source, node)
            if node.type in ("identifier", "selector_expression") and SENTINEL_NAME.match(
                written.decode("utf-8", "replace")
            ):
                qualifier = written.rpartition(b".")[0]
                if written not in self.sentinels.setdefault(qualifier, []):
                    self.sentinels[qualifier].append(written)
        # the file's assertion helpers: a function that takes a *testing.T and fails it
        self.helpers: dict[bytes, int | None] = {}
        functions = [f for f in root.named_children if f.type == "function_declaration" and not is_test(f, source)]
        changed = True
        while changed:
            changed = False
            for function in functions:
                name = text(source, function.child_by_field_name("name") or function)
                if name not in self.helpers and any(
                    self.fails(c) for c in walk(function) if c.type == "call_expression"
                ):
                    self.helpers[name] = expected_index(function, source)
                    changed = True

    def fails(self, call: Node, local: dict[bytes, int | None] | None = None) -> bool:
        function = call.child_by_field_name("function")
        if function is None:
            return False
        if function.type == "identifier":
            return text(self.source, function) in self.helpers or text(self.source, function) in (local or {})
        operand, field = function.child_by_field_name("operand"), function.child_by_field_name("field")
        return (
            function.type == "selector_expression"
            and operand is not None
            and field is not None
            and text(self.source, operand).decode() in self.testers
            and text(self.source, field) in _FAILS
        )
