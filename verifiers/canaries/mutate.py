"""The changes a canary makes to one expression of a test, by tree-sitter node kind, in each
language's grammar: a number moved, a string or collection altered, a boolean flipped.

A canary and the real test it copies differ in one or two literals, and nothing about the
change may tell which of the two is the copy: a number moves by a random step either way or
becomes another number the file uses, a string becomes another string of the file or gets one
random character changed, a collection loses or repeats a random element. The draws come from
the pool's own seed, which the ledger keeps and the tests never see.

A changed number or string is new to its test: it never equals another literal of the function
it sits in (a number by magnitude, the sign being an operator of its own). A value the test
already holds is one constant of its code, not two, so code that reads the test's values (its
constants, its source) would find the copy's expectation only where the real test had a
distinct one: a grade drawing only such copies would be met by reading, not by solving.

Every change keeps the file valid (a compiled test file that no longer builds would take the
real tests down with it): numbers stay at zero or above (a sign is an operator of its own),
Rust arrays keep their length (only `vec![...]` changes).
"""

from __future__ import annotations

import math
import random
import re
import string

from tree_sitter import Node

from verifiers.canaries.sites import named_children, text, walk

NUMBERS = frozenset({"integer", "float", "number", "integer_literal", "float_literal"})
STRINGS = frozenset({"string", "string_literal", "template_string"})
BOOLEANS = {b"True": b"False", b"False": b"True", b"true": b"false", b"false": b"true"}
COLLECTIONS = frozenset({"list", "tuple", "set", "dictionary", "array", "object"})
EMPTY = {"list": b"[]", "tuple": b"()", "set": b"set()", "dictionary": b"{}", "array": b"[]", "object": b"{}"}
_NUMBER = re.compile(r"^(\d+)((?:\.\d*)?(?:[eE][+-]?\d+)?)([A-Za-z_]\w*)?$")
_FLOAT_SUFFIXES = ("f32", "f64")
_STEPS = (1, 2, 3, 4, 5, 7, 10)
_SCOPES = frozenset(
    {
        "function_definition",
        "function_item",
        "function_declaration",
        "function_expression",
        "arrow_function",
        "method_definition",
        "closure_expression",
        "decorated_definition",
    }
)


def _shape(literal: bytes) -> tuple[str, str] | None:
    """("int" or "float", suffix) of a plain decimal literal; None for hex, octal, binary."""
    written = literal.decode("ascii", "replace").replace("_", "")
    match = _NUMBER.match(written)
    if match is None:
        return None
    whole, fraction, suffix = match.group(1), match.group(2), match.group(3) or ""
    if len(whole) > 1 and whole.startswith("0") and not fraction:
        return None
    return ("float" if fraction or suffix in _FLOAT_SUFFIXES else "int"), suffix


