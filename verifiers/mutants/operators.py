"""Which tree-sitter node kinds each mutation reads, per language: one table, one mutator.

The mutation kinds (KINDS) are the classic ones of mutation testing: relational and arithmetic
operator replacement, logical connector swap, off-by-one constants, negated conditions, removed
statements, swapped arguments and early returns. Go compiles only what typechecks: its
`go_*` rules below keep the mutator from writing what its compiler rejects by rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from verifiers.mechanics import walk

KINDS = ("comparison", "arithmetic", "logical", "constant", "negate", "remove", "swap-args", "early-return")

COMPARISON = {
    "<": "<=",
    "<=": "<",
    ">": ">=",
    ">=": ">",
    "==": "!=",
    "!=": "==",
    "===": "!==",
    "!==": "===",
    "-lt": "-le",
    "-le": "-lt",
    "-gt": "-ge",
    "-ge": "-gt",
    "-eq": "-ne",
    "-ne": "-eq",
    "=": "!=",
    "-z": "-n",
    "-n": "-z",
}
ARITHMETIC = {
    "+": "-",
    "-": "+",
    "*": "/",
    "/": "*",
    "//": "*",
    "%": "*",
    "+=": "-=",
    "-=": "+=",
    "*=": "/=",
    "/=": "*=",
}
LOGICAL = {"&&": "||", "||": "&&", "and": "or", "or": "and"}


@dataclass(frozen=True)
class LanguageTable:
    """The node kinds of one grammar that the mutator reads."""

    operator_parents: frozenset[str]  # nodes whose operator token may be swapped
    operator_nodes: frozenset[str]  # named nodes that are themselves operators (bash's test_operator)
    integers: frozenset[str]  # integer literal kinds
    conditions: dict[str, str]  # node kind -> field holding its condition
    negation: tuple[str, str]  # how a condition is negated: prefix, suffix around its text
    blocks: frozenset[str]  # statement lists whose statements may be removed
    statements: frozenset[str]  # statement kinds that may be removed
    removed_as: str  # what a removed statement leaves (Python's `pass` in an emptied block)
    arguments: frozenset[str]  # argument list kinds
    not_positional: frozenset[str]  # argument kinds that may not be swapped (keywords, spreads)
    functions: dict[str, str]  # function kind -> field holding its body
    early_return: str  # the statement inserted at the start of a body (Go's: one zero value per result)
    negative_constants: bool = True  # whether n-1 of 0 is written (not for unsigned Rust literals)


_JS = LanguageTable(
    operator_parents=frozenset({"binary_expression", "augmented_assignment_expression"}),
    operator_nodes=frozenset(),
    integers=frozenset({"number"}),
    conditions={"if_statement": "condition", "while_statement": "condition", "ternary_expression": "condition"},
    negation=("!(", ")"),
    blocks=frozenset({"statement_block"}),
    statements=frozenset({"expression_statement"}),
    removed_as="",
    arguments=frozenset({"arguments"}),
    not_positional=frozenset({"spread_element"}),
    functions={
        "function_declaration": "body",
        "function_expression": "body",
        "arrow_function": "body",
        "method_definition": "body",
        "generator_function_declaration": "body",
    },
    early_return=" return undefined;",
)

# Go compiles a mutant only if it typechecks: argument swaps skip calls with type arguments
# (`make([]int, n)`), and generate.py skips edits that Go rejects by rule (a `-` of strings, a
# negative index, an array length, a removal that leaves a variable or import unused).
_GO_TYPES = ("slice_type", "map_type", "channel_type", "array_type", "pointer_type", "function_type")
_GO = LanguageTable(
    operator_parents=frozenset({"binary_expression", "assignment_statement"}),
    operator_nodes=frozenset(),
    integers=frozenset({"int_literal"}),
    conditions={"if_statement": "condition", "for_clause": "condition", "for_statement": ""},  # `for cond {`
    negation=("!(", ")"),
    blocks=frozenset({"statement_list"}),
    statements=frozenset({"expression_statement", "assignment_statement", "inc_statement", "dec_statement"}),
    removed_as="",
    arguments=frozenset({"argument_list"}),
    not_positional=frozenset(
        {"variadic_argument", "interface_type", "struct_type", "qualified_type", "generic_type", *_GO_TYPES}
    ),
    functions={"function_declaration": "body", "method_declaration": "body", "func_literal": "body"},
    early_return=" return;",
    negative_constants=False,  # unsigned types, indexes and shift counts reject negative constants
)

TABLES: dict[str, LanguageTable] = {
    "python": LanguageTable(
        operator_parents=frozenset(
            {"comparison_operator", "binary_operator", "boolean_operator", "augmented_assignment"}
        ),
        operator_nodes=frozenset(),
        integers=frozenset({"integer"}),
        conditions={
            "if_statement": "condition",
            "elif_clause": "condition",
            "while_statement": "condition",
            "conditional_expression": "",  # a if COND else b: the second child
        },
        negation=("not (", ")"),
        blocks=frozenset({"block"}),
        statements=frozenset({"expression_statement"}),
        removed_as="pass",
        arguments=frozenset({"argument_list"}),
        not_positional=frozenset({"keyword_argument", "list_splat", "dictionary_splat", "parenthesized_expression"}),
        functions={"function_definition": "body"},
        early_return="return None",
    ),
    "javascript": _JS,
    "typescript": _JS,
    "tsx": _JS,
    "rust": LanguageTable(
        operator_parents=frozenset({"binary_expression", "compound_assignment_expr"}),
        operator_nodes=frozenset(),
        integers=frozenset({"integer_literal"}),
        conditions={"if_expression": "condition", "while_expression": "condition"},
        negation=("!(", ")"),
        blocks=frozenset({"block"}),
        statements=frozenset({"expression_statement"}),
        removed_as="",
        arguments=frozenset({"arguments"}),
        not_positional=frozenset(),
        functions={"function_item": "body"},
        early_return=" return Default::default();",
        negative_constants=False,
    ),
    "bash": LanguageTable(
        operator_parents=frozenset({"binary_expression", "list", "unary_expression"}),
        operator_nodes=frozenset({"test_operator"}),
        integers=frozenset({"number", "word"}),
        conditions={"if_statement": "condition", "elif_clause": "condition", "while_statement": "condition"},
        negation=("! ", ""),
        blocks=frozenset({"program", "compound_statement", "do_group", "if_statement", "else_clause", "elif_clause"}),
        statements=frozenset({"command", "pipeline", "variable_assignment", "list"}),
        removed_as="",
        arguments=frozenset({"command"}),
        not_positional=frozenset(),
        functions={"function_definition": "body"},
        early_return=" return 0;",
    ),
    "go": _GO,
}


def _text(node: Node) -> bytes:
    return node.text or b""


# Go's compiler rejects what other languages run: the helpers below keep its mutants compiling.
_GO_STRINGS = ("interpreted_string_literal", "raw_string_literal")
_GO_LITERALS = (*_GO_STRINGS, "int_literal", "float_literal", "rune_literal", "imaginary_literal", "true", "false")
_GO_NUMBERS = re.compile(r"^(?:u?int(?:8|16|32|64)?|uintptr|float(?:32|64)|complex(?:64|128)|byte|rune)$")
_GO_SCOPES = ("block", "for_statement", "if_statement", "switch_statement", "type_switch_statement", "source_file")
_GO_ZEROS = {"string": '""', "bool": "false", "error": "nil", "any": "nil"}
_GO_NILS = ("pointer_type", "slice_type", "map_type", "channel_type", "function_type", "interface_type")


def go_concatenation(node: Node) -> bool:
    """A `+` (or `+=`) with a string literal among its operands: a concatenation."""
    if node.type in _GO_STRINGS:
        return True
    if node.type == "parenthesized_expression":
        return any(go_concatenation(c) for c in node.named_children)
    if node.type in ("binary_expression", "assignment_statement", "expression_list"):
        operator = node.child_by_field_name("operator")
        if operator is not None and _text(operator) not in (b"+", b"+="):
            return False
        return any(go_concatenation(c) for c in node.named_children)
    return False


def go_argument_kind(node: Node) -> str:
    """What an argument's syntax says of its type: a kind of literal, a function literal, an
    address (`&x`), or nothing (a name, a call: the types cannot be told apart)."""
    if node.type in _GO_LITERALS or node.type in ("func_literal", "composite_literal"):
        return node.type
    return "address" if node.type == "unary_expression" and _text(node).startswith(b"&") else ""


def go_typed_call(arguments: Node) -> bool:
    """Arguments of a builtin whose parameters differ in type (append's slice and elements)."""
    call = arguments.parent
    function = call.child_by_field_name("function") if call is not None else None
    return function is not None and _text(function) in (b"append", b"delete")


def _go_zero(result: Node) -> str:
    name = _text(result).decode(errors="replace")
    if _GO_NUMBERS.match(name):
        return "0"
    if result.type in _GO_NILS:
        return "nil"
    return _GO_ZEROS.get(name, f"*new({name})")  # any other type, type parameters included


def go_early_return(result: Node | None) -> str:
    """` return` with the zero value of each result (bare when the results are named)."""
    if result is None:
        return " return;"
    if result.type != "parameter_list":
        return f" return {_go_zero(result)};"
    declared = [c for c in result.named_children if c.type == "parameter_declaration"]
    if any(c.child_by_field_name("name") is not None for c in declared):
        return " return;"
    types = [c.child_by_field_name("type") for c in declared]
    return " return " + ", ".join(_go_zero(t) for t in types if t is not None) + ";"


def go_removal_breaks(statement: Node, block: Node) -> bool:
    """Whether removing `statement` leaves Go code that does not compile: a local variable or an
    import no longer read, or a function with results that loses its final panic."""
    if _text(statement).startswith(b"panic(") and block.named_children[-1] == statement:
        return True
    root = block
    while root.parent is not None:
        root = root.parent
    packages: set[bytes] = set()
    left: dict[bytes, list[Node]] = {_text(n): [] for n in walk(statement) if n.type == "identifier"}
    for node in walk(root):  # the removed names' other places
        if node.type == "import_spec":
            packages.add(_text(node.child_by_field_name("name") or node).strip(b'"').rsplit(b"/", 1)[-1])
        elif node.type in ("identifier", "package_identifier") and _text(node) in left:
            if not statement.start_byte <= node.start_byte < statement.end_byte:
                left[_text(node)].append(node)
    for name, others in left.items():
        if name in packages and not any(n.parent is not None and n.parent.type != "import_spec" for n in others):
            return True
        for declared in filter(_go_declares, others):
            scope = _go_scope(declared)
            if scope is None or not scope.start_byte <= statement.start_byte < scope.end_byte:
                continue  # a package's variable (never "unused"), or another variable of that name
            if not any(_go_reads(n) for n in others if scope.start_byte <= n.start_byte < scope.end_byte):
                return True
    return False


def _go_scope(declaration: Node) -> Node | None:
    """The block a local variable lives in (a for or if statement's for its clause's variables)."""
    node = declaration.parent
    while node is not None and node.type not in _GO_SCOPES:
        node = node.parent
    return node if node is not None and node.type != "source_file" else None


def _go_declares(node: Node) -> bool:
    parent = node.parent
    if parent is not None and parent.type == "var_spec":
        return True
    return (
        parent is not None
        and parent.type == "expression_list"
        and parent.parent is not None
        and parent.parent.type in ("short_var_declaration", "range_clause")
        and parent.parent.child_by_field_name("left") == parent
    )


def _go_reads(node: Node) -> bool:
    """Not a declaration of the name, nor the target of a plain `=`."""
    parent = node.parent
    if _go_declares(node) or parent is None:
        return False
    assignment = parent.parent if parent.type == "expression_list" else None
    if assignment is not None and assignment.type == "assignment_statement":
        operator = assignment.child_by_field_name("operator")
        return not (
            assignment.child_by_field_name("left") == parent and operator is not None and _text(operator) == b"="
        )
    return True
