"""go test tests (`func TestX(t *testing.T)` at the top level of a `_test.go` file) and the sites
of their assertions: an `if` whose branch fails the test (`t.Error`, `t.Errorf`, `t.Fatal`,
`t.Fatalf`, `t.Fail`, `t.FailNow`, or a helper of the file that calls one), with its expected
side (a literal, a value the test declares, the field of one entry of the table the test ranges
over, a sentinel error), `reflect.DeepEqual`, `bytes.Equal`, `errors.Is`; the expected argument
of an assertion helper (`check(t, got, want)`); and the inputs of the calls they check.

Every change keeps the file compiling, since the test binary holds the real tests too: a literal
stays a literal of its kind, a number within the integer type it may have, a string's escapes
valid, a map's keys untouched, and a value the test also feeds its code is never the one changed.
"""

from __future__ import annotations

import random

from tree_sitter import Node

from verifiers.canaries.go_file import (
    BUILTINS,
    CONVERSIONS,
    EQUALS,
    NUMBERS,
    STRINGS,
    GoFile,
    GoValues,
    is_test,
    unwrap,
)
from verifiers.canaries.go_values import OTHER, TABLE, VALUE, TestValues
from verifiers.canaries.sites import (
    CONTRADICTION,
    MAX_SITES_PER_TEST,
    NEW_INPUT,
    FileTests,
    Site,
    TestUnit,
    parse,
    text,
    walk,
)

_NEGATED = {b"==": b"!=", b"!=": b"==", b"<": b">=", b">=": b"<", b">": b"<=", b"<=": b">"}


def tests_of(path: str, source: bytes, rng: random.Random) -> FileTests:
    root = parse(source, "go")
    file = GoFile(source, root, GoValues(rng, source, root))
    units: list[TestUnit] = []
    taken: set[str] = set()
    comment_start: int | None = None
    for child in root.named_children:
        if child.type == "comment":
            comment_start = child.start_byte if comment_start is None else comment_start
            continue
        start, comment_start = (comment_start if comment_start is not None else child.start_byte), None
        for node in [child, *walk(child, frozenset({"block", "function_declaration", "method_declaration"}))]:
            if node.type in ("function_declaration", "type_spec", "var_spec", "const_spec"):
                named = node.child_by_field_name("name")
                taken.update([text(source, named).decode()] if named is not None else [])
        name_node = child.child_by_field_name("name")
        if child.type != "function_declaration" or name_node is None or not is_test(child, source):
            continue
        units.append(
            TestUnit(
                name=text(source, name_node).decode(),
                name_span=(name_node.start_byte, name_node.end_byte),
                start=start,
                end=child.end_byte,
                indent=b"",
                container=root.start_byte,
                sites=tuple(_Test(file, child).sites()[:MAX_SITES_PER_TEST]),
            )
        )
    return FileTests(path, "go", tuple(units), frozenset(taken))


