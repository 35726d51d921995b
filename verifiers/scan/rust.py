"""The tamper scan's Rust rules: libtest runs in the same binary as the crate, so a constructor
or a process exit can print its report for it; and `include_str!` reads the tests at build time."""

from __future__ import annotations

import re

from tree_sitter import Node

from verifiers.findings import TamperFinding
from verifiers.mechanics import walk
from verifiers.scan.source import Source, string_findings, text

EXIT_PATHS = ("process::exit", "process::abort", "libc::exit", "libc::_exit", "libc::abort", "libc::kill")
FOREIGN_EXITS = (
    "exit",
    "_exit",
    "_Exit",
    "quick_exit",
    "exit_group",
    "syscall",
    "abort",
    "kill",
    "raise",
    "write",
    "dup2",
    "execv",
    "execve",
    "execvp",
    "execvpe",
    "execl",
    "execle",
    "execlp",
    "fexecve",
)
# The tests folder named in a string: code that reads the hidden tests at run time (cargo runs
# a test binary in the crate's folder).
_TESTS_DIR = re.compile(r"^(?:\./)?tests(?:/|$)")
# Macro bodies are token trees tree-sitter does not parse as items: read them as text.
_MACRO_EXIT = re.compile(r"process\s*::\s*(?:exit|abort)\b|libc\s*::\s*_?exit\b")
_MACRO_EQ = re.compile(r"fn\s+eq\s*\([^)]*\)\s*->\s*bool\s*\{\s*(?:true|!\s*false|\(\s*true\s*\))\s*\}")
_ESCAPE = re.compile(r"\\x([0-9a-fA-F]{2})|\\u\{([0-9a-fA-F]{1,6})\}")
LINK_ATTRS = ("link_section", "used", "no_mangle", "export_name", "link_name")
READS = ("include_str", "include_bytes", "include")
ASM = ("asm", "global_asm", "naked_asm")


def _unescape(literal: str) -> str:
    return _ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), literal)


def _binary(rel: str) -> bool:
    """A binary target: linked into no test binary, so it may exit as a program does."""
    return rel == "src/main.rs" or rel.startswith("src/bin/")


def _constant_bool(body: Node | None, value: str) -> bool:
    if body is None:
        return False
    parts = [c for c in body.named_children if c.type not in ("line_comment", "block_comment")]
    if len(parts) != 1:
        return False
    only = parts[0]
    if only.type == "expression_statement" and only.named_children:
        only = only.named_children[0]
    if only.type == "return_expression" and only.named_children:
        only = only.named_children[0]
    while only.type == "parenthesized_expression" and only.named_children:
        only = only.named_children[0]
    if only.type == "unary_expression" and text(only).replace(" ", "") == ("!false" if value == "true" else "!true"):
        return True
    return only.type == "boolean_literal" and text(only) == value


