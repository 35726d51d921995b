"""The tamper scan's Rust rules: libtest runs in the same binary as the crate, so a constructor
or a process exit can print its report for it; and `include_str!` reads the tests at build time."""

from __future__ import annotations

from tree_sitter import Node

from verifiers.findings import TamperFinding
from verifiers.scan import Source, string_findings, text, walk

EXIT_PATHS = ("process::exit", "process::abort", "libc::exit", "libc::_exit", "libc::abort", "libc::kill")
FOREIGN_EXITS = ("exit", "_exit", "_Exit", "abort", "kill", "raise", "write", "dup2")
LINK_ATTRS = ("link_section", "used", "no_mangle", "export_name", "link_name")
READS = ("include_str", "include_bytes", "include")
ASM = ("asm", "global_asm", "naked_asm")


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
    return only.type == "boolean_literal" and text(only) == value


def scan(src: Source, root: Node) -> list[TamperFinding]:
    found: list[TamperFinding] = []
    for node in walk(root):
        kind = node.type
        if kind == "call_expression":
            name = text(node.child_by_field_name("function")).replace(" ", "")
            if any(name == p or name.endswith("::" + p) for p in EXIT_PATHS):
                found.append(src.finding("exit-hook", node))
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
            if name in READS and any(mark in text(node) for mark in ("tests", "..", "env!", "concat!", *src.hidden)):
                found.append(
                    src.finding("reads-hidden-tests", node, f"reads the tests at build time: {src.snippet(node)}")
                )
            elif name == "env" and "CARGO_MANIFEST_DIR" in text(node):
                found.append(src.finding("reads-hidden-tests", node, f"finds the crate's folder: {src.snippet(node)}"))
            elif name in ASM:
                found.append(src.finding("exit-hook", node, f"inline assembly: {src.snippet(node)}"))
        elif kind == "impl_item" and text(node.child_by_field_name("trait")).split("<")[0].endswith("PartialEq"):
            for item in node.named_children[-1].named_children if node.named_children else ():
                if item.type != "function_item":
                    continue
                name = text(item.child_by_field_name("name"))
                wanted = {"eq": "true", "ne": "false"}.get(name)
                if wanted and _constant_bool(item.child_by_field_name("body"), wanted):
                    found.append(src.finding("const-equality", item, f"PartialEq::{name} always returns {wanted}"))
        elif kind in ("string_literal", "raw_string_literal"):
            value = "".join(text(c) for c in node.named_children if c.type == "string_content") or text(node)
            found += string_findings(src, node, value)
    return found
