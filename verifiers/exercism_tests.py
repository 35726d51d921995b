"""Edits of an Exercism test file: every case enabled (the hidden test) and the first few cases
alone (the visible test), for Python, Rust and jest-style JavaScript/TypeScript specs.

Python is edited through `ast` (decorator and function line ranges), Rust and JS/TS through
tree-sitter nodes, so a marker inside a string or comment is never touched; each edit is checked
to leave a file that still parses. `None` of a case count means the file has no test at all.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from verifiers import VerifierError
from verifiers.mechanics import parse, syntax_problems, walk

PY_SKIPS = frozenset({"pytest.mark.skip", "unittest.skip", "skip", "mark.skip"})
JS_SKIPPED = {"xtest": "test", "xit": "it", "xdescribe": "describe"}
JS_CASES = frozenset({"test", "it", "xtest", "xit"})
JS_GROUPS = frozenset({"describe", "xdescribe"})
JS_GLOBALS_MODULE = "@jest/globals"  # jest's globals as imports: quotabench's layer provides them itself


class TestFileError(VerifierError):
    """A test file this importer cannot take apart (no cases found, an edit that would not parse)."""

    __test__ = False  # not a pytest class, whatever its name says


@dataclass(frozen=True)
class SplitTests:
    hidden: str  # the whole file, every skip marker removed
    visible: str  # the same with only the first `visible_cases` cases kept
    cases: int
    visible_cases: int
    unskipped: int  # skip markers removed


def visible_share(cases: int) -> int:
    """How many of `cases` the visible test keeps: the first third, at least one."""
    return max(1, cases // 3)


def split_tests(source: str, grammar: str) -> SplitTests:
    """The hidden and visible versions of a test file in `grammar` (python, rust, javascript,
    typescript)."""
    if grammar == "python":
        try:
            hidden, unskipped = _py_unskip(source)
        except SyntaxError as exc:
            raise TestFileError(f"the test file does not parse (line {exc.lineno}: {exc.msg})") from None
        cases = len(_py_cases(hidden))
        visible = _py_keep(hidden, visible_share(cases))
    elif grammar == "rust":
        hidden, unskipped = _rs_unskip(source)
        cases = len(_rs_cases(parse(hidden.encode(), "rust").root_node))
        visible = _rs_keep(hidden, visible_share(cases))
    elif grammar in ("javascript", "typescript"):
        hidden, unskipped = _js_unskip(source, grammar)
        cases = len(_js_calls(parse(hidden.encode(), grammar).root_node, JS_CASES))
        visible = _js_keep(hidden, grammar, visible_share(cases))
    else:
        raise TestFileError(f"no test-file edits for {grammar!r}")
    if not cases:
        raise TestFileError("no test case found in the test file")
    visible = visible.rstrip() + "\n"  # the cut cases leave blank lines at the end
    for name, text in (("hidden", hidden), ("visible", visible)):
        _check_parses(source, text, grammar, name)
    return SplitTests(hidden, visible, cases, visible_share(cases), unskipped)


def _check_parses(original: str, edited: str, grammar: str, name: str) -> None:
    if grammar == "python":
        try:
            ast.parse(edited)
        except SyntaxError as exc:
            raise TestFileError(f"the {name} test would not parse (line {exc.lineno}: {exc.msg})") from None
        return
    if syntax_problems(edited.encode(), grammar) and not syntax_problems(original.encode(), grammar):
        raise TestFileError(f"the {name} test would not parse after the edit")


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` without the byte ranges `spans` (nested or overlapping ones merged)."""
    data = text.encode()
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, at = bytearray(), 0
    for start, end in merged:
        out += data[at:start]
        at = end
    out += data[at:]
    return out.decode()


def _whole_lines(data: bytes, start: int, end: int, blank_before: bool = True) -> tuple[int, int]:
    """Widen [start, end) to whole lines when only blanks share them, and (with `blank_before`) to
    the blank line before, so a cut leaves no run of empty lines behind."""
    line_start = data.rfind(b"\n", 0, start) + 1
    if data[line_start:start].strip():
        return start, end
    line_end = data.find(b"\n", end)
    line_end = len(data) if line_end < 0 else line_end + 1
    if data[end:line_end].strip():
        return line_start, end
    return (_blank_before(data, line_start) if blank_before else line_start), line_end


def _blank_before(data: bytes, line_start: int) -> int:
    """The start of the blank line just before the line at `line_start`, if there is one."""
    if line_start == 0:
        return 0
    previous = data.rfind(b"\n", 0, line_start - 1) + 1
    return previous if not data[previous:line_start].strip() else line_start


# --- Python -------------------------------------------------------------------------------------


def _line_offsets(text: str) -> list[int]:
    """Byte offset of the start of each line (1-based line n is offsets[n - 1])."""
    offsets, at = [0], 0
    for line in text.encode().splitlines(keepends=True):
        at += len(line)
        offsets.append(at)
    return offsets


