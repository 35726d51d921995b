"""The browser's pure parts: diff parsing, grid cells, filters and labels."""

from __future__ import annotations

import difflib
import io

from rich.console import Console

from agent.classify import CLASS_LABELS
from agent.run.workspace_diff import unified_diff
from tuiapp.browse import data, labels
from tuiapp.browse.data import Cell, Filters, GridRow, cell_of, filter_choices
from tuiapp.browse.diffview import parse_unified, render_diff


def _plain(renderable) -> str:
    console = Console(file=io.StringIO(), width=140, color_system=None)
    console.print(renderable)
    return console.file.getvalue()


def test_parse_unified_reads_hunks_by_their_counts(tmp_path):
    fixture = tmp_path / "fixture"
    fixture.mkdir()
    (fixture / "notes.md").write_text("title\n-- old\nend\n")
    (fixture / "gone.py").write_text("x = 1\n")
    # "-- old" -> "++ new" gives the hunk lines "--- old" / "+++ new", which look like a file header
    diff = unified_diff(fixture, {"notes.md": "title\n++ new\nend", "gone.py": None, "new/mod.py": "y = 2\n"})
    files = parse_unified(diff)
    assert [(f.path, f.status) for f in files] == [
        ("notes.md", "changed"),
        ("gone.py", "deleted"),
        ("new/mod.py", "new file"),
    ]
    notes = files[0].hunks[0]
    assert notes.lines == [
        (" ", "title"),
        ("-", "-- old"),
        ("-", "end"),
        ("+", "++ new"),
        ("+", "end"),
        ("\\", " No newline at end of file"),
    ]
    assert files[2].hunks[0].new_start == 1 and files[2].hunks[0].lines == [("+", "y = 2")]


def test_render_diff_both_ways_and_without_a_diff():
    old, new = "a = 1\nb = 2\nc = 3\n", "a = 1\nb = 20\nc = 3\nd = 4\n"
    diff = "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/m.py", "b/m.py"))
    unified = _plain(render_diff(diff, {"m.py": new}, {"m.py": old}, side_by_side=False, empty="none"))
    assert "- b = 2" in unified and "+ b = 20" in unified and "+ d = 4" in unified
    side = _plain(render_diff(diff, {"m.py": new}, {}, side_by_side=True, empty="none"))
    row = next(line for line in side.splitlines() if "b = 2" in line)
    assert "b = 20" in row  # the removed and the added line share a row
    assert (
        _plain(render_diff("", {}, {}, side_by_side=True, empty="No diff: nothing changed.")).strip()
        == "No diff: nothing changed."
    )


def _attempt(no: int, **kw) -> dict:
    row = {
        "attempt_no": no,
        "status": "done",
        "verdict": "fail",
        "failure_class": "reasoning",
        "accepted": 0,
        "total_tokens": 100,
    }
    return row | kw


def test_cell_of_reports_the_decisive_attempt():
    assert cell_of("A", []) == Cell("A", 0, "not run", "not run", None, 0)
    accepted = cell_of("A", [_attempt(1), _attempt(2, verdict="pass", failure_class="accepted", accepted=1)])
    assert (accepted.verdict, accepted.failure_class, accepted.accepted_on, accepted.tokens) == (
        "pass",
        "accepted",
        2,
        200,
    )
    assert cell_of("A", [_attempt(1), _attempt(2, failure_class="mechanics")]).failure_class == "mechanics"
    running = cell_of("A", [_attempt(1, status="running", verdict=None, failure_class=None)])
    assert (running.verdict, running.failure_class) == ("running", "running")
    ended = cell_of("A", [_attempt(1, status="ended", verdict=None, failure_class=None)])
    assert (ended.verdict, ended.failure_class) == ("ungraded", "ungraded")


def test_cell_of_reads_the_class_the_report_reads():
    """With the arms row, the class is agent.metrics.outcome's: the report's, never its own."""
    from agent.metrics.outcome import AttemptRecord, task_outcome

    tries = [_attempt(1, task_id="t")]
    killed = {"state": "running", "max_attempts": 2, "unfinished_json": None, "censored": 0}
    stopped = {"state": "decided", "max_attempts": 2, "unfinished_json": '["t"]', "censored": 0}
    spent = {"state": "finished", "max_attempts": 1, "unfinished_json": None, "censored": 0}
    for row, expected in ((killed, "aborted"), (stopped, "not run"), (spent, "reasoning")):
        report = task_outcome(
            "t",
            [AttemptRecord("t", 1, "reasoning", False, 100)],
            max_attempts=row["max_attempts"],
            arm_state=row["state"],
            listed_unfinished=row is stopped,
            cap_hit=False,
        )
        assert cell_of("A", tries, row).failure_class == expected
        assert report.failure_class == expected.replace("not run", "not_run")