def scan(src: Source, root: Node) -> list[TamperFinding]:
    found: list[TamperFinding] = []
    program = _binary(src.rel)
    for node in walk(root):
        kind = node.type
        if kind in ("scoped_identifier", "call_expression") and not program:
            function = node.child_by_field_name("function") if kind == "call_expression" else node
            name = text(function).replace(" ", "")
            if any(name == p or name.endswith("::" + p) for p in EXIT_PATHS):  # a call, or a fn pointer to it
                found.append(src.finding("exit-hook", node))
            elif function is not None and function.type == "field_expression" and name.endswith(".exec"):
                found.append(src.finding("exit-hook", node, f"replaces the test process (exec): {src.snippet(node)}"))
        elif kind == "use_declaration" and "CommandExt" in text(node) and not program:
            found.append(src.finding("exit-hook", node, f"can replace the test process (exec): {src.snippet(node)}"))
        elif (
            kind in ("macro_definition", "token_tree") and node.parent is not None and node.parent.type != "token_tree"
        ):
            body = text(node)
            if _MACRO_EXIT.search(body) and not program:
                found.append(src.finding("exit-hook", node, "a macro that exits the process"))
            if _MACRO_EQ.search(body):
                found.append(src.finding("const-equality", node, "a macro that writes an eq that is always true"))
        elif kind in ("attribute_item", "inner_attribute_item"):
            attr = node.named_children[0] if node.named_children else None
            name = text(attr.named_children[0]) if attr is not None and attr.named_children else ""
            body = text(node)
            if name in LINK_ATTRS or ".init_array" in body or ".fini_array" in body or ".ctors" in body:
                found.append(src.finding("exit-hook", node, f"a link-time hook: {src.snippet(node)}"))
            elif name == "feature" and "test" in body:
                found.append(src.finding("runner-imported", node))
        elif kind == "foreign_mod_item":
            for sig in walk(node):
                if sig.type == "function_signature_item" and text(sig.child_by_field_name("name")) in FOREIGN_EXITS:
                    found.append(src.finding("exit-hook", sig))
        elif kind == "extern_crate_declaration" and text(node.child_by_field_name("name")) in ("test", "libc"):
            found.append(src.finding("runner-imported" if "test" in text(node) else "exit-hook", node))
        elif kind == "macro_invocation":
            name = text(node.child_by_field_name("macro")).split("::")[-1]
            literal = _unescape(text(node))
            if name in READS and (
                "\\" in text(node) or any(mark in literal for mark in ("tests", "..", "env!", "concat!", *src.hidden))
            ):
                found.append(
                    src.finding("reads-hidden-tests", node, f"reads the tests at build time: {src.snippet(node)}")
                )
            elif name == "env" and "CARGO_MANIFEST_DIR" in text(node):
                found.append(src.finding("reads-hidden-tests", node, f"finds the crate's folder: {src.snippet(node)}"))
            elif name in ASM:
                found.append(src.finding("exit-hook", node, f"inline assembly: {src.snippet(node)}"))
        elif kind == "impl_item" and _equal_to_another_type(node):
            for item in node.named_children[-1].named_children if node.named_children else ():
                if item.type != "function_item":
                    continue
                name = text(item.child_by_field_name("name"))
                wanted = {"eq": "true", "ne": "false"}.get(name)
                if wanted and _constant_bool(item.child_by_field_name("body"), wanted):
                    found.append(src.finding("const-equality", item, f"PartialEq::{name} always returns {wanted}"))
                elif wanted and _ignores_a_side(item):
                    found.append(src.finding("const-equality", item, f"PartialEq::{name} does not look at both sides"))
        elif kind in ("string_literal", "raw_string_literal"):
            value = "".join(text(c) for c in node.named_children if c.type == "string_content") or text(node)
            found += string_findings(src, node, _unescape(value))
            if _TESTS_DIR.match(_unescape(value)) and not src.is_test and not program:
                found.append(src.finding("reads-hidden-tests", node, f"names the tests folder: {src.snippet(node)}"))
    return found


def _ignores_a_side(function: Node) -> bool:
    """An eq/ne whose body never reads `self`, or never reads its other argument."""
    parameters = function.child_by_field_name("parameters")
    others = [p for p in (parameters.named_children if parameters is not None else []) if p.type == "parameter"]
    pattern = others[0].child_by_field_name("pattern") if others else None
    body = function.child_by_field_name("body")
    if pattern is None or pattern.type != "identifier" or body is None:
        return False
    used = {text(n) for n in walk(body) if n.type in ("identifier", "self")}
    return "self" not in used or text(pattern) not in used


def _equal_to_another_type(impl: Node) -> bool:
    """`impl PartialEq<Other> for T`: a T equal to values of another type. `impl PartialEq for T`
    (T against T) may be always true honestly, for a type with one value."""
    trait = text(impl.child_by_field_name("trait")).replace(" ", "")
    if not trait.split("<")[0].endswith("PartialEq") or "<" not in trait:
        return False
    other = trait.split("<", 1)[1].rsplit(">", 1)[0]
    return other not in ("Self", text(impl.child_by_field_name("type")).replace(" ", ""))
