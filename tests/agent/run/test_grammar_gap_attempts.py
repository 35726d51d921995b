"""Attempts on a Rust task whose valid code tree-sitter-rust cannot parse (`dyn 'a + Fn()`), run
by the engine with scripted models and graded with real cargo in the sandbox: a grammar gap is a
note on the attempt, in the ledger and the report, never edit-mechanics."""

from __future__ import annotations

import json

from agent import events as ev
from agent.ledger import Ledger
from agent.metrics.render import render_report
from agent.metrics.report import build_report
from agent.metrics.run_lines import grammar_gap_line
from tests.support.engine_helpers import arm_toml, run_sync, write_config
from tests.support.verifier_tasks import rust_dyn_lifetime_task


def test_grammar_gaps_are_notes_and_a_file_rustc_rejects_is_still_mechanics(tmp_path):
    rust_dyn_lifetime_task(tmp_path / "suite")
    arms = [arm_toml("solver", "solver"), arm_toml("wrong", "wrong"), arm_toml("cut", "unparseable")]
    cfg = write_config(tmp_path, arms, suites=(str(tmp_path / "suite"),), max_attempts=1, max_turns=4)
    _, run_id, events = run_sync(cfg, tmp_path / "l.sqlite")
    ledger = Ledger(tmp_path / "l.sqlite")
    rows = {
        a["arm"]: a
        for a in ledger.query(
            "select r.name as arm, a.failure_class, g.verdict, g.mechanics_json, g.grammar_gaps_json "
            "from attempts a join arms r on r.id = a.arm_id join grades g on g.attempt_id = a.id where a.run_id = ?",
            [run_id],
        )
    }
    graded = {e.arm: e for e in events if isinstance(e, ev.TaskGraded)}

    # the reference's code, its test passing: accepted, with the parse error kept as a note
    solver = rows["solver"]
    assert (solver["verdict"], solver["failure_class"]) == ("pass", "accepted")
    assert json.loads(solver["mechanics_json"]) == []
    (gap,) = json.loads(solver["grammar_gaps_json"])
    assert (gap["file"], gap["line"], gap["flag"]) == ("src/lib.rs", 2, "syntax_error")
    assert graded["solver"].grammar_gaps == 1

    # the same valid syntax, its test failing: a reasoning failure, not edit-mechanics
    wrong = rows["wrong"]
    assert (wrong["verdict"], wrong["failure_class"]) == ("fail", "reasoning")
    assert json.loads(wrong["grammar_gaps_json"])[0]["file"] == "src/lib.rs"

    # the file cut mid-line: rustc rejects it, no test ran, so it stays edit-mechanics
    cut = rows["cut"]
    assert cut["failure_class"] == "mechanics" and json.loads(cut["mechanics_json"])
    assert cut["grammar_gaps_json"] is None and graded["cut"].grammar_gaps == 0

    report = build_report(ledger, [run_id], resamples=0)
    (section,) = report["runs"]
    gaps = {a["metrics"]["name"]: a["grammar_gaps"] for a in section["arms"]}
    assert gaps == {
        "solver": {"attempts": 1, "files": 1},
        "wrong": {"attempts": 1, "files": 1},
        "cut": {"attempts": 0, "files": 0},
    }
    text = render_report(report, "text")
    assert text.count("grammar gaps: 1 attempt (1 file) that tree-sitter could not parse") == 2  # solver, wrong


def test_the_report_line_is_one_line_and_only_when_there_are_gaps():
    assert grammar_gap_line(None) is None
    assert grammar_gap_line({"attempts": 0, "files": 0}) is None
    line = grammar_gap_line({"attempts": 2, "files": 3})
    assert line is not None and "\n" not in line
    assert line.startswith("grammar gaps: 2 attempts (3 files) that tree-sitter could not parse")
    assert "not edit-mechanics" in line
    assert grammar_gap_line({"attempts": 1, "files": 1}).startswith("grammar gaps: 1 attempt (1 file) ")