def _py_lines_span(offsets: list[int], first: int, last: int, data: bytes = b"") -> tuple[int, int]:
    """Lines first..last; with `data`, the blank line before them too."""
    start = offsets[first - 1]
    return (_blank_before(data, start) if data else start), offsets[min(last, len(offsets) - 1)]


def _decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    return ast.unparse(target)


def _py_unskip(source: str) -> tuple[str, int]:
    tree = ast.parse(source)
    offsets = _line_offsets(source)
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for dec in node.decorator_list:
                if _decorator_name(dec) in PY_SKIPS:
                    # the `@` is on dec.lineno; a decorator sharing its line with code stays
                    spans.append(_py_lines_span(offsets, dec.lineno, dec.end_lineno or dec.lineno))
    return _cut(source, spans), len(spans)


def _py_test_defs(body: list[ast.stmt]) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            yield node


def _py_cases(source: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Test functions and test methods, in file order."""
    tree = ast.parse(source)
    found = list(_py_test_defs(tree.body))
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            found.extend(_py_test_defs(node.body))
    return sorted(found, key=lambda n: n.lineno)


def _py_first_line(node: ast.stmt) -> int:
    """The line a definition starts on: its first decorator's, else its own."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno] + [d.lineno for d in decorators])


def _py_keep(source: str, keep: int) -> str:
    drop = {(c.lineno, c.name) for c in _py_cases(source)[keep:]}
    tree = ast.parse(source)
    offsets = _line_offsets(source)
    data = source.encode()
    spans = []

    def dropped(node: ast.stmt) -> bool:
        return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (node.lineno, node.name) in drop

    for node in tree.body:
        if isinstance(node, ast.ClassDef) and any(dropped(n) for n in node.body):
            if all(dropped(n) for n in node.body):  # a class of dropped tests only: the whole class goes
                spans.append(_py_lines_span(offsets, _py_first_line(node), node.end_lineno or node.lineno, data))
                continue
            for member in node.body:
                if dropped(member):
                    spans.append(
                        _py_lines_span(offsets, _py_first_line(member), member.end_lineno or member.lineno, data)
                    )
        elif dropped(node):
            spans.append(_py_lines_span(offsets, _py_first_line(node), node.end_lineno or node.lineno, data))
    return _cut(source, spans)


# --- Rust ---------------------------------------------------------------------------------------


def _rs_attribute_name(node: Node) -> str:
    attribute = next((c for c in node.named_children if c.type == "attribute"), None)
    if attribute is None:
        return ""
    head = attribute.named_children[0] if attribute.named_children else None
    return (head.text or b"").decode() if head is not None else ""


def _rs_unskip(source: str) -> tuple[str, int]:
    data = source.encode()
    root = parse(data, "rust").root_node
    spans = [
        _whole_lines(data, n.start_byte, n.end_byte, blank_before=False)
        for n in walk(root)
        if n.type == "attribute_item" and _rs_attribute_name(n) == "ignore"
    ]
    return _cut(source, spans), len(spans)


def _rs_attributes_before(node: Node) -> list[Node]:
    """The attributes of an item, and the comments among and above them (a doc comment left
    behind by a cut item would document nothing, which rustc refuses)."""
    found = []
    sibling = node.prev_named_sibling
    while sibling is not None and sibling.type in ("attribute_item", "line_comment", "block_comment"):
        found.append(sibling)
        sibling = sibling.prev_named_sibling
    return found


def _rs_cases(root: Node) -> list[Node]:
    """`#[test]` functions, in file order."""
    return [
        n
        for n in walk(root)
        if n.type == "function_item" and any(_rs_attribute_name(a) == "test" for a in _rs_attributes_before(n))
    ]


def _rs_keep(source: str, keep: int) -> str:
    data = source.encode()
    root = parse(data, "rust").root_node
    spans = []
    for case in _rs_cases(root)[keep:]:
        start = min([case.start_byte] + [a.start_byte for a in _rs_attributes_before(case)])
        spans.append(_whole_lines(data, start, case.end_byte))
    return _cut(source, spans)


# --- JavaScript / TypeScript --------------------------------------------------------------------


def _js_callee(call: Node) -> tuple[str, str]:
    """(name, modifier) of a call's function: `test(` is ("test", ""), `test.skip(` ("test", "skip")."""
    fn = call.child_by_field_name("function")
    if fn is None:
        return "", ""
    if fn.type == "identifier":
        return (fn.text or b"").decode(), ""
    if fn.type == "member_expression":
        obj, prop = fn.child_by_field_name("object"), fn.child_by_field_name("property")
        if obj is not None and prop is not None and obj.type == "identifier":
            return (obj.text or b"").decode(), (prop.text or b"").decode()
    return "", ""


def _js_calls(root: Node, names: frozenset[str]) -> list[Node]:
    """Statements that call one of `names` (plain, or `.skip`/`.only`), in file order."""
    found = []
    for node in walk(root):
        if node.type != "expression_statement" or not node.named_children:
            continue
        call = node.named_children[0]
        if call.type == "call_expression":
            name, modifier = _js_callee(call)
            if name in names and modifier in ("", "skip", "only"):
                found.append(node)
    return found


def _js_unskip(source: str, grammar: str) -> tuple[str, int]:
    """Every xtest/xit/xdescribe and .skip enabled, and imports of @jest/globals removed."""
    data = source.encode()
    root = parse(data, grammar).root_node
    edits: list[tuple[int, int, bytes]] = []
    for node in walk(root):
        if _js_takes_jest_globals(node):
            start, end = _whole_lines(data, node.start_byte, node.end_byte)
            edits.append((start, end, b""))
        if node.type != "call_expression":
            continue
        fn = node.child_by_field_name("function")
        name, modifier = _js_callee(node)
        if fn is None:
            continue
        if not modifier and name in JS_SKIPPED:
            edits.append((fn.start_byte, fn.end_byte, JS_SKIPPED[name].encode()))
        elif modifier == "skip" and name in JS_CASES | JS_GROUPS:
            edits.append((fn.start_byte, fn.end_byte, JS_SKIPPED.get(name, name).encode()))
    out, at = bytearray(), 0
    for start, end, text in sorted(edits):
        out += data[at:start] + text
        at = end
    out += data[at:]
    return out.decode(), sum(1 for _, _, text in edits if text)


def _js_takes_jest_globals(node: Node) -> bool:
    """`import {...} from '@jest/globals'` or `const {...} = require('@jest/globals')`."""
    if node.type == "import_statement":
        src = node.child_by_field_name("source")
        return src is not None and (src.text or b"").decode().strip("'\"`") == JS_GLOBALS_MODULE
    if node.type in ("lexical_declaration", "variable_declaration") and len(node.named_children) == 1:
        value = node.named_children[0].child_by_field_name("value")
        return value is not None and js_imports((value.text or b"").decode(), "javascript") == [JS_GLOBALS_MODULE]
    return False


def _js_keep(source: str, grammar: str, keep: int) -> str:
    """Only the first `keep` cases, and no describe block left holding none of them."""
    data = source.encode()
    root = parse(data, grammar).root_node
    cases = _js_calls(root, JS_CASES)
    kept = cases[:keep]
    spans = [_whole_lines(data, c.start_byte, c.end_byte) for c in cases[keep:]]
    for group in _js_calls(root, JS_GROUPS):
        if not any(group.start_byte <= c.start_byte and c.end_byte <= group.end_byte for c in kept):
            spans.append(_whole_lines(data, group.start_byte, group.end_byte))
    return _cut(source, spans)


def js_unsupported(source: str, grammar: str) -> str:
    """Why quotabench's jest layer cannot run this spec ("" if it can): the `jest` object, `.each`."""
    root = parse(source.encode(), grammar).root_node
    for node in walk(root):
        if node.type != "member_expression":
            continue
        obj, prop = node.child_by_field_name("object"), node.child_by_field_name("property")
        if obj is None or prop is None or obj.type != "identifier":
            continue
        name, member = (obj.text or b"").decode(), (prop.text or b"").decode()
        if name == "jest":
            return f"the spec uses jest.{member}, which quotabench's jest layer does not provide"
        if name in JS_CASES | JS_GROUPS and member == "each":
            return f"the spec uses {name}.each, which quotabench's jest layer does not provide"
    return ""


def _js_specifiers(root: Node) -> Iterator[Node]:
    """The string nodes naming a module: of import/export ... from, require() and import()."""
    for node in walk(root):
        if node.type in ("import_statement", "export_statement"):
            src = node.child_by_field_name("source")
            if src is not None:
                yield src
        elif node.type == "call_expression":
            fn, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
            if fn is not None and fn.text in (b"require", b"import") and args is not None and args.named_children:
                if args.named_children[0].type == "string":
                    yield args.named_children[0]


def js_rebase_imports(source: str, grammar: str, moved_from: str, moved_to: str) -> str:
    """`source`, a file moved from folder `moved_from` to `moved_to` (relative paths in the
    exercise), with its relative imports rewritten to name the same files: an example solution
    kept in .meta/ imports `../person`, which from the stub's place is `./person`."""
    data = source.encode()
    edits = []
    for node in _js_specifiers(parse(data, grammar).root_node):
        quoted = (node.text or b"").decode()
        spec = quoted[1:-1]
        if not spec.startswith(("./", "../")):
            continue
        target = posixpath.normpath(posixpath.join(moved_from or ".", spec))
        new = posixpath.relpath(target, moved_to or ".")
        new = new if new.startswith("../") else f"./{new}"
        if new != spec:
            edits.append((node.start_byte, node.end_byte, (quoted[0] + new + quoted[-1]).encode()))
    out, at = bytearray(), 0
    for start, end, text in sorted(edits):
        out += data[at:start] + text
        at = end
    return (out + data[at:]).decode()


def js_imports(source: str, grammar: str) -> list[str]:
    """Module specifiers a JS/TS file imports or requires, in file order."""
    return [(n.text or b"").decode()[1:-1] for n in _js_specifiers(parse(source.encode(), grammar).root_node)]
