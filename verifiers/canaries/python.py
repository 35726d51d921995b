"""pytest tests (module-level `test*` functions and `test*` methods of `Test*` classes) and the
sites of their assertions: `assert actual == expected` (and the other comparisons), `assert x`,
`with pytest.raises(E)`, and literals of the tables a test feeds its code."""

from __future__ import annotations

import random
import sys

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

_SCOPES = frozenset({"function_definition", "class_definition", "lambda"})
_LITERALS = frozenset({"integer", "float", "string", "true", "false"})
# each comparison's negation: the only change of a claim other than an equality that no answer
# passing the real test can also pass
_NEGATED = {
    b"==": b"!=",
    b"!=": b"==",
    b"in": b"not in",
    b"not in": b"in",
    b"is": b"is not",
    b"is not": b"is",
    b"<": b">=",
    b">=": b"<",
    b">": b"<=",
    b"<=": b">",
}
# what an expected exception becomes (one a test could expect as well: the copy must not stand out)
_EXCEPTIONS = (b"ValueError", b"TypeError", b"KeyError", b"IndexError", b"RuntimeError", b"AttributeError")
_UNCAUGHT = frozenset({b"KeyboardInterrupt", b"SystemExit", b"GeneratorExit", b"BaseException", b"BaseExceptionGroup"})
_TOLERANT = (b"approx", b"isclose", b"ANY")  # an expected value with a margin: a moved one may still match
_TABLE_SITES = 2


def tests_of(path: str, source: bytes, local_modules: frozenset[str], rng: random.Random) -> FileTests:
    """`local_modules`: the workspace's own top-level module names (the code under test)."""
    root = parse(source, "python")
    impure = _impure_names(root, source, local_modules)
    units: list[TestUnit] = []
    taken: set[str] = set()
    _collect(root, source, (impure, Mutator(rng, source, root)), "", units, taken)
    return FileTests(path, "python", tuple(units), frozenset(taken), separator=b"\n\n", top_separator=b"\n\n\n")


def _definition(node: Node) -> Node:
    return node.child_by_field_name("definition") or node if node.type == "decorated_definition" else node


def _name(node: Node, source: bytes) -> tuple[str, Node] | None:
    name = node.child_by_field_name("name")
    return (text(source, name).decode(), name) if name is not None else None


Context = tuple[set[str], Mutator]  # the names that reach the code under test, the file's changes


def _collect(
    block: Node, source: bytes, context: Context, qualifier: str, units: list[TestUnit], taken: set[str]
) -> None:
    for child in block.children:
        definition = _definition(child)
        named = _name(definition, source) if definition.type in ("function_definition", "class_definition") else None
        if named is None:
            continue
        name, name_node = named
        taken.add(name)
        body = definition.child_by_field_name("body")
        if body is None:
            continue
        if definition.type == "class_definition":
            if name.startswith("Test"):
                _collect(body, source, context, f"{qualifier}{name}::", units, taken)
            else:
                for inner in walk(body, _SCOPES - {"class_definition"}):
                    inner_name = _name(inner, source) if inner.type == "function_definition" else None
                    if inner_name:
                        taken.add(inner_name[0])
            continue
        if not name.startswith("test"):
            continue
        units.append(
            TestUnit(
                name=name,
                name_span=(name_node.start_byte, name_node.end_byte),
                start=child.start_byte,
                end=child.end_byte,
                indent=indent_of(source, child.start_byte),
                container=block.start_byte,
                qualifier=qualifier,
                sites=tuple(_sites(body, source, context)[:MAX_SITES_PER_TEST]),
            )
        )


