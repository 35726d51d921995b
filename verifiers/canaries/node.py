"""node:test tests (`test(name, fn)` and `it(name, fn)`, at the top level or in a `describe`)
and the sites of their assertions: node:assert's `assert.equal(actual, expected)` and the rest of
its family, `assert.ok(x)` / `assert(x)`, `assert.throws(fn, Class)`; jest-style expectations
(`expect(actual).toEqual(expected)`, any matcher, `.not`, `.resolves` / `.rejects`); and literals
of the tables a test feeds its code. JavaScript and TypeScript share it (TypeScript's grammar is
JavaScript's with types)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from tree_sitter import Node

from verifiers.canaries.mutate import COLLECTIONS, Mutator, negated
from verifiers.canaries.sites import (
    CONTRADICTION,
    MAX_SITES_PER_TEST,
    NEW_INPUT,
    FileTests,
    Site,
    TestUnit,
    indent_of,
    parse,
    text,
    walk,
)

ASSERT_MODULES = frozenset({"assert", "node:assert", "assert/strict", "node:assert/strict"})
TEST_FUNCTIONS = frozenset({"test", "it"})
_EQUALITY = frozenset({"equal", "strictEqual", "deepEqual", "deepStrictEqual", "partialDeepStrictEqual"})
_NEGATED = {
    "notEqual": "equal",
    "notStrictEqual": "strictEqual",
    "notDeepEqual": "deepEqual",
    "notDeepStrictEqual": "deepStrictEqual",
}
_FLIP = {v: k for k, v in _NEGATED.items() if k != "partialDeepStrictEqual"} | _NEGATED
_LITERALS = frozenset({"number", "string", "template_string", "true", "false"})
_SCOPES = frozenset({"function_declaration", "class_declaration"})
_TABLE_SITES = 2
# jest matchers whose argument is the expected value: a canary changes it (else negates the claim)
_EXPECTED_VALUE = frozenset(
    {"toBe", "toEqual", "toStrictEqual", "toBeCloseTo", "toHaveLength", "toMatchObject", "toThrow"}
)
_TRUTH = {"toBeTruthy": "toBeFalsy", "toBeFalsy": "toBeTruthy"}
_PROMISED = frozenset({"resolves", "rejects"})
_ERRORS = (b"TypeError", b"RangeError", b"SyntaxError", b"ReferenceError")


def tests_of(path: str, source: bytes, grammar: str, rng: random.Random) -> FileTests:
    root = parse(source, grammar)
    asserts, local = _imports(root, source)
    mutator = Mutator(rng, source, root)
    units: list[TestUnit] = []
    taken: set[str] = set()
    for node in walk(root):
        if node.type != "expression_statement" or node.parent is None:
            continue
        call = node.named_children[0] if node.named_children else None
        named = _test_call(call, source) if call is not None else None
        if named is None:
            continue
        name, name_span, body = named
        taken.add(name)
        if name_span is None:
            continue
        units.append(
            TestUnit(
                name=name,
                name_span=name_span,
                start=node.start_byte,
                end=node.end_byte,
                indent=indent_of(source, node.start_byte),
                container=node.parent.start_byte,
                sites=tuple(_sites(body, source, asserts, local, mutator)[:MAX_SITES_PER_TEST]),
            )
        )
    return FileTests(path, grammar, tuple(units), frozenset(taken))


def _imports(root: Node, source: bytes) -> tuple[dict[str, str | None], set[str]]:
    """Names bound to node:assert (name -> the assertion it is, None for the module itself), and
    names imported from the workspace's own modules (relative imports)."""
    asserts: dict[str, str | None] = {}
    local: set[str] = set()
    for node in walk(root):
        if node.type == "variable_declarator":
            local.update(_required_locally(node, source))
        if node.type != "import_statement":
            continue
        module_node = node.child_by_field_name("source")
        module = text(source, module_node).strip(b"'\"`").decode() if module_node is not None else ""
        clause = next((c for c in node.named_children if c.type == "import_clause"), None)
        if clause is None:
            continue
        bound: list[tuple[str, str | None]] = []
        for part in clause.named_children:
            if part.type == "identifier":
                bound.append((text(source, part).decode(), None))
            elif part.type == "namespace_import":
                bound += [(text(source, i).decode(), None) for i in part.named_children if i.type == "identifier"]
            elif part.type == "named_imports":
                for spec in part.named_children:
                    names = [text(source, i).decode() for i in spec.named_children if i.type == "identifier"]
                    if names:
                        bound.append((names[-1], names[0]))
        if module in ASSERT_MODULES:
            asserts.update(bound)
        elif module.startswith("."):
            local.update(name for name, _ in bound)
    return asserts, local