class Mutator:
    """One file's changes, drawn from `rng`; `values`: the file's own literals by kind, what a
    changed value may become."""

    def __init__(self, rng: random.Random, source: bytes, root: Node):
        self.rng = rng
        self.numbers: dict[tuple[str, str], list[bytes]] = {}
        self.strings: dict[bytes, list[bytes]] = {}  # by delimiters: what a string may become
        for node in walk(root):
            if node.type in NUMBERS and (shape := _shape(text(source, node))) is not None:
                self.numbers.setdefault(shape, []).append(text(source, node))
            elif node.type in STRINGS and (parts := _string_parts(node)) is not None:
                opening, closing = parts
                delimiters = source[node.start_byte : opening.end_byte] + source[closing.start_byte : node.end_byte]
                self.strings.setdefault(delimiters, []).append(text(source, node))

    def number(self, literal: bytes, held: frozenset[float] = frozenset()) -> bytes | None:
        """`held`: the magnitudes the test already holds, which the new value is not."""
        shape = _shape(literal)
        if shape is None:
            return None
        kind, suffix = shape
        others = sorted(
            {v for v in self.numbers.get(shape, []) if _value(v) != _value(literal) and _value(v) not in held}
        )
        if others and self.rng.random() < 0.5:
            return self.rng.choice(others)
        for _ in range(16):
            moved = self._stepped(literal, kind, suffix)
            if moved is None or _value(moved) not in held:
                return moved
        return None

    def _stepped(self, literal: bytes, kind: str, suffix: str) -> bytes | None:
        digits = literal.decode("ascii", "replace").replace("_", "")
        core = digits[: len(digits) - len(suffix)] if suffix else digits
        if kind == "float":
            value = float(core) + self.rng.choice((-1, 1)) * self.rng.choice((0.5, 1.0, 2.0, 10.0))
            if not math.isfinite(value):
                return None
            shown = repr(abs(value))
            return (shown if "e" in shown or "." in shown else shown + ".0").encode() + suffix.encode()
        number = int(core)
        step = self.rng.choice(_STEPS)
        moved = number + step if number - step < 0 or self.rng.random() < 0.5 else number - step
        return str(moved).encode() + suffix.encode()

    def string(self, source: bytes, node: Node, held: frozenset[bytes] = frozenset()) -> bytes | None:
        """`held`: the string literals the test already holds (as written), which the new one is not."""
        parts = _string_parts(node)
        if parts is None:
            return None
        opening, closing = parts
        head = source[node.start_byte : opening.end_byte]
        tail = source[closing.start_byte : node.end_byte]
        mine = text(source, node)
        others = sorted(
            {v for v in self.strings.get(head + tail, []) if v != mine and v not in held and _alike(v, mine)}
        )
        if others and self.rng.random() < 0.5:
            return self.rng.choice(others)
        for _ in range(16):
            altered = self._respelled(source[opening.end_byte : closing.start_byte], head, tail)
            if altered not in held:
                return altered
        return None

    def _respelled(self, inner: bytes, head: bytes, tail: bytes) -> bytes:
        body = inner.decode("utf-8", "surrogateescape")
        plain = [i for i, ch in enumerate(body) if ch.isascii() and ch.isalnum() and (i == 0 or body[i - 1] != "\\")]
        if not plain:
            return head + (body + self.rng.choice(string.ascii_lowercase)).encode("utf-8", "surrogateescape") + tail
        at = self.rng.choice(plain)
        pool = (
            string.digits
            if body[at].isdigit()
            else string.ascii_uppercase
            if body[at].isupper()
            else string.ascii_lowercase
        )
        new = self.rng.choice([c for c in pool if c != body[at]])
        return head + (body[:at] + new + body[at + 1 :]).encode("utf-8", "surrogateescape") + tail

    def collection(self, source: bytes, node: Node) -> bytes | None:
        """The collection with a random element dropped or repeated (an empty one: None)."""
        kind = node.type
        elements = named_children(node)
        if not elements:
            return None
        at = self.rng.randrange(len(elements))
        if self.rng.random() < 0.5 or kind in ("dictionary", "object"):
            if len(elements) == 1:
                return EMPTY[kind]
            if kind == "tuple" and len(elements) == 2:
                keep = elements[1 - at]
                return b"(" + text(source, keep) + b",)"
            cut_start = elements[at - 1].end_byte if at > 0 else elements[0].start_byte
            cut_end = elements[at].end_byte if at > 0 else elements[1].start_byte
            return source[node.start_byte : cut_start] + source[cut_end : node.end_byte]
        element = elements[at]
        copy = text(source, element)
        return source[node.start_byte : element.end_byte] + b", " + copy + source[element.end_byte : node.end_byte]

    def vec(self, source: bytes, tree: Node) -> bytes | None:
        """`vec![a, b, c]`'s token tree with a random element dropped or repeated."""
        groups: list[list[Node]] = [[]]
        for token in tree.children[1:-1]:
            if token.type == ",":
                groups.append([])
            else:
                groups[-1].append(token)
        groups = [g for g in groups if g]
        if not groups:
            return None
        spans = [(g[0].start_byte, g[-1].end_byte) for g in groups]
        at = self.rng.randrange(len(spans))
        pieces = [source[s:e] for s, e in spans]
        if len(pieces) > 1 and self.rng.random() < 0.5:  # never empty: `vec![]` has no element type to infer
            del pieces[at]
        else:
            pieces.insert(at, pieces[at])
        return b"[" + b", ".join(pieces) + b"]"

    def literal(self, source: bytes, node: Node) -> tuple[bytes, str] | None:
        """The one change for a literal node, with what it is in words."""
        if node.type in NUMBERS:
            negated = node.prev_sibling is not None and text(source, node.prev_sibling) == b"-"
            held = frozenset(v for v in (_value(text(source, n)) for n in _held(node, NUMBERS)) if v is not None)
            for _ in range(8):  # `-0` is no new value (and reads as a made-up one)
                moved = self.number(text(source, node), held)
                if moved is None or not (negated and _value(moved) == 0):
                    return (moved, "number moved") if moved is not None else None
            return None
        if node.type in STRINGS:
            altered = self.string(source, node, frozenset(text(source, n) for n in _held(node, STRINGS)))
            return (altered, "string altered") if altered is not None else None
        if node.type in ("true", "false", "boolean_literal"):
            flipped = BOOLEANS.get(text(source, node).strip())
            return (flipped, "boolean flipped") if flipped is not None else None
        if node.type == "char_literal":
            body = text(source, node)
            if len(body) == 3 and body[1:2].isalnum():
                new = self.rng.choice([c for c in string.ascii_lowercase if c.encode() != body[1:2]])
                return b"'" + new.encode() + b"'", "character changed"
        return None


def _held(node: Node, kinds: frozenset[str]) -> list[Node]:
    """The other literals of `kinds` in the function `node` sits in (the whole file outside one)."""
    scope = node.parent
    while scope is not None and scope.type not in _SCOPES:
        scope = scope.parent
    if scope is None:
        scope = node
        while scope.parent is not None:
            scope = scope.parent
    return [n for n in walk(scope) if n.type in kinds and n.id != node.id]


def _value(literal: bytes) -> float | None:
    shape = _shape(literal)
    if shape is None:
        return None
    digits = literal.decode("ascii", "replace").replace("_", "")
    return float(digits[: len(digits) - len(shape[1])] if shape[1] else digits)


def _alike(a: bytes, b: bytes) -> bool:
    """Two strings of one kind: a copy expecting "bash" where the test expects "5" would stand out."""

    def kind(s: bytes) -> tuple[bool, bool, bool]:
        return (
            any(c.isdigit() for c in s.decode("utf-8", "replace")),
            any(c.isalpha() for c in s.decode("utf-8", "replace")),
            b" " in s,
        )

    return kind(a) == kind(b) and max(len(a), len(b)) <= 2 * min(len(a), len(b)) + 2


def _string_parts(node: Node) -> tuple[Node, Node] | None:
    """The opening and closing delimiters of a plain string (None: it interpolates)."""
    kids = node.children
    if len(kids) < 2 or any(k.type in ("interpolation", "template_substitution") for k in kids):
        return None
    return kids[0], kids[-1]


def negated(source: bytes, node: Node, operator: bytes) -> bytes:
    """`not x` / `!x` written as a test would write it: parentheses only when x needs them."""
    primary = node.type in ("call", "identifier", "attribute", "subscript", "call_expression", "member_expression")
    inner = text(source, node)
    return operator + (inner if primary else b"(" + inner + b")")