def _impure_names(root: Node, source: bytes, local_modules: frozenset[str]) -> set[str]:
    """Names that reach the code under test: what the file imports from the workspace's modules,
    and its own helpers that use one (so an expected side calling them is not a plain value)."""
    impure: set[str] = set()
    for node in walk(root, _SCOPES):
        if node.type == "import_statement":
            for item in node.named_children:
                dotted = item.child_by_field_name("name") if item.type == "aliased_import" else item
                alias = item.child_by_field_name("alias") if item.type == "aliased_import" else None
                module = text(source, dotted).decode() if dotted is not None else ""
                if module.split(".")[0] in local_modules:
                    impure.add(text(source, alias).decode() if alias is not None else module.split(".")[0])
        elif node.type == "import_from_statement":
            module_node = node.child_by_field_name("module_name")
            module = text(source, module_node).decode() if module_node is not None else ""
            local = module.startswith(".") or module.split(".")[0] in local_modules
            if not local and module.split(".")[0] in sys.stdlib_module_names | {"pytest"}:
                continue
            if not local:
                continue
            for item in node.children_by_field_name("name"):
                bound = item.child_by_field_name("alias") if item.type == "aliased_import" else item
                if bound is not None:
                    impure.add(text(source, bound).decode().split(".")[-1])
    helpers = {}
    for child in root.children:
        definition = _definition(child)
        named = _name(definition, source) if definition.type == "function_definition" else None
        if named and not named[0].startswith("test"):
            helpers[named[0]] = {text(source, n).decode() for n in walk(definition) if n.type == "identifier"}
    changed = True
    while changed:
        changed = False
        for name, used in helpers.items():
            if name not in impure and used & impure:
                impure.add(name)
                changed = True
    return impure


def _uses(node: Node, source: bytes, names: set[str]) -> bool:
    return any(n.type == "identifier" and text(source, n).decode() in names for n in [node, *walk(node)])


def _literals(node: Node) -> list[Node]:
    return [n for n in [node, *walk(node, _SCOPES)] if n.type in _LITERALS]


def _sites(body: Node, source: bytes, context: Context) -> list[Site]:
    mutator = context[1]
    sites: list[Site] = []
    tables = 0
    for node in walk(body, _SCOPES):
        if node.type == "assert_statement":
            sites += _assert_sites(node, source, context)
        elif node.type == "with_item":
            site = _raises_site(node, source, mutator)
            if site is not None:
                sites.append(site)
        elif (
            node.type in ("list", "tuple")
            and tables < _TABLE_SITES
            and not _inside(node, "assert_statement", "list", "tuple")
        ):
            site = _table_site(node, source, mutator, {(s.start, s.end) for s in sites})
            if site is not None:
                sites.append(site)
                tables += 1
    return sites


def _table_site(table: Node, source: bytes, mutator: Mutator, used: set[tuple[int, int]]) -> Site | None:
    """A table the test feeds its code: in a table of rows, the first row's last value changed
    (its expected value, usually); else its first two elements swapped (an ordering's input no
    longer ordered), or its first literal changed."""
    claim = _statement(table)
    elements = [c for c in table.named_children if c.type != "comment"]
    if elements and all(e.type in ("list", "tuple") for e in elements):
        for literal in reversed(_literals(elements[0])):
            change = mutator.literal(source, literal)
            if change is not None and (literal.start_byte, literal.end_byte) not in used:
                return Site(literal.start_byte, literal.end_byte, change[0], NEW_INPUT, "table row changed", claim)
    if len(elements) >= 2 and text(source, elements[0]) != text(source, elements[1]):
        first, second = elements[0], elements[1]
        swapped = text(source, second) + source[first.end_byte : second.start_byte] + text(source, first)
        if (first.start_byte, second.end_byte) not in used:
            return Site(first.start_byte, second.end_byte, swapped, NEW_INPUT, "input reordered", claim)
    for literal in _literals(table):
        change = mutator.literal(source, literal)
        if change is not None and (literal.start_byte, literal.end_byte) not in used:
            return Site(literal.start_byte, literal.end_byte, change[0], NEW_INPUT, "input changed", claim)
    return None


def _inside(node: Node, *kinds: str) -> bool:
    parent = node.parent
    while parent is not None and parent.type not in _SCOPES:
        if parent.type in kinds:
            return True
        parent = parent.parent
    return False


def _statement(node: Node) -> tuple[int, int]:
    current = node
    while current.parent is not None and not current.type.endswith("statement") and current.parent.type != "block":
        current = current.parent
    return current.start_byte, current.end_byte


