"""One Go test's names and the values its checks compare: declarations, tables, and each change."""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

from tree_sitter import Node

from verifiers.canaries.go_file import (
    BUILTINS,
    CONVERSIONS,
    DECIMAL,
    EQUALS,
    NUMBERS,
    SENTINEL_NAME,
    STRINGS,
    GoFile,
    elements,
    expected_index,
    params_of,
    unwrap,
)
from verifiers.canaries.sites import text, walk

_LIMITS = tuple(2**b + d for b in (7, 8, 15, 16, 31, 32, 63) for d in (-1, 0))  # an integer type's edges
_ESCAPES = re.compile(rb'\\(?:[abfnrtv\\\'"]|[0-7]{3}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})')
VALUE, TABLE, SENTINEL, OTHER = "value", "table", "sentinel", "other"


@dataclass(frozen=True)
class Def:
    name: str
    visible: int  # from this byte on (the end of the statement that declares it)
    scope: Node
    value: Node | None  # what it is bound to, when one expression is
    table: Node | None = None  # a range's value variable: what it ranges over


class TestValues:
    """One test function: its names, and what its checks compare and how each can change."""

    def __init__(self, file: GoFile, function: Node):
        self.file, self.function, self.source, self.rng = file, function, file.source, file.mutator.rng
        self.defs: dict[str, list[Def]] = {}
        self.helpers: dict[bytes, int | None] = {}  # closures that assert: `check := func(...) {...}`
        for node in [function, *walk(function)]:
            if node.type in ("function_declaration", "func_literal"):
                for name, _ in params_of(node, self.source):
                    self._bind(name, node.child_by_field_name("parameters") or node, node, None)
            elif node.type in ("short_var_declaration", "var_spec", "const_spec", "range_clause"):
                self._declare(node)
        for node in walk(function):
            if node.type == "short_var_declaration":
                left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
                if left is not None and right is not None and len(left.named_children) == 1:
                    closure = unwrap(right.named_children[0]) if right.named_children else None
                    if closure is not None and closure.type == "func_literal" and self._asserts(closure):
                        self.helpers[text(self.source, left)] = expected_index(closure, self.source)

    def _asserts(self, closure: Node) -> bool:
        return any(self.file.fails(c, self.helpers) for c in walk(closure) if c.type == "call_expression")

    def _bind(self, name: str, statement: Node, scope: Node, value: Node | None, table: Node | None = None) -> None:
        if name != "_":
            self.defs.setdefault(name, []).append(Def(name, statement.end_byte, scope, value, table))

    def _declare(self, node: Node) -> None:
        scope = node.parent or node
        if scope.type in ("for_clause", "var_spec_list", "const_spec_list", "ERROR"):
            scope = scope.parent or scope
        if scope.type in ("var_declaration", "const_declaration"):
            scope = scope.parent or scope
        if node.type in ("var_spec", "const_spec"):
            names = [n for n in node.children_by_field_name("name")]
            values = node.child_by_field_name("value")
        else:
            left = node.child_by_field_name("left")
            names = [n for n in left.named_children if n.type == "identifier"] if left is not None else []
            values = node.child_by_field_name("right")
        exprs = [v for v in values.named_children if v.type != "comment"] if values is not None else []
        if node.type == "range_clause":
            ranged = node.child_by_field_name("right")
            for at, named in enumerate(names):
                self._bind(text(self.source, named).decode(), node, scope, None, ranged if at == 1 else None)
            return
        for at, named in enumerate(names):
            value = exprs[at] if len(exprs) == len(names) else None
            self._bind(text(self.source, named).decode(), node, scope, value)

    def resolve(self, use: Node) -> Def | None:
        visible = [
            d
            for d in self.defs.get(text(self.source, use).decode(), [])
            if d.visible <= use.start_byte and d.scope.start_byte <= use.start_byte < d.scope.end_byte
        ]
        return max(visible, key=lambda d: d.visible) if visible else None

    # -- what a check compares -----------------------------------------------------------------
    def failing(self, statement: Node) -> str | None:
        """ "then" or "else": the branch of an `if` that fails the test, at its top level."""
        for branch, field in (("then", "consequence"), ("else", "alternative")):
            block = statement.child_by_field_name(field)
            listed = next((c for c in block.named_children if c.type == "statement_list"), None) if block else None
            for child in listed.named_children if listed is not None else []:
                call = (
                    child.named_children[0] if child.type == "expression_statement" and child.named_children else None
                )
                if call is not None and call.type == "call_expression" and self.file.fails(call, self.helpers):
                    return branch
        return None

    def asserting(self, use: Node) -> bool:
        """A use of a value that only checks: in a failing `if`'s condition (through equality and
        `len` calls only), in a failure's message, or an argument of an assertion helper."""
        current = use
        while current.parent is not None:
            parent = current.parent
            if parent.type == "call_expression" and parent.child_by_field_name("arguments") == current:
                function = parent.child_by_field_name("function")
                called = text(self.source, function) if function is not None else b""
                operand = function.child_by_field_name("operand") if function is not None else None
                if operand is not None and text(self.source, operand).decode() in self.file.testers:
                    return True
                if called in self.file.helpers or called in self.helpers:
                    return True
                if called not in EQUALS | BUILTINS | CONVERSIONS:
                    return False
            elif parent.type == "if_statement" and parent.child_by_field_name("condition") == current:
                return self.failing(parent) is not None
            elif parent.type.endswith(("statement", "declaration", "block", "func_literal", "clause")):
                return False
            current = parent
        return False

    def role(self, node: Node) -> str:
        node = unwrap(node)
        kind = node.type
        if kind in NUMBERS | STRINGS | {"rune_literal", "true", "false", "nil"}:
            return VALUE
        if kind == "unary_expression" and text(self.source, node.child_by_field_name("operator") or node) in (
            b"-",
            b"+",
        ):
            return self.role(node.child_by_field_name("operand") or node)
        if kind == "composite_literal":
            body = node.child_by_field_name("body")
            parts = elements(body) if body is not None else []
            return VALUE if all(self.role(p) in (VALUE, SENTINEL) for p in parts) else OTHER
        if kind == "literal_value":
            return VALUE if all(self.role(p) in (VALUE, SENTINEL) for p in elements(node)) else OTHER
        if kind == "call_expression":
            function, arguments = node.child_by_field_name("function"), node.child_by_field_name("arguments")
            if function is not None and arguments is not None and text(self.source, function) in CONVERSIONS:
                return VALUE if all(self.role(a) == VALUE for a in arguments.named_children) else OTHER
        if kind == "identifier":
            found = self.resolve(node)
            if found is None:
                return SENTINEL if SENTINEL_NAME.match(text(self.source, node).decode()) else OTHER
            if found.value is not None and self.role(found.value) in (VALUE, SENTINEL) and self._checks_only(found):
                return VALUE
        if kind == "selector_expression":
            if self._table(node) is not None:
                return TABLE
            operand = node.child_by_field_name("operand")
            if operand is not None and operand.type == "identifier" and self.resolve(operand) is None:
                return SENTINEL if SENTINEL_NAME.match(text(self.source, node).decode()) else OTHER
        return OTHER

    def _checks_only(self, found: Def) -> bool:
        uses = [
            n
            for n in walk(found.scope)
            if n.type == "identifier" and text(self.source, n).decode() == found.name and self.resolve(n) == found
        ]
        return bool(uses) and all(self.asserting(u) for u in uses)

    def _table(self, selector: Node) -> tuple[Node, bytes, Def] | None:
        """`tc.want` of `for _, tc := range tests`, `tests` a table literal of this test, whose
        `want` field only checks: the table and the field."""
        operand, field = selector.child_by_field_name("operand"), selector.child_by_field_name("field")
        found = self.resolve(operand) if operand is not None and operand.type == "identifier" else None
        if found is None or field is None or found.table is None:
            return None
        table = unwrap(found.table)
        if table.type == "identifier":
            bound = self.resolve(table)
            table = unwrap(bound.value) if bound is not None and bound.value is not None else table
        if table.type != "composite_literal":
            return None
        for n in walk(found.scope):
            if n.type == "selector_expression" and text(self.source, n.child_by_field_name("field") or n) == text(
                self.source, field
            ):
                inner = n.child_by_field_name("operand")
                if inner is not None and inner.type == "identifier" and self.resolve(inner) == found:
                    if not self.asserting(n):
                        return None
        return table, text(self.source, field), found

    def fields(self, table: Node) -> list[bytes]:
        """The field names of a table's rows, in order (for rows written without keys)."""
        kind = table.child_by_field_name("type")
        row = kind.child_by_field_name("value" if kind.type == "map_type" else "element") if kind else None
        for _ in range(8):  # `[]*row`, `type rows []row`: a few names deep at most (never a loop)
            if row is None or row.type not in ("pointer_type", "type_identifier"):
                break
            if row.type == "pointer_type":
                row = row.named_children[0] if row.named_children else None
            else:
                row = self.file.structs.get(text(self.source, row))
        if row is None or row.type != "struct_type":
            return []
        names = []
        for declared in walk(row):
            if declared.type == "field_declaration":
                named = declared.children_by_field_name("name")
                kinds = declared.child_by_field_name("type")
                names += [text(self.source, n) for n in named] or [text(self.source, kinds or declared)]
        return names

    def rows(self, table: Node, field: bytes) -> list[Node]:
        """Each row's value of `field`."""
        body = table.child_by_field_name("body")
        order = self.fields(table)
        found = []
        for row in elements(body) if body is not None else []:
            row = unwrap(row.child_by_field_name("operand") or row) if row.type == "unary_expression" else row
            row = row.child_by_field_name("body") or row if row.type == "composite_literal" else row
            if row.type != "literal_value":
                continue
            keyed = [e for e in row.named_children if e.type == "keyed_element"]
            if keyed:
                found += [
                    unwrap(e.named_children[-1]) for e in keyed if text(self.source, e.named_children[0]) == field
                ]
            elif field in order and order.index(field) < len(values := elements(row)):
                found.append(values[order.index(field)])
        return found

    # -- the changes ---------------------------------------------------------------------------
    def change(self, node: Node) -> tuple[int, int, bytes, str, Node] | None:
        """The expected value `node` changed: (start, end, new text, what changed, where it is
        written: the claim a reader of the canary's finding sees)."""
        node = unwrap(node)
        kind = node.type
        if kind in NUMBERS | STRINGS | {"rune_literal", "true", "false"}:
            moved = self.literal(node)
            return (node.start_byte, node.end_byte, moved[0], moved[1], node) if moved is not None else None
        if kind in ("unary_expression", "call_expression"):
            inner = node.child_by_field_name("operand") or node.child_by_field_name("arguments")
            parts = (
                [inner] if inner is not None and kind == "unary_expression" else inner.named_children if inner else []
            )
            return next((c for p in parts if (c := self.change(p)) is not None), None)
        if kind in ("composite_literal", "literal_value"):
            body = node.child_by_field_name("body") if kind == "composite_literal" else node
            return next((c for p in (elements(body) if body else []) if (c := self.change(p)) is not None), None)
        if kind == "identifier" and (found := self.resolve(node)) is not None and found.value is not None:
            changed = self.change(found.value)
            return changed[:4] + (found.value.parent or found.value,) if changed is not None else None
        if kind == "selector_expression" and (table := self._table(node)) is not None:
            for row in self.rows(table[0], table[1]):
                changed = self.change(row)
                if changed is not None:
                    return changed[:4] + (row.parent or row,)
            return None
        if self.role(node) == SENTINEL:
            written = text(self.source, node)
            others = [s for s in self.file.sentinels.get(written.rpartition(b".")[0], []) if s != written]
            if others:
                return node.start_byte, node.end_byte, self.rng.choice(others), "expected error swapped", node
        return None

    def literal(self, node: Node) -> tuple[bytes, str] | None:
        """A literal's change, new to its test; a number kept in the integer type it may have."""
        written, mutator = text(self.source, node), self.file.mutator
        same = [n for n in walk(self.function) if n.type == node.type and n.id != node.id]
        if node.type in ("true", "false"):
            return (b"false" if node.type == "true" else b"true"), "boolean flipped"
        if node.type == "rune_literal":
            runes = {text(self.source, n)[1:2] for n in same} | {written[1:2]}
            kind = (
                string.digits
                if written[1:2].isdigit()
                else string.ascii_uppercase
                if written[1:2].isupper()
                else string.ascii_lowercase
            )
            pool = [c.encode() for c in kind if c.encode() not in runes]  # 'Q' stays a capital
            ok = len(written) == 3 and written[1:2].isalnum() and pool
            return (b"'" + self.rng.choice(pool) + b"'", "character changed") if ok else None
        if node.type in STRINGS:
            for _ in range(8):
                altered = mutator.string(
                    self.source,
                    node,
                    frozenset(text(self.source, n) for n in same + _others(self.function, node, STRINGS)),
                )
                if altered is None:
                    return None
                if node.type == "raw_string_literal" or not re.sub(_ESCAPES, b"", altered[1:-1]).count(b"\\"):
                    return altered, "string altered"
            return None
        if node.type == "int_literal" and not DECIMAL.match(written):
            return None
        held = frozenset(_magnitude(text(self.source, n)) for n in _others(self.function, node, NUMBERS))
        parent = node.parent
        negated = parent is not None and parent.type == "unary_expression" and text(self.source, parent)[:1] == b"-"
        divisor = (
            parent is not None and parent.type == "binary_expression" and parent.child_by_field_name("right") == node
        )
        for _ in range(8):
            moved = mutator.number(written, held)
            if moved is None:
                return None
            old, new = _magnitude(written), _magnitude(moved)
            if (negated or divisor) and new == 0:
                continue  # `-0` reads as a made-up value; a constant divisor of 0 does not compile
            if node.type == "int_literal" and any(old <= edge < new for edge in _LIMITS):
                continue  # 255 moved to 257 no longer fits a byte
            return moved, "number moved"
        return None


def _others(function: Node, node: Node, kinds: frozenset[str]) -> list[Node]:
    return [n for n in walk(function) if n.type in kinds and n.id != node.id]


def _magnitude(literal: bytes) -> float:
    try:
        return abs(float(literal.replace(b"_", b"")))
    except ValueError:
        return -1.0
