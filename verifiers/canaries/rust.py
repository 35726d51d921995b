"""libtest tests (`#[test] fn`, at the top level of an integration test file or in its modules)
and the sites of their assertions: `assert_eq!(actual, expected)`, `assert_ne!`, `assert!(x)`,
`#[should_panic]`, and literals of the tables a test feeds its code. Every change keeps the file
compiling: the test binary holds the real tests too."""

from __future__ import annotations

import random

from tree_sitter import Node

from verifiers.canaries.mutate import Mutator
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

_LITERALS = frozenset({"integer_literal", "float_literal", "string_literal", "boolean_literal", "char_literal"})
_ASSERTS = frozenset({"assert_eq", "assert_ne", "assert", "debug_assert_eq", "debug_assert_ne", "debug_assert"})
_SCOPES = frozenset({"function_item", "closure_expression", "impl_item", "mod_item"})
_TABLE_SITES = 2
_BINARY = frozenset(
    {"==", "!=", "<", ">", "<=", ">=", "&&", "||", "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "as", ".."}
)


def tests_of(path: str, source: bytes, crate: str, rng: random.Random) -> FileTests:
    """`crate`: the library's crate name (what the tests `use`): names reaching it are not plain values."""
    root = parse(source, "rust")
    impure = _impure_names(root, source, crate)
    helpers = _assert_helpers(root, source)
    variants = _variants(root, source)
    units: list[TestUnit] = []
    taken: set[str] = set()
    _collect(root, source, (impure, helpers, variants, Mutator(rng, source, root)), "", units, taken)
    return FileTests(path, "rust", tuple(units), frozenset(taken))


# impure names, assertion helpers, enum variants, the file's changes
Names = tuple[set[str], set[str], dict[str, list[str]], Mutator]


def _collect(block: Node, source: bytes, names: Names, qualifier: str, units: list[TestUnit], taken: set[str]) -> None:
    attributes: list[Node] = []
    for child in block.named_children:
        if child.type == "attribute_item":
            attributes.append(child)
            continue
        if child.type in ("line_comment", "block_comment"):
            continue
        if child.type == "mod_item":
            body = child.child_by_field_name("body")
            module = child.child_by_field_name("name")
            if body is not None and module is not None:
                _collect(body, source, names, f"{qualifier}{text(source, module).decode()}::", units, taken)
        elif child.type == "function_item":
            name_node = child.child_by_field_name("name")
            body = child.child_by_field_name("body")
            name = text(source, name_node).decode() if name_node is not None else ""
            taken.add(name)
            marks = [text(source, a).replace(b" ", b"") for a in attributes]
            if name_node is not None and body is not None and b"#[test]" in marks:
                start = attributes[0].start_byte
                units.append(
                    TestUnit(
                        name=name,
                        name_span=(name_node.start_byte, name_node.end_byte),
                        start=start,
                        end=child.end_byte,
                        indent=indent_of(source, start),
                        container=block.start_byte,
                        qualifier=qualifier,
                        sites=tuple(
                            (_panic_sites(attributes, source) + _sites(body, source, names))[:MAX_SITES_PER_TEST]
                        ),
                    )
                )
        attributes = []


def _impure_names(root: Node, source: bytes, crate: str) -> set[str]:
    """What the file takes from the library (`use crate::...` items, the crate's own path) and
    its own helper functions that reach one."""
    impure = {crate}
    for node in walk(root):
        if node.type == "use_declaration" and text(source, node).replace(b" ", b"").startswith(f"use{crate}".encode()):
            impure.update(text(source, n).decode() for n in walk(node) if n.type == "identifier")
    helpers = {}
    for node in root.named_children:
        if node.type == "function_item":
            named = node.child_by_field_name("name")
            if named is not None:
                helpers[text(source, named).decode()] = {
                    text(source, n).decode() for n in walk(node) if n.type == "identifier"
                }
    changed = True
    while changed:
        changed = False
        for name, used in helpers.items():
            if name not in impure and used & impure:
                impure.add(name)
                changed = True
    return impure


def _assert_helpers(root: Node, source: bytes) -> set[str]:
    """The file's own functions that assert (`check(a, b, want)`): a call of one is an assertion."""
    found = set()
    for node in walk(root):
        if node.type != "function_item":
            continue
        name = node.child_by_field_name("name")
        for inner in walk(node, _SCOPES):
            macro = inner.child_by_field_name("macro") if inner.type == "macro_invocation" else None
            if name is not None and macro is not None and text(source, macro).decode() in _ASSERTS:
                found.add(text(source, name).decode())
                break
    return found


def _variants(root: Node, source: bytes) -> dict[str, list[str]]:
    """Names imported together in one `use a::{X, Y, Z}` list: each can stand for another
    (`Ordering::{Less, Equal, Greater}`)."""
    groups: dict[str, list[str]] = {}
    for node in walk(root):
        if node.type == "use_list":
            names = [text(source, n).decode() for n in node.named_children if n.type == "identifier"]
            names = [n for n in names if n != "self"]
            for name in names:
                groups[name] = [n for n in names if n != name]
    return groups


def _panic_sites(attributes: list[Node], source: bytes) -> list[Site]:
    """`#[should_panic]` removed: the test now fails by the panic it expected."""
    for attribute in attributes:
        if text(source, attribute).replace(b" ", b"").startswith(b"#[should_panic"):
            end = attribute.end_byte
            while end < len(source) and source[end : end + 1] in (b" ", b"\t", b"\n"):
                end += 1
            return [
                Site(
                    attribute.start_byte,
                    end,
                    b"",
                    CONTRADICTION,
                    "expected panic removed",
                    (attribute.start_byte, attribute.end_byte),
                )
            ]
    return []


def _arguments(tree: Node) -> list[list[Node]]:
    """A macro's token tree split at its top-level commas."""
    groups: list[list[Node]] = [[]]
    for token in tree.children[1:-1]:
        if token.type == ",":
            groups.append([])
        else:
            groups[-1].append(token)
    return [g for g in groups if g]


def _group_literals(group: list[Node]) -> list[Node]:
    found = []
    for token in group:
        for node in [token, *walk(token)]:
            if node.type in _LITERALS:
                found.append(node)
    return found


def _uses(group: list[Node], source: bytes, names: set[str]) -> bool:
    return any(n.type == "identifier" and text(source, n).decode() in names for t in group for n in [t, *walk(t)])


def _sites(body: Node, source: bytes, names: Names) -> list[Site]:
    impure, helpers, variants, mutator = names
    sites: list[Site] = []
    tables = 0
    for node in walk(body, _SCOPES):
        if node.type == "call_expression":
            function = node.child_by_field_name("function")
            arguments = node.child_by_field_name("arguments")
            if function is not None and arguments is not None and text(source, function).decode() in helpers:
                site = _helper_site(node, arguments, source, variants, mutator)
                if site is not None:
                    sites.append(site)
        elif node.type == "macro_invocation":
            macro = node.child_by_field_name("macro")
            tree = next((c for c in node.children if c.type == "token_tree"), None)
            name = text(source, macro).decode() if macro is not None else ""
            if name in _ASSERTS and tree is not None:
                sites += _assert_sites(node, name, tree, source, impure, mutator)
        elif node.type == "array_expression" and tables < _TABLE_SITES:
            if node.parent is not None and node.parent.type == "array_expression":
                continue
            site = _table_site(node, source, mutator)
            if site is not None:
                sites.append(site)
                tables += 1
    return sites


def _assert_sites(node: Node, name: str, tree: Node, source: bytes, impure: set[str], mutator: Mutator) -> list[Site]:
    claim = (node.start_byte, node.end_byte)
    groups = _arguments(tree)
    if not groups:
        return []
    if name in ("assert", "debug_assert"):
        first = groups[0]
        span = source[first[0].start_byte : first[-1].end_byte]
        # `!` binds tighter than any binary operator and looser than a method chain
        binary = any(t.type in _BINARY for t in first)
        if binary:
            flipped = b"!(" + span + b")"
        else:
            flipped = span[1:].lstrip() if span.startswith(b"!") else b"!" + span
        return [Site(first[0].start_byte, first[-1].end_byte, flipped, CONTRADICTION, "truth flipped", claim)]
    macro = node.child_by_field_name("macro")
    if name.endswith("_ne") and macro is not None:
        flipped = name.replace("_ne", "_eq").encode()
        return [Site(macro.start_byte, macro.end_byte, flipped, CONTRADICTION, "comparison flipped", claim)]
    if len(groups) < 2:
        return []
    actual, expected = groups[0], groups[1]
    sites = []
    kind = NEW_INPUT if _uses(expected, source, impure) else CONTRADICTION
    change = _expected_change(expected, source, mutator)
    if change is not None:
        sites.append(Site(change[0], change[1], change[2], kind, change[3], claim))
    elif macro is not None:
        flipped = name.replace("_eq", "_ne").encode()
        sites.append(Site(macro.start_byte, macro.end_byte, flipped, CONTRADICTION, "comparison flipped", claim))
    if any(t.type == "token_tree" for t in actual):
        for literal in _group_literals(actual):
            if literal.parent is None or literal.parent.type != "token_tree" or literal.parent == tree:
                continue
            moved = mutator.literal(source, literal)
            if moved is not None:
                again = _expected_change(expected, source, mutator)  # a new input, and a new expected value
                more = ((again[0], again[1], again[2]),) if again is not None else ()
                sites.append(
                    Site(literal.start_byte, literal.end_byte, moved[0], NEW_INPUT, "input changed", claim, more)
                )
                break
    return sites


def _expected_change(group: list[Node], source: bytes, mutator: Mutator) -> tuple[int, int, bytes, str] | None:
    vec = _vec_tree(group, source)
    if vec is not None:
        altered = mutator.vec(source, vec)
        return (vec.start_byte, vec.end_byte, altered, "collection altered") if altered is not None else None
    for literal in _group_literals(group):
        change = mutator.literal(source, literal)
        if change is not None:
            return literal.start_byte, literal.end_byte, change[0], change[1]
    return None


def _helper_site(
    call: Node, arguments: Node, source: bytes, variants: dict[str, list[str]], mutator: Mutator
) -> Site | None:
    """An assertion helper's last argument (what it expects, usually): another variant of the
    same enum, or its literal changed."""
    args = arguments.named_children
    if not args:
        return None
    last = args[-1]
    claim = (call.start_byte, call.end_byte)
    name = text(source, last).decode()
    if last.type == "identifier" and variants.get(name):
        other = mutator.rng.choice(variants[name]).encode()
        return Site(last.start_byte, last.end_byte, other, NEW_INPUT, "expected argument changed", claim)
    if last.type in _LITERALS:
        change = mutator.literal(source, last)
        if change is not None:
            return Site(last.start_byte, last.end_byte, change[0], NEW_INPUT, "expected argument changed", claim)
    return None


def _vec_tree(group: list[Node], source: bytes) -> Node | None:
    """The token tree of a group that is exactly `vec![...]`."""
    if len(group) == 3 and text(source, group[0]) == b"vec" and group[1].type == "!" and group[2].type == "token_tree":
        return group[2]
    return None


def _table_site(table: Node, source: bytes, mutator: Mutator) -> Site | None:
    claim = (table.start_byte, table.end_byte)
    parent = table.parent
    while parent is not None and parent.type not in ("let_declaration", "for_expression", "expression_statement"):
        parent = parent.parent
    if parent is not None:
        claim = (parent.start_byte, min(parent.end_byte, parent.start_byte + 400))
    elements = [c for c in table.named_children if c.type not in ("line_comment", "block_comment")]
    if elements and all(e.type in ("tuple_expression", "array_expression") for e in elements):
        for literal in reversed([n for n in walk(elements[0]) if n.type in _LITERALS]):
            change = mutator.literal(source, literal)
            if change is not None:
                return Site(literal.start_byte, literal.end_byte, change[0], NEW_INPUT, "table row changed", claim)
    if len(elements) >= 2 and text(source, elements[0]) != text(source, elements[1]):
        first, second = elements[0], elements[1]
        swapped = text(source, second) + source[first.end_byte : second.start_byte] + text(source, first)
        return Site(first.start_byte, second.end_byte, swapped, NEW_INPUT, "input reordered", claim)
    return None
