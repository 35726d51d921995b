"""Mutants of a task's reference: one table-driven mutator over tree-sitter trees (operators.py).

Every mutation is one byte-range edit of one file. A mutant that does not parse clean with its
grammar, that equals the reference, or that repeats another mutant's text is dropped. Past
`max_mutants` a task keeps an even share of each kind, chosen by a stable hash (the same
mutants on every machine, so cached scores compare).
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from tree_sitter import Node

from verifiers.mechanics import grammar_for, parse, parses_clean, walk
from verifiers.mutants.operators import (
    ARITHMETIC,
    COMPARISON,
    KINDS,
    LOGICAL,
    TABLES,
    LanguageTable,
    go_argument_kind,
    go_concatenation,
    go_early_return,
    go_removal_breaks,
    go_typed_call,
)
from verifiers.tasks import Task, iter_files

DEFAULT_MAX_MUTANTS = 40
_DIGITS = re.compile(rb"^(\d+)([a-z]\w*)?$")
_SHOWN = 40  # characters of an edit shown in a mutant's description


@dataclass(frozen=True)
class Edit:
    kind: str  # one of KINDS
    start: int
    end: int
    text: bytes
    function: str = ""  # the innermost named function around the edit ("" at top level)


@dataclass(frozen=True)
class Mutant:
    """One file of the reference, changed in one place."""

    id: str  # stable: file, place and edit
    kind: str
    file: str  # path relative to reference/
    line: int
    description: str
    source: bytes  # the whole mutated file
    function: str = ""  # the innermost named function around the change ("" at top level)

    def diff(self, reference: bytes) -> str:
        """The change as a unified diff against the reference file (one line of context)."""
        lines = difflib.unified_diff(
            reference.decode(errors="replace").splitlines(),
            self.source.decode(errors="replace").splitlines(),
            f"reference/{self.file}",
            f"mutant/{self.file}",
            n=1,
            lineterm="",
        )
        return "\n".join(lines)


def _text(node: Node) -> bytes:
    return node.text or b""


def _operators(node: Node, table: LanguageTable) -> Iterator[Edit]:
    """Operator tokens of `node` swapped by the comparison, arithmetic and logical tables."""
    if node.type in table.operator_nodes:
        tokens = [node]
    elif node.type in table.operator_parents:
        tokens = [c for c in node.children if not c.is_named]
    else:
        return
    for token in tokens:
        word = _text(token).decode(errors="replace")
        if table is TABLES["go"] and word in ("+", "+=") and go_concatenation(node):
            continue  # Go has no `-` of strings
        for kind, swaps in (("comparison", COMPARISON), ("arithmetic", ARITHMETIC), ("logical", LOGICAL)):
            if word in swaps and not (kind == "comparison" and word == "=" and node.type != "binary_expression"):
                yield Edit(kind, token.start_byte, token.end_byte, swaps[word].encode())


def _constants(node: Node, table: LanguageTable) -> Iterator[Edit]:
    if node.type not in table.integers or node.child_count:
        return
    if node.type == "word" and (node.parent is None or node.parent.type == "command_name"):
        return
    if table is TABLES["go"] and node.parent is not None and node.parent.type == "array_type":
        return  # Go's array length: the composite literals of the type stop fitting
    match = _DIGITS.match(_text(node))
    if not match:
        return
    value, suffix = int(match.group(1)), match.group(2) or b""
    for changed in (value + 1, value - 1):
        if changed < 0 and not table.negative_constants:
            continue
        yield Edit("constant", node.start_byte, node.end_byte, str(changed).encode() + suffix)


def _condition(node: Node, table: LanguageTable) -> Node | None:
    if node.type not in table.conditions:
        return None
    name = table.conditions[node.type]
    if node.type == "conditional_expression":  # a if COND else b
        named = node.named_children
        return named[1] if len(named) == 3 else None
    found = node.child_by_field_name(name) if name else None
    if node.type == "for_statement":  # Go's `for cond {`: the condition has no field
        found = next((c for c in node.named_children if c.type not in ("for_clause", "range_clause", "block")), None)
    if found is None and node.type == "elif_clause":
        found = node.named_children[0] if node.named_children else None
    if found is None or found.type in ("let_condition", "let_chain"):
        return None
    return found


def _negations(node: Node, table: LanguageTable) -> Iterator[Edit]:
    condition = _condition(node, table)
    if condition is None:
        return
    prefix, suffix = table.negation
    text = _text(condition)
    if condition.type == "parenthesized_expression" and table.negation == ("!(", ")"):
        yield Edit("negate", condition.start_byte, condition.end_byte, b"(!" + text + b")")
    else:
        yield Edit("negate", condition.start_byte, condition.end_byte, prefix.encode() + text + suffix.encode())


def _removals(node: Node, table: LanguageTable) -> Iterator[Edit]:
    if node.type not in table.blocks:
        return
    statements = [c for c in node.named_children if c.type in table.statements]
    for statement in statements:
        if statement.type == "expression_statement" and statement.named_children:
            inner = statement.named_children[0]
            if inner.type == "string":  # a docstring
                continue
        if table is TABLES["rust"] and not _text(statement).rstrip().endswith(b";"):
            continue  # a block-like expression (if, match): removing it changes the block's value
        if node.type == "if_statement" and statement == _condition(node, table):
            continue
        if table is TABLES["go"] and go_removal_breaks(statement, node):
            continue
        only = len([c for c in node.named_children if c.type != "comment"]) == 1
        yield Edit("remove", statement.start_byte, statement.end_byte, (table.removed_as if only else "").encode())


def _swaps(node: Node, table: LanguageTable) -> Iterator[Edit]:
    if node.type not in table.arguments:
        return
    if node.type == "command":
        args = node.children_by_field_name("argument")
        args = [a for a in args if not _text(a).startswith(b"-")]
    else:
        args = [a for a in node.named_children if a.type != "comment"]
        if any(a.type in table.not_positional for a in args):
            args = []
    for left, right in zip(args, args[1:]):
        if _text(left) == _text(right) or left.end_byte > right.start_byte:
            continue
        if table is TABLES["go"] and (go_argument_kind(left) != go_argument_kind(right) or go_typed_call(node)):
            continue  # another kind of argument, or append's slice and element: most likely another type
        between = node.text[left.end_byte - node.start_byte : right.start_byte - node.start_byte] if node.text else b""
        yield Edit("swap-args", left.start_byte, right.end_byte, _text(right) + between + _text(left))


def _early_returns(node: Node, table: LanguageTable, source: bytes) -> Iterator[Edit]:
    if node.type not in table.functions:
        return
    body = node.child_by_field_name(table.functions[node.type])
    if body is None:
        return
    if body.type in ("block",) and table is TABLES["python"]:
        statements = [c for c in body.named_children if c.type != "comment"]
        if statements and statements[0].type == "expression_statement" and statements[0].named_children:
            if statements[0].named_children[0].type == "string":
                statements = statements[1:]
        if not statements or statements[0].type == "return_statement":
            return
        first = statements[0]
        line_start = source.rfind(b"\n", 0, first.start_byte) + 1
        indent = source[line_start : first.start_byte]
        if indent.strip():
            return
        yield Edit("early-return", first.start_byte, first.start_byte, table.early_return.encode() + b"\n" + indent)
        return
    opening = body.children[0] if body.children else None
    if opening is None or _text(opening) != b"{":
        return  # an arrow function's expression body
    statements = [c for c in body.named_children if c.type != "comment"]
    early = table.early_return
    if table is TABLES["go"]:
        listed = next((c for c in statements if c.type == "statement_list"), None)
        statements = [c for c in listed.named_children if c.type != "comment"] if listed is not None else []
        early = go_early_return(node.child_by_field_name("result"))
    if not statements or statements[0].type in ("return_statement", "return_expression"):
        return
    yield Edit("early-return", opening.end_byte, opening.end_byte, early.encode())


def _enclosing(node: Node, table: LanguageTable) -> str:
    """The name of the innermost function around node (an arrow function takes its variable's)."""
    current: Node | None = node
    while current is not None:
        if current.type in table.functions:
            name = current.child_by_field_name("name")
            if name is None and current.parent is not None and current.parent.type == "variable_declarator":
                name = current.parent.child_by_field_name("name")
            if name is not None and name.text:
                return name.text.decode(errors="replace")
        current = current.parent
    return ""


def edits_of(source: bytes, grammar: str) -> list[Edit]:
    """Every candidate edit of one file, in source order (before parsing the results)."""
    table = TABLES[grammar]
    root = parse(source, grammar).root_node
    edits: list[Edit] = []
    for node in walk(root):
        here = [
            *_operators(node, table),
            *_constants(node, table),
            *_negations(node, table),
            *_removals(node, table),
            *_swaps(node, table),
            *_early_returns(node, table, source),
        ]
        if here:
            function = _enclosing(node, table)
            edits += [replace(e, function=function) for e in here]
    return edits


def _apply(source: bytes, edit: Edit) -> bytes:
    return source[: edit.start] + edit.text + source[edit.end :]


def _line(source: bytes, offset: int) -> int:
    return source.count(b"\n", 0, offset) + 1


def _shown(data: bytes) -> str:
    text = " ".join(data.decode(errors="replace").split())
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


@dataclass(frozen=True)
class MutantSet:
    """What one file or task yielded: the kept mutants and how many edits were dropped why."""

    mutants: list[Mutant]
    unparsed: int = 0  # did not parse clean with the grammar
    duplicates: int = 0  # equal to the reference or to another mutant
    dropped: int = 0  # over max_mutants


def mutants_of_source(source: bytes, file: str, grammar: str | None = None) -> MutantSet:
    """Every parsing, distinct mutant of one file's source."""
    grammar = grammar or grammar_for(file)
    if grammar is None or grammar not in TABLES or not parses_clean(source, grammar):
        return MutantSet([])
    seen = {source}
    kept: list[Mutant] = []
    unparsed = duplicates = 0
    for edit in edits_of(source, grammar):
        mutated = _apply(source, edit)
        if mutated in seen:
            duplicates += 1
            continue
        seen.add(mutated)
        if not parses_clean(mutated, grammar):
            unparsed += 1
            continue
        before = _shown(source[edit.start : edit.end]) or "∅"
        after = _shown(edit.text) or "∅"
        ident = hashlib.sha256(f"{file}\0{edit.start}\0{edit.end}\0".encode() + edit.text).hexdigest()[:12]
        line = _line(source, edit.start)
        description = f"{file}:{line} {edit.kind}: {before} → {after}"
        kept.append(Mutant(ident, edit.kind, file, line, description, mutated, edit.function))
    return MutantSet(kept, unparsed, duplicates)


def changed_files(task: Task) -> list[tuple[str, bytes]]:
    """The reference's source files that differ from the workspace (or are new), with a grammar."""
    found = []
    for path in iter_files(task.reference):
        rel = str(path.relative_to(task.reference))
        if path.is_symlink() or grammar_for(rel) not in TABLES:
            continue
        data = path.read_bytes()
        before = task.workspace / rel
        if before.is_file() and not before.is_symlink() and before.read_bytes() == data:
            continue
        found.append((rel, data))
    return found


def _spread(mutants: list[Mutant], limit: int) -> list[Mutant]:
    """At most `limit` mutants, taking each kind in turn, each kind's own order a stable hash."""
    by_kind = {k: sorted((m for m in mutants if m.kind == k), key=lambda m: m.id) for k in KINDS}
    chosen: list[Mutant] = []
    while len(chosen) < limit and any(by_kind.values()):
        for kind in KINDS:
            if by_kind[kind] and len(chosen) < limit:
                chosen.append(by_kind[kind].pop(0))
    return sorted(chosen, key=lambda m: (m.file, m.line, m.id))


def mutants_of_task(task: Task, max_mutants: int = DEFAULT_MAX_MUTANTS) -> MutantSet:
    """The mutants of a task's reference files that differ from its workspace."""
    everything: list[Mutant] = []
    unparsed = duplicates = 0
    for rel, data in changed_files(task):
        found = mutants_of_source(data, rel)
        everything += found.mutants
        unparsed += found.unparsed
        duplicates += found.duplicates
    chosen = _spread(everything, max_mutants) if len(everything) > max_mutants else everything
    return MutantSet(chosen, unparsed, duplicates, len(everything) - len(chosen))


def overlay(task: Task, mutant: Mutant, dest: Path) -> Path:
    """The reference overlay with the mutant's file in place, written under dest."""
    from verifiers.tasks import copy_with_overlays

    copy_with_overlays(task.reference, dest)
    target = dest / mutant.file
    target.unlink(missing_ok=True)
    target.write_bytes(mutant.source)
    return dest