def _required_locally(declarator: Node, source: bytes) -> list[str]:
    """The names `const { a, b: c } = require('./mod')` or `const m = require('./mod')` binds."""
    value = declarator.child_by_field_name("value")
    target = declarator.child_by_field_name("name")
    if value is None or target is None or value.type != "call_expression":
        return []
    function = value.child_by_field_name("function")
    arguments = value.child_by_field_name("arguments")
    if function is None or arguments is None or text(source, function) != b"require":
        return []
    module = [a for a in arguments.named_children if a.type == "string"]
    if not module or not text(source, module[0]).strip(b"'\"").startswith(b"."):
        return []
    if target.type == "identifier":
        return [text(source, target).decode()]
    names = []
    for part in target.named_children:
        if part.type == "shorthand_property_identifier_pattern":
            names.append(text(source, part).decode())
        elif part.type == "pair_pattern" and (bound := part.child_by_field_name("value")) is not None:
            names.append(text(source, bound).decode())
    return names


def _string_name(node: Node, source: bytes) -> tuple[str, tuple[int, int] | None] | None:
    """A test's name from its string literal, and the span a rename replaces (None when it has
    escapes or substitutions: such a test is named, not copied)."""
    if node.type not in ("string", "template_string"):
        return None
    inner = node.children[1:-1]
    if any(c.type != "string_fragment" for c in inner):
        return text(source, node).decode("utf-8", "replace"), None
    start = node.children[0].end_byte
    end = node.children[-1].start_byte
    return source[start:end].decode("utf-8", "replace"), (start, end)


def _test_call(call: Node, source: bytes) -> tuple[str, tuple[int, int] | None, Node] | None:
    if call.type != "call_expression":
        return None
    function = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    if function is None or arguments is None or function.type != "identifier":
        return None
    if text(source, function).decode() not in TEST_FUNCTIONS:
        return None
    args = [a for a in arguments.named_children if a.type != "comment"]
    if len(args) == 3 and args[2].type == "number":  # jest's timeout
        args = args[:2]
    if len(args) != 2 or args[1].type not in ("arrow_function", "function_expression", "function"):
        return None
    named = _string_name(args[0], source)
    body = args[1].child_by_field_name("body")
    if named is None or body is None or body.type != "statement_block":
        return None
    return named[0], named[1], body


def _assertion(call: Node, source: bytes, asserts: dict[str, str | None]) -> tuple[str, Node, Node] | None:
    """(which assertion, the node naming it, its arguments) for a call of node:assert."""
    function = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    if function is None or arguments is None:
        return None
    if function.type == "identifier":
        name = text(source, function).decode()
        if name in asserts:
            return asserts[name] or "ok", function, arguments
        return None
    if function.type == "member_expression":
        owner = function.child_by_field_name("object")
        prop = function.child_by_field_name("property")
        if owner is not None and prop is not None and text(source, owner).decode() in asserts:
            if asserts[text(source, owner).decode()] is None:
                return text(source, prop).decode(), prop, arguments
    return None


def _uses(node: Node, source: bytes, names: set[str]) -> bool:
    return any(n.type == "identifier" and text(source, n).decode() in names for n in [node, *walk(node)])


def _literals(node: Node) -> list[Node]:
    return [n for n in [node, *walk(node, _SCOPES)] if n.type in _LITERALS]


def _statement_of(node: Node) -> tuple[int, int]:
    current = node
    while current.parent is not None and current.type != "expression_statement":
        current = current.parent
    return current.start_byte, current.end_byte