class _Test(TestValues):
    """One test function: the sites of its checks."""

    def flipped(self, condition: Node) -> tuple[int, int, bytes, str]:
        """The condition's negation: its claim is then the real test's claim negated."""
        node = unwrap(condition)
        operator = node.child_by_field_name("operator")
        written = text(self.source, operator) if operator is not None else b""
        if node.type == "binary_expression" and operator is not None and written in _NEGATED:
            return operator.start_byte, operator.end_byte, _NEGATED[written], "comparison flipped"
        if node.type == "unary_expression" and written == b"!":
            operand = node.child_by_field_name("operand") or node
            return node.start_byte, node.end_byte, text(self.source, operand), "truth flipped"
        primary = node.type in ("identifier", "call_expression", "selector_expression", "parenthesized_expression")
        inner = text(self.source, condition)
        return (
            condition.start_byte,
            condition.end_byte,
            b"!" + inner if primary else b"!(" + inner + b")",
            "truth flipped",
        )

    # -- the sites -----------------------------------------------------------------------------
    def sites(self) -> list[Site]:
        values: list[Site] = []
        inputs: list[Site] = []
        flips: list[Site] = []
        for node in walk(self.function):
            if node.type == "if_statement" and (branch := self.failing(node)) is not None:
                condition = node.child_by_field_name("condition")
                consequence = node.child_by_field_name("consequence")
                if condition is None or consequence is None:
                    continue
                claim = (node.start_byte, consequence.start_byte)
                compared = [self._compared(a, b, claim) for a, b in self._equalities(condition, branch == "then")]
                for value, new_input in compared:
                    values += [value] if value is not None else []
                    inputs += [new_input] if new_input is not None else []
                if not any(value for value, _ in compared):
                    start, end, new, how = self.flipped(condition)
                    flips.append(Site(start, end, new, CONTRADICTION, how, claim))
            elif node.type == "call_expression":
                site = self._helper_site(node)
                if site is not None:
                    (values if site.kind == CONTRADICTION else inputs).append(site)
        unique: dict[tuple[tuple[int, int, bytes], ...], Site] = {}
        for site in values + inputs + flips:
            unique.setdefault(tuple(site.edits), site)
        return list(unique.values())

    def _equalities(self, condition: Node, then: bool) -> list[tuple[Node, Node]]:
        """The pairs a failing branch says are equal: `a != b` (and `||` of them) failing in the
        then-branch, `a == b` (and `&&`) in the else-branch, `!reflect.DeepEqual(a, b)`."""
        node = unwrap(condition)
        operator = node.child_by_field_name("operator")
        written = text(self.source, operator) if operator is not None else b""
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if node.type == "binary_expression" and left is not None and right is not None:
            if written == (b"||" if then else b"&&"):
                return self._equalities(left, then) + self._equalities(right, then)
            return [(left, right)] if written == (b"!=" if then else b"==") else []
        if node.type == "unary_expression" and written == b"!":
            return self._equalities(node.child_by_field_name("operand") or node, not then)
        function = node.child_by_field_name("function") if node.type == "call_expression" else None
        arguments = node.child_by_field_name("arguments") if function is not None else None
        if not then and arguments is not None and text(self.source, function or node) in EQUALS:
            args = [a for a in arguments.named_children if a.type != "comment"]
            return [(args[0], args[1])] if len(args) == 2 else []
        return []

    def _compared(self, a: Node, b: Node, claim: tuple[int, int]) -> tuple[Site | None, Site | None]:
        """A comparison's expected side changed (a contradiction), and its checked call's input
        changed with a new expected value (a new input)."""
        roles = self.role(a), self.role(b)
        if roles[0] != OTHER and roles[1] == OTHER:
            a, b, roles = b, a, (roles[1], roles[0])
        if roles[0] != OTHER or roles[1] == OTHER:
            return None, None
        changed = self.change(b)
        if changed is None:
            return None, None
        start, end, new, how, where = changed
        value = Site(start, end, new, CONTRADICTION, how, _claim(where, claim, b))
        call = unwrap(a)
        if call.type == "identifier" and (found := self.resolve(call)) is not None and found.value is not None:
            call = unwrap(found.value)
        if roles[1] == TABLE:
            return value, self._row_input(b)
        if roles[1] != VALUE or call.type != "call_expression":
            return value, None
        function = call.child_by_field_name("function")
        if function is None or text(self.source, function) in CONVERSIONS | BUILTINS:
            return value, None
        for argument in (call.child_by_field_name("arguments") or call).named_children:
            literal = unwrap(argument)
            literal = (
                literal.child_by_field_name("operand") or literal if literal.type == "unary_expression" else literal
            )
            if literal.type in NUMBERS | STRINGS | {"rune_literal"} and (moved := self.literal(literal)) is not None:
                again = self.change(b)
                more = ((again[0], again[1], again[2]),) if again is not None and again[0] != literal.start_byte else ()
                edit = (literal.start_byte, literal.end_byte, moved[0])
                return value, Site(*edit, NEW_INPUT, "input changed", claim, more) if more else None
        return value, None

    def _row_input(self, expected: Node) -> Site | None:
        """One row's input changed (a field the loop feeds its code), its expected value kept."""
        found = self._table(unwrap(expected))
        if found is None:
            return None
        table, field, ranged = found
        for use in walk(ranged.scope):
            operand = use.child_by_field_name("operand") if use.type == "selector_expression" else None
            if operand is None or operand.type != "identifier" or self.resolve(operand) != ranged:
                continue
            name = text(self.source, use.child_by_field_name("field") or use)
            if name == field or self.asserting(use) or not self._fed(use):
                continue
            rows = self.rows(table, name)
            literal = unwrap(rows[0]) if rows else None
            if literal is not None and literal.type in NUMBERS | STRINGS and (moved := self.literal(literal)):
                claim = literal.parent.parent if literal.parent and literal.parent.parent else literal
                edit = (literal.start_byte, literal.end_byte, moved[0])
                return Site(*edit, NEW_INPUT, "table row changed", (claim.start_byte, claim.end_byte))
        return None

    def _fed(self, use: Node) -> bool:
        """A value passed to a call (what a test feeds its code), not a subtest's name."""
        parent = use.parent
        call = parent.parent if parent is not None and parent.type == "argument_list" else None
        function = call.child_by_field_name("function") if call is not None else None
        return function is not None and not text(self.source, function).endswith(b".Run")

    def _helper_site(self, call: Node) -> Site | None:
        """`check(t, got, want)`: the argument the helper expects changed; a helper whose expected
        parameter is not named so has its last argument changed, as a new input."""
        function, arguments = call.child_by_field_name("function"), call.child_by_field_name("arguments")
        if function is None or arguments is None or function.type != "identifier":
            return None
        name = text(self.source, function)
        if name not in self.file.helpers and name not in self.helpers:
            return None
        index = self.helpers[name] if name in self.helpers else self.file.helpers[name]
        args = [a for a in arguments.named_children if a.type != "comment"]
        if not args or (index is not None and index >= len(args)):
            return None
        expected = args[-1 if index is None else index]
        if self.role(expected) == OTHER or (changed := self.change(expected)) is None:
            return None
        start, end, new, how, where = changed
        claim = (call.start_byte, call.end_byte)
        if index is None:
            return Site(start, end, new, NEW_INPUT, "expected argument changed", _claim(where, claim, expected))
        return Site(start, end, new, CONTRADICTION, how, _claim(where, claim, expected))


def _claim(where: Node, check: tuple[int, int], expected: Node) -> tuple[int, int]:
    """The check itself when the change is written in it, else the statement or row holding it."""
    if check[0] <= where.start_byte < check[1]:
        return check
    holder = where
    while holder.parent is not None and holder.type not in ("literal_value", "short_var_declaration", "var_spec"):
        holder = holder.parent
    return holder.start_byte, min(holder.end_byte, holder.start_byte + 400)
