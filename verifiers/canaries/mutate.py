"""The changes a canary makes to one expression of a test, by tree-sitter node kind, in each
language's grammar: a number moved, a string altered, a boolean flipped, a collection altered.
Every change keeps the file valid (a compiled test file that no longer builds would take the
real tests down with it): numbers move towards zero rather than past a type's range, Rust
arrays keep their length (only `vec![...]` loses an element)."""

from __future__ import annotations

import math
import re

from tree_sitter import Node

from verifiers.canaries.sites import named_children, text

NUMBERS = frozenset({"integer", "float", "number", "integer_literal", "float_literal"})
STRINGS = frozenset({"string", "string_literal", "template_string"})
BOOLEANS = {b"True": b"False", b"False": b"True", b"true": b"false", b"false": b"true"}
COLLECTIONS = frozenset({"list", "tuple", "set", "dictionary", "array", "object"})
EMPTY = {"list": b"[]", "tuple": b"()", "set": b"set()", "dictionary": b"{}", "array": b"[]", "object": b"{}"}
ONE_MORE = {"list": b"[None]", "tuple": b"(None,)", "dictionary": b"{None: None}", "array": b"[null]"}
_NUMBER = re.compile(r"^(\d+)((?:\.\d*)?(?:[eE][+-]?\d+)?)([A-Za-z_]\w*)?$")
_FLOAT_SUFFIXES = ("f32", "f64")


def moved_number(literal: bytes) -> bytes | None:
    """A different number of the same kind: an integer one step towards zero (so it stays in
    its type's range) or to 1 from 0, a float plus one. Hex, octal and binary literals: None."""
    written = literal.decode("ascii", "replace").replace("_", "")
    match = _NUMBER.match(written)
    if match is None:
        return None
    whole, fraction, suffix = match.group(1), match.group(2), match.group(3) or ""
    if len(whole) > 1 and whole.startswith("0") and not fraction:
        return None  # 0755, 0x..: not a plain decimal
    if fraction or suffix in _FLOAT_SUFFIXES:
        value = float(whole + fraction) + 1.0
        if not math.isfinite(value):
            return None
        shown = repr(value)
        return (shown if "e" in shown or "." in shown else shown + ".0").encode() + suffix.encode()
    number = int(whole)
    return str(number - 1 if number > 0 else 1).encode() + suffix.encode()


def _string_parts(node: Node) -> tuple[Node, Node] | None:
    """The opening and closing delimiters of a plain string (None: it interpolates, or is raw)."""
    kids = node.children
    if len(kids) < 2 or any(k.type in ("interpolation", "template_substitution") for k in kids):
        return None
    return kids[0], kids[-1]


def altered_string(source: bytes, node: Node) -> bytes | None:
    """The same string with its last character changed (or one added): `"a-b"` -> `"a-c"`."""
    parts = _string_parts(node)
    if parts is None:
        return None
    opening, closing = parts
    inner = node.children[1:-1]
    head = source[node.start_byte : opening.end_byte]
    tail = source[closing.start_byte : node.end_byte]
    body = source[opening.end_byte : closing.start_byte]
    last = inner[-1] if inner else None
    if last is None or last.type == "escape_sequence" or not body:
        return head + body + b"x" + tail
    content = body.decode("utf-8", "surrogateescape")
    final = content[-1]
    if final.isascii() and final.isalnum():
        swapped = {"z": "a", "Z": "A", "9": "0"}.get(final, chr(ord(final) + 1))
        return head + (content[:-1] + swapped).encode("utf-8", "surrogateescape") + tail
    return head + body + b"x" + tail


def flipped_boolean(source: bytes, node: Node) -> bytes | None:
    return BOOLEANS.get(text(source, node).strip())


def altered_collection(source: bytes, node: Node) -> bytes | None:
    """The collection without its last element (an empty one gets one)."""
    kind = node.type
    elements = named_children(node)
    if not elements:
        return ONE_MORE.get(kind)
    if len(elements) == 1:
        if kind in ("set", "tuple"):
            return EMPTY[kind]
        return source[node.start_byte : elements[0].start_byte] + source[elements[0].end_byte : node.end_byte]
    if kind == "tuple" and len(elements) == 2:  # (a, b) -> (a,)
        return source[node.start_byte : elements[0].end_byte] + b",)"
    return source[node.start_byte : elements[-2].end_byte] + source[elements[-1].end_byte : node.end_byte]


def rust_vec_without_last(source: bytes, tree: Node) -> bytes | None:
    """`vec![a, b, c]`'s token tree without its last element (`[a, b]`)."""
    inner = tree.children[1:-1]
    groups: list[list[Node]] = [[]]
    for token in inner:
        if token.type == ",":
            groups.append([])
        else:
            groups[-1].append(token)
    groups = [g for g in groups if g]
    if not groups:
        return None
    if len(groups) == 1:
        return b"[]"
    return source[tree.start_byte : groups[-2][-1].end_byte] + b"]"


def changed_literal(source: bytes, node: Node) -> tuple[bytes, str] | None:
    """The one change for a literal node, with what it is in words."""
    if node.type in NUMBERS:
        moved = moved_number(text(source, node))
        return (moved, "number moved") if moved is not None else None
    if node.type in STRINGS:
        altered = altered_string(source, node)
        return (altered, "string altered") if altered is not None else None
    if node.type in ("true", "false", "boolean_literal"):
        flipped = flipped_boolean(source, node)
        return (flipped, "boolean flipped") if flipped is not None else None
    if node.type == "char_literal":
        body = text(source, node)
        if len(body) == 3 and body[1:2].isalnum():
            return b"'" + (b"b" if body[1:2] != b"b" else b"c") + b"'", "character changed"
    return None