def _sites(body: Node, source: bytes, asserts: dict[str, str | None], local: set[str], mutator: Mutator) -> list[Site]:
    sites: list[Site] = []
    tables = 0
    for node in walk(body, _SCOPES):
        if node.type == "call_expression":
            found = _assertion(node, source, asserts)
            expectation = _expectation(node, source) if found is None else None
            if found is not None:
                sites += _assert_sites(node, found, source, local, mutator)
            elif expectation is not None:
                sites += _expect_sites(node, expectation, source, local, mutator)
        elif node.type == "array" and tables < _TABLE_SITES and not _in_assertion(node, source, asserts):
            if node.parent is not None and node.parent.type == "array":
                continue
            site = _table_site(node, source, mutator)
            if site is not None:
                sites.append(site)
                tables += 1
    return sites


def _in_assertion(node: Node, source: bytes, asserts: dict[str, str | None]) -> bool:
    parent = node.parent
    while parent is not None and parent.type != "statement_block":
        if parent.type == "call_expression" and (
            _assertion(parent, source, asserts) is not None or _expectation(parent, source) is not None
        ):
            return True
        parent = parent.parent
    return False


def _assert_sites(
    call: Node, found: tuple[str, Node, Node], source: bytes, local: set[str], mutator: Mutator
) -> list[Site]:
    which, naming, arguments = found
    claim = _statement_of(call)
    args = [a for a in arguments.named_children if a.type != "comment"]
    sites: list[Site] = []
    if not args:
        return sites
    if which == "ok":
        first = args[0]
        if first.type == "unary_expression" and text(source, first).startswith(b"!"):
            operand = first.child_by_field_name("argument")
            flipped = text(source, operand) if operand is not None else b"!" + text(source, first)
        else:
            flipped = negated(source, first, b"!")
        return [Site(first.start_byte, first.end_byte, flipped, CONTRADICTION, "truth flipped", claim)]
    if which in _NEGATED and naming.type == "property_identifier":
        return [
            Site(
                naming.start_byte, naming.end_byte, _NEGATED[which].encode(), CONTRADICTION, "comparison flipped", claim
            )
        ]
    if which in ("throws", "rejects") and len(args) >= 2 and args[1].type == "identifier":
        swapped = mutator.rng.choice([e for e in _ERRORS if e != text(source, args[1])])
        return [Site(args[1].start_byte, args[1].end_byte, swapped, CONTRADICTION, "expected exception swapped", claim)]
    if which not in _EQUALITY or len(args) < 2:
        return sites
    actual, expected = args[0], args[1]
    change = _expected_change(expected, source, mutator)
    if change is not None:
        start, end, new, how = change
        sites.append(Site(start, end, new, NEW_INPUT if _uses(expected, source, local) else CONTRADICTION, how, claim))
    elif naming.type == "property_identifier" and which in _FLIP:
        flipped = _FLIP[which].encode()
        sites.append(Site(naming.start_byte, naming.end_byte, flipped, CONTRADICTION, "comparison flipped", claim))
    for literal in _literals(actual):
        parent = literal.parent
        if parent is None or parent.type != "arguments" or parent is arguments:
            continue
        moved = mutator.literal(source, literal)
        if moved is not None:
            again = _expected_change(expected, source, mutator)  # a new input, and a new expected value
            more = ((again[0], again[1], again[2]),) if again is not None else ()
            sites.append(Site(literal.start_byte, literal.end_byte, moved[0], NEW_INPUT, "input changed", claim, more))
            break
    return sites


def _expected_change(expected: Node, source: bytes, mutator: Mutator) -> tuple[int, int, bytes, str] | None:
    node = expected
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    if node.type in COLLECTIONS:
        altered = mutator.collection(source, node)
        if altered is not None:
            return node.start_byte, node.end_byte, altered, "collection altered"
    for literal in _literals(node):
        change = mutator.literal(source, literal)
        if change is not None:
            return literal.start_byte, literal.end_byte, change[0], change[1]
    return None