def _assert_sites(node: Node, source: bytes, context: Context) -> list[Site]:
    impure, mutator = context
    claim = (node.start_byte, node.end_byte)
    condition = next((c for c in node.children if c.is_named and c.type != "comment"), None)
    if condition is None:
        return []
    if condition.type != "comparison_operator":
        if condition.type == "not_operator":
            operand = condition.child_by_field_name("argument")
            if operand is None:
                return []
            flipped = text(source, operand)
        else:
            flipped = negated(source, condition, b"not ")
        return [Site(condition.start_byte, condition.end_byte, flipped, CONTRADICTION, "truth flipped", claim)]
    operands = [c for c in condition.children if c.is_named]
    operators = [c for c in condition.children if not c.is_named]
    if len(operands) != 2 or len(operators) != 1:
        return []
    actual, expected = operands
    operator = text(source, operators[0])
    sites = []
    if operator != b"==" or _tolerant(expected, source):
        # `x != 0` and `x != 2`, `x < 10` and `x < 12`: both can hold, so only the claim's negation
        # is sure to fail for every answer the real test passes
        negation = _NEGATED.get(b" ".join(operator.split()))
        if negation is None:
            return []
        op = operators[0]
        return [Site(op.start_byte, op.end_byte, negation, CONTRADICTION, "comparison flipped", claim)]
    change = _expected_change(expected, source, mutator)
    if change is not None:
        start, end, new, how = change
        kind = NEW_INPUT if _uses(expected, source, impure) else CONTRADICTION
        sites.append(Site(start, end, new, kind, how, claim))
    else:
        op = operators[0]
        sites.append(Site(op.start_byte, op.end_byte, b"!=", CONTRADICTION, "comparison flipped", claim))
    if actual.type == "call" or any(n.type == "call" for n in walk(actual, _SCOPES)):
        for literal in _literals(actual):
            if not _inside(literal, "argument_list"):
                continue
            moved = mutator.literal(source, literal)
            if moved is not None:
                # a new input, and a new expected value for it: no test but this one has either
                again = _expected_change(expected, source, mutator)
                more = ((again[0], again[1], again[2]),) if again is not None else ()
                sites.append(
                    Site(literal.start_byte, literal.end_byte, moved[0], NEW_INPUT, "input changed", claim, more)
                )
                break
    return sites


def _tolerant(expected: Node, source: bytes) -> bool:
    return any(
        n.type in ("identifier", "attribute") and text(source, n).split(b".")[-1] in _TOLERANT
        for n in [expected, *walk(expected, _SCOPES)]
    )


def _expected_change(expected: Node, source: bytes, mutator: Mutator) -> tuple[int, int, bytes, str] | None:
    node = expected
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    if node.type == "none":
        return None
    if node.type in COLLECTIONS:
        altered = mutator.collection(source, node)
        if altered is not None:
            return node.start_byte, node.end_byte, altered, "collection altered"
    for literal in _literals(node):
        change = mutator.literal(source, literal)
        if change is not None:
            return literal.start_byte, literal.end_byte, change[0], change[1]
    return None


def _raises_site(item: Node, source: bytes, mutator: Mutator) -> Site | None:
    """`with pytest.raises(E)`: expect another exception (the real one then propagates)."""
    call = item.child_by_field_name("value")
    if call is None or call.type != "call":
        return None
    function = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    if function is None or arguments is None or not text(source, function).endswith(b"raises"):
        return None
    first = next((a for a in arguments.named_children if a.type != "keyword_argument"), None)
    if first is None or first.type not in ("identifier", "attribute"):
        return None
    expected = text(source, first).split(b".")[-1]
    if expected in _UNCAUGHT:
        return None  # what pytest lets through would stop the whole session, not fail one test
    swapped = mutator.rng.choice([e for e in _EXCEPTIONS if e != expected])
    statement = item.parent.parent if item.parent is not None and item.parent.parent is not None else item
    claim = (statement.start_byte, item.end_byte)
    return Site(first.start_byte, first.end_byte, swapped, CONTRADICTION, "expected exception swapped", claim)
