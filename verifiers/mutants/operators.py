"""Which tree-sitter node kinds each mutation reads, per language: one table, one mutator.

The mutation kinds (KINDS) are the classic ones of mutation testing: relational and arithmetic
operator replacement, logical connector swap, off-by-one constants, negated conditions, removed
statements, swapped arguments and early returns.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    early_return: str  # the statement inserted at the start of a body
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
}
