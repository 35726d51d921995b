"""The tamper scan's JavaScript and TypeScript rules."""

from __future__ import annotations

from tree_sitter import Node

from verifiers.findings import TamperFinding
from verifiers.mechanics import walk
from verifiers.scan.source import Source, string_findings, text

ASSERT_MODULES = ("assert", "node:assert", "assert/strict", "node:assert/strict")
RUNNER_MODULES = ("node:test",)
INSPECTION_MODULES = ("inspector", "node:inspector", "inspector/promises", "node:inspector/promises")
MUTATORS = (
    "Object.defineProperty",
    "Object.defineProperties",
    "Object.assign",
    "Object.setPrototypeOf",
    "Reflect.set",
    "Reflect.defineProperty",
    "Reflect.deleteProperty",
    "Reflect.setPrototypeOf",
)
EXITS = ("process.exit", "process.reallyExit", "process.abort")
LISTENERS = (
    "process.on",
    "process.once",
    "process.addListener",
    "process.prependListener",
    "process.prependOnceListener",
)
STACK_HOOKS = ("Error.prepareStackTrace",)  # captureStackTrace is how custom errors are written
BINDINGS = ("process.binding", "process._linkedBinding", "internalBinding")


def member(node: Node | None) -> str:
    """`a.b.c` for identifier / member chains (also `a["b"]`), else ''."""
    if node is None:
        return ""
    if node.type in ("identifier", "property_identifier"):
        return text(node)
    if node.type == "member_expression":
        left = member(node.child_by_field_name("object"))
        prop = node.child_by_field_name("property")
        return f"{left}.{text(prop)}" if left and prop is not None else ""
    if node.type == "subscript_expression":
        left = member(node.child_by_field_name("object"))
        index = node.child_by_field_name("index")
        if left and index is not None and index.type == "string":
            return f"{left}.{string_value(index)}"
    return ""


def string_value(node: Node) -> str:
    if node.type == "string":
        return "".join(text(c) for c in node.named_children if c.type in ("string_fragment", "escape_sequence"))
    if node.type == "template_string":
        return "".join(text(c) if c.type == "string_fragment" else "${}" for c in node.named_children)
    return ""


def _module_of(node: Node) -> str | None:
    """The module a `require('x')`, `import('x')` or import statement names."""
    if node.type == "import_statement":
        source = node.child_by_field_name("source")
        return string_value(source) if source is not None else None
    if node.type == "call_expression":
        function = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        first = args.named_children[0] if args is not None and args.named_children else None
        is_loader = function is not None and (function.type == "import" or text(function) == "require")
        if is_loader and first is not None and first.type in ("string", "template_string"):
            return string_value(first)
    return None


def _bound_names(root: Node) -> set[str]:
    """Names bound to node:assert, node:assert/strict or node:test in this file."""
    names: set[str] = set()
    for node in walk(root):
        if node.type == "import_statement" and _module_of(node) in (*ASSERT_MODULES, *RUNNER_MODULES):
            for part in walk(node):
                if part.type == "identifier":
                    names.add(text(part))
        elif node.type == "variable_declarator":
            value = node.child_by_field_name("value")
            while value is not None and value.type in ("await_expression", "member_expression"):
                value = value.named_children[0] if value.named_children else None
            if value is not None and _module_of(value) in (*ASSERT_MODULES, *RUNNER_MODULES):
                for part in walk(node.child_by_field_name("name") or node):
                    if part.type in ("identifier", "shorthand_property_identifier_pattern"):
                        names.add(text(part))
    return names


def _main_guarded(node: Node) -> bool:
    """Inside `if (require.main === module)` or an `import.meta` / process.argv[1] check: a CLI's
    own entry, which no test imports."""
    parent = node.parent
    while parent is not None:
        if parent.type == "if_statement":
            condition = text(parent.child_by_field_name("condition"))
            if "require.main" in condition or ("process.argv" in condition and "import.meta" in condition):
                return True
        parent = parent.parent
    return False


def scan(src: Source, root: Node) -> list[TamperFinding]:
    found: list[TamperFinding] = []
    bound = _bound_names(root)
    for node in walk(root):
        kind = node.type
        module = _module_of(node) if kind in ("import_statement", "call_expression") else None
        if module in RUNNER_MODULES and not src.is_test:
            found.append(src.finding("runner-imported", node))
        elif module in INSPECTION_MODULES:
            found.append(src.finding("frame-inspection", node))
        if kind == "call_expression":
            name = member(node.child_by_field_name("function"))
            args = node.child_by_field_name("arguments")
            first = args.named_children[0] if args is not None and args.named_children else None
            if (name in EXITS or (name == "process.kill" and "process.p" in text(args))) and not _main_guarded(node):
                found.append(src.finding("exit-hook", node))
            elif name in LISTENERS and first is not None and string_value(first) in ("exit", "beforeExit"):
                found.append(src.finding("exit-hook", node))
            elif name in MUTATORS and first is not None and member(first).split(".")[0] in bound:
                found.append(src.finding("assert-mutated", node))
            elif name.endswith("syncBuiltinESMExports"):
                found.append(src.finding("assert-mutated", node))
            elif name in BINDINGS:
                found.append(src.finding("frame-inspection", node))
        elif kind in ("assignment_expression", "augmented_assignment_expression"):
            target = member(node.child_by_field_name("left"))
            head = target.split(".")[0]
            if "." in target and head in bound:
                found.append(src.finding("assert-mutated", node))
            elif target in ("process.exitCode", *EXITS):
                found.append(src.finding("exit-hook", node))
        elif kind == "unary_expression" and text(node).startswith("delete"):
            if member(node.named_children[0] if node.named_children else None).split(".")[0] in bound:
                found.append(src.finding("assert-mutated", node))
        elif kind == "member_expression" and member(node) in STACK_HOOKS:
            found.append(src.finding("frame-inspection", node))
        elif kind in ("string", "template_string"):
            found += string_findings(src, node, string_value(node))
    return found