def _table_site(table: Node, source: bytes, mutator: Mutator) -> Site | None:
    """A table the test feeds its code: in a table of rows, the first row's last value changed
    (its expected value, usually); else its first two elements swapped, or its first literal
    changed."""
    claim = _statement_of(table)
    elements = [c for c in table.named_children if c.type != "comment"]
    if elements and all(e.type == "array" for e in elements):
        for literal in reversed(_literals(elements[0])):
            change = mutator.literal(source, literal)
            if change is not None:
                return Site(literal.start_byte, literal.end_byte, change[0], NEW_INPUT, "table row changed", claim)
    if len(elements) >= 2 and text(source, elements[0]) != text(source, elements[1]):
        first, second = elements[0], elements[1]
        swapped = text(source, second) + source[first.end_byte : second.start_byte] + text(source, first)
        return Site(first.start_byte, second.end_byte, swapped, NEW_INPUT, "input reordered", claim)
    for literal in _literals(table):
        change = mutator.literal(source, literal)
        if change is not None:
            return Site(literal.start_byte, literal.end_byte, change[0], NEW_INPUT, "input changed", claim)
    return None


@dataclass(frozen=True)
class _Expectation:
    """`expect(actual)[.resolves|.rejects][.not].matcher(args)`, read from one call."""

    matcher: Node  # the matcher's name
    negation: Node | None  # the `not` property, when there is one
    actual: Node  # expect's arguments
    arguments: Node  # the matcher's


def _expectation(call: Node, source: bytes) -> _Expectation | None:
    function = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    if function is None or arguments is None or function.type != "member_expression":
        return None
    matcher = function.child_by_field_name("property")
    owner = function.child_by_field_name("object")
    negation = None
    while owner is not None and owner.type == "member_expression":
        prop = owner.child_by_field_name("property")
        word = text(source, prop).decode() if prop is not None else ""
        if word == "not" and negation is None:
            negation = prop
        elif word not in _PROMISED:
            return None
        owner = owner.child_by_field_name("object")
    if matcher is None or owner is None or owner.type != "call_expression":
        return None
    head = owner.child_by_field_name("function")
    actual = owner.child_by_field_name("arguments")
    if head is None or actual is None or text(source, head) != b"expect":
        return None
    if not text(source, matcher).startswith(b"to"):
        return None
    return _Expectation(matcher, negation, actual, arguments)


def _expect_sites(call: Node, found: _Expectation, source: bytes, local: set[str], mutator: Mutator) -> list[Site]:
    claim = _statement_of(call)
    name = text(source, found.matcher).decode()
    args = [a for a in found.arguments.named_children if a.type != "comment"]
    sites: list[Site] = []
    change = _expected_change(args[0], source, mutator) if name in _EXPECTED_VALUE and args else None
    if change is not None:
        start, end, new, how = change
        sites.append(Site(start, end, new, NEW_INPUT if _uses(args[0], source, local) else CONTRADICTION, how, claim))
    else:  # the claim negated: a truth matcher swapped, `.not` taken out (from `not` to the name) or put in
        matcher = found.matcher
        if name in _TRUTH and found.negation is None:
            start, new, how = matcher.start_byte, _TRUTH[name].encode(), "truth flipped"
        elif found.negation is not None:
            start, new, how = found.negation.start_byte, name.encode(), "comparison flipped"
        else:
            start, new, how = matcher.start_byte, b"not." + name.encode(), "comparison flipped"
        sites.append(Site(start, matcher.end_byte, new, CONTRADICTION, how, claim))
    for literal in _literals(found.actual):
        parent = literal.parent
        if parent is None or parent.type != "arguments" or parent is found.actual:
            continue
        moved = mutator.literal(source, literal)
        if moved is not None:
            again = _expected_change(args[0], source, mutator) if name in _EXPECTED_VALUE and args else None
            more = ((again[0], again[1], again[2]),) if again is not None else ()
            sites.append(Site(literal.start_byte, literal.end_byte, moved[0], NEW_INPUT, "input changed", claim, more))
            break
    return sites