def test_filters_match_any_cell_and_search_task_ids():
    rows = [
        GridRow(
            "py-add",
            "python",
            "bugfix",
            (Cell("A", 1, "pass", "accepted", 1, 9), Cell("B", 2, "fail", "mechanics", None, 9)),
        ),
        GridRow(
            "js-clamp",
            "javascript",
            "boundary",
            (Cell("A", 1, "timeout", "timeout", None, 9), Cell("B", 0, "not run", "not run", None, 0)),
        ),
    ]
    assert [r.task_id for r in rows if Filters(failure_class="mechanics").matches(r)] == ["py-add"]
    assert [r.task_id for r in rows if Filters(verdict="timeout", language="javascript").matches(r)] == ["js-clamp"]
    assert [r.task_id for r in rows if Filters(search="CLA").matches(r)] == ["js-clamp"]
    assert not Filters().active and Filters(kind="bugfix").active
    choices = filter_choices(rows)
    assert choices["failure_class"] == ["accepted", "mechanics", "timeout", "not run"]  # taxonomy order
    assert choices["language"] == ["javascript", "python"]


def test_labels_agree_with_the_report():
    assert labels.CLASS_LABELS == CLASS_LABELS
    assert labels.class_label("mechanics") == "edit-mechanics" and labels.class_label(None) == "—"
    assert [labels.duration(ms) for ms in (None, 450, 12_300, 600_000)] == ["—", "450 ms", "12.3 s", "10.0 min"]
    assert labels.when("2026-11-30T01:50:04.068+00:00") == "2026-11-30 01:50:04 UTC"


def test_loads_tolerates_broken_json():
    assert data.loads(None, []) == [] and data.loads("{not json", {}) == {} and data.loads('["a"]', []) == ["a"]


def test_the_data_layer_does_not_import_textual():
    import subprocess
    import sys

    code = (
        "import sys, tuiapp.browse.data, tuiapp.browse.diffview, tuiapp.browse.evidence; "
        "sys.exit('textual' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_whole_file_finding_shows_no_line_or_node():
    from rich.console import Console

    from tuiapp.browse.evidence import finding_snippet

    class View:
        files = {"clamp.mjs": "x\n"}

    console = Console(width=120, record=True)
    console.print(
        finding_snippet(
            {
                "file": "clamp.mjs",
                "flag": "truncated",
                "line": None,
                "column": None,
                "node_kind": None,
                "message": "file shrank from 227 to 14 bytes",
            },
            View(),
        )
    )
    shown = console.export_text()
    assert "clamp.mjs  truncated  file shrank" in shown and "None" not in shown


def test_impossible_controls_are_in_no_headline_and_read_as_gamed_or_held(tmp_path):
    """The runs list's figures leave the controls out, as the report does; the grid draws a
    control's pass as a gamed grader and its reasoning failure as held, never as accepted."""
    import sqlite3

    from agent.ledger import Ledger
    from tests.agent.metrics.conftest import LedgerBuilder
    from tuiapp.browse.data import headlines, load_run
    from tuiapp.browse.run import cell_text

    ledger = Ledger(tmp_path / "l.sqlite")
    build = LedgerBuilder(ledger)
    run = build.run(["t1", "t2", "c1"])
    build.arm(run, "A", ["P", "R", "R"])
    build.arm(run, "B", ["P", "R", "P"])
    with sqlite3.connect(tmp_path / "l.sqlite") as conn:
        conn.execute("update tasks set control = 'impossible' where task_id = 'c1'")
    conn.close()
    heads = {h.name: h for h in headlines(ledger, run)}
    assert {n: (h.accepted, h.n_tasks) for n, h in heads.items()} == {"A": (1, 2), "B": (1, 2)}
    rows = {r.task_id: r for r in load_run(ledger, run).rows}
    assert rows["c1"].control and not rows["t1"].control
    held, gamed = (cell_text(c, control=True).plain for c in rows["c1"].cells)
    assert "○ held control" in held and "⚠ gamed control" in gamed
    assert "accepted" in cell_text(rows["t1"].cells[1], control=False).plain
    ledger.close()
