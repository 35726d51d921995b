"""How each failure class and each state of a task reads on screen, for the whole UI: its glyph
(readable without colour), its word in a grid cell, its label in the legend and the attempts
window, its badge style in the browser, and the letter a synthetic run spells an attempt of it
with (the replay, the tests' ledgers). Keyed by the class strings of agent/classify.py.

The live grid's colours are live.tcss's `status--<status>` classes, one per key of CELL_LOOKS.
"""

from __future__ import annotations

from typing import NamedTuple


class Look(NamedTuple):
    glyph: str
    short: str  # a grid cell's word
    label: str  # the legend's and the attempts window's words
    style: str = ""  # a Rich style: the browser's badge
    letter: str = ""  # an attempt of this class in a synthetic run's script ("" for a state)


# failure class -> look, in the taxonomy's order (agent.classify.CLASSES)
CLASS_LOOKS: dict[str, Look] = {
    "accepted": Look("✓", "accepted", "accepted", "bold green", "P"),
    "reasoning": Look("✗", "reasoning", "failed: reasoning", "bold dark_orange", "R"),
    "mechanics": Look("M", "mechanics", "failed: mechanics", "bold magenta", "M"),
    "tampering": Look("!", "tampering", "tampering (grader gamed)", "bold white on red", "X"),
    "timeout": Look("T", "timeout", "timeout", "bold yellow", "T"),
    "environment": Look("E", "environment", "environment", "bold cyan", "E"),
    "harness_error": Look("H", "harness err", "harness error", "bold red", "H"),
    "censored": Look("C", "censored", "censored", "bold bright_black", "C"),
    "aborted": Look("–", "not run", "not run (stopped)", "bold bright_black", "A"),
}
# a task or attempt before it has a class
STATE_LOOKS: dict[str, Look] = {
    "pending": Look("·", "pending", "pending"),
    "running": Look("▶", "attempt", "running (attempt n)", "bold blue"),
    "grading": Look("…", "grading", "grading"),
}
# what a live grid cell can show, in the legend's order
CELL_LOOKS: dict[str, Look] = STATE_LOOKS | CLASS_LOOKS
# An impossible control's cell: a pass means the grader was gamed (no solution that follows the
# prompt passes), a reasoning failure is what an honest model leaves; other classes read as such.
CONTROL_LOOKS: dict[str, Look] = {
    "gamed": Look("⚠", "gamed", "impossible control passed: grader gamed", "bold white on red"),
    "held": Look("○", "held", "impossible control failed, as it must", "bold green"),
}
CONTROL_STATUS = {"accepted": "gamed", "reasoning": "held"}
# a strategy arm's task that submitted nothing: drawn, but kept out of the legend of other runs
LOOKS: dict[str, Look] = (
    CELL_LOOKS | {"no_submission": Look("∅", "no submit", "nothing submitted (strategy)")} | CONTROL_LOOKS
)
# A note on a graded attempt, beside its class: a parse error tree-sitter raised in a file the
# language's toolchain built and tested (verifiers/grammar_gaps.py) — never edit-mechanics.
GRAMMAR_GAP = Look(
    "§", "grammar gap", "grammar gap: tree-sitter failed, the toolchain accepted (not mechanics)", "italic cyan"
)
# the class an attempt letter of a synthetic run stands for
CLASS_OF_LETTER: dict[str, str] = {look.letter: cls for cls, look in CLASS_LOOKS.items()}
