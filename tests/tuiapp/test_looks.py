"""One table of looks for the whole UI (tuiapp/looks.py): every failure class agent/classify.py
defines has one, every look is a real class or state, and each reads apart from the others
without colour."""

from __future__ import annotations

import re
from pathlib import Path

from agent.classify import CLASSES
from tuiapp.looks import CELL_LOOKS, CLASS_LOOKS, CLASS_OF_LETTER, LOOKS, STATE_LOOKS

LIVE_TCSS = Path(__file__).resolve().parents[2] / "tuiapp" / "live" / "live.tcss"


def test_every_failure_class_has_a_look_and_every_class_look_is_a_class():
    assert list(CLASS_LOOKS) == list(CLASSES)  # the taxonomy's order: the legend and the filters follow it
    assert not set(STATE_LOOKS) & set(CLASSES)


def test_each_status_reads_apart_without_colour():
    for field in ("glyph", "short", "label"):
        values = [getattr(look, field) for look in LOOKS.values()]
        assert len(set(values)) == len(values), field


def test_each_class_has_a_letter_a_style_and_a_colour():
    assert sorted(CLASS_OF_LETTER.values()) == sorted(CLASSES)
    assert all(len(letter) == 1 for letter in CLASS_OF_LETTER)
    assert all(look.style for look in CLASS_LOOKS.values())
    coloured = set(re.findall(r"TaskGrid > \.status--(\w+)", LIVE_TCSS.read_text()))
    assert coloured == set(LOOKS), coloured ^ set(LOOKS)


def test_the_legend_lists_the_states_then_the_classes():
    assert list(CELL_LOOKS) == [*STATE_LOOKS, *CLASSES]
