"""A grammar gap in the live grid: a note beside the attempt's class (`✓§ accepted`), never the
edit-mechanics cell (`M`)."""

from __future__ import annotations

from dataclasses import replace

from agent import events as ev
from tuiapp.live.grid import cell_words
from tuiapp.live.replay import synthetic_events
from tuiapp.live.state import RunState, TaskCell
from tuiapp.looks import CLASS_LOOKS, GRAMMAR_GAP


def test_a_graded_attempt_with_a_grammar_gap_reads_as_its_class_with_the_gap_mark():
    events = synthetic_events({"A": ["P"], "B": ["R"]}, running=0)
    events = [replace(e, grammar_gaps=1) if isinstance(e, ev.TaskGraded) else e for e in events]
    state = RunState(["A", "B"], {"A": 100_000, "B": 60_000}, max_attempts=2)
    for e in events:
        state.apply(e)
    task = next(e for e in events if isinstance(e, ev.TaskGraded)).task_id
    a, b = state.arms["A"].cells[task], state.arms["B"].cells[task]
    assert (a.status, a.grammar_gap) == ("accepted", True) and (b.status, b.grammar_gap) == ("reasoning", True)
    assert cell_words(a)[:2] == ("accepted", f"✓{GRAMMAR_GAP.glyph} accepted")
    assert cell_words(b, compact=True)[:2] == ("reasoning", f"✗{GRAMMAR_GAP.glyph}")
    assert CLASS_LOOKS["mechanics"].glyph not in cell_words(a)[1]


def test_no_mark_without_a_gap_or_while_the_task_is_running_again():
    assert cell_words(TaskCell(status="accepted", attempt=1, tokens=10))[1] == "✓ accepted"
    running = TaskCell(status="running", attempt=2, tokens=10, grammar_gap=True)
    assert GRAMMAR_GAP.glyph not in cell_words(running)[1]
    assert GRAMMAR_GAP.glyph not in {look.glyph for look in CLASS_LOOKS.values()}
