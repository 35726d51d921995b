"""The field's suites as a user brings them: our own exercises in the polyglot layout (python,
rust and javascript, a jest spec among them, ignored and skipped cases, one that needs a crate,
one whose test skips at run time, a Rust and a JavaScript reference that tree-sitter cannot
parse), imported with `quotabench import polyglot`, gated with `quotabench validate`, then run
paired by scripted models and graded with the real runners in the sandbox."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent.ledger import Ledger
from agent.metrics.render import render_report
from agent.metrics.report import build_report
from tests.support import exercism_tree as tree
from tests.support.engine_helpers import arm_toml, run_sync, write_config
from tests.support.verifier_tasks import LAZY_CARGO, LAZY_DYN, LAZY_STUB
from verifiers.exercism import NOTES_FILE
from verifiers.isolation import bwrap_status

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not bwrap_status().usable, reason="needs the bubblewrap sandbox")]
QUOTABENCH = [sys.executable, "-m", "tuiapp.cli"]

LAZY_TEST = """use lazy::Lazy;

#[test]
fn builds() {
    let _ = Lazy::new(|| 1);
}

#[test]
#[ignore]
fn gets_what_the_closure_returns() {
    let n = 41;
    assert_eq!(Lazy::new(|| n + 1).get(), 42);
}

#[test]
#[ignore]
fn gets_it_twice() {
    let lazy = Lazy::new(|| 7);
    assert_eq!(lazy.get() + lazy.get(), 14);
}
"""
PATHS_SPEC = """import { home } from './paths';

describe('home()', () => {
  test('is a string', () => {
    expect(typeof home()).toBe('string');
  });

  xtest('keeps its backslashes', () => {
    expect(home()).toEqual('C:\\\\users\\\\me');
  });
});
"""
SOMEDAY_TEST = """import pytest

from someday import answer


def test_answer():
    assert answer() == 42


def test_later():
    pytest.skip("not written yet")
"""
# A model's answer that skips every test it is graded with: a skip judges nothing.
LEAP_SKIPS = "import pytest\n\n\ndef leap_year(year):\n    pytest.skip('later')\n"


def rust_lazy(track: Path) -> Path:
    return tree.exercise(
        track,
        "lazy",
        {
            ".meta/config.json": tree.config(["src/lib.rs"], ["tests/lazy.rs"], [".meta/example.rs"]),
            ".meta/example.rs": LAZY_DYN,  # `dyn 'a + Fn()`: rustc builds it, tree-sitter-rust cannot parse it
            "Cargo.toml": LAZY_CARGO,
            "src/lib.rs": LAZY_STUB,
            "tests/lazy.rs": LAZY_TEST,
        },
    )


def javascript_paths(track: Path) -> Path:
    return tree.exercise(
        track,
        "paths",
        {
            ".meta/config.json": tree.config(["paths.js"], ["paths.spec.js"], [".meta/proof.ci.js"]),
            # a tagged template may hold `\u` + non-hex; tree-sitter-javascript refuses it
            ".meta/proof.ci.js": "export const home = () => String.raw`C:\\users\\me`;\n",
            "paths.js": "export const home = () => {\n  throw new Error('Remove this line and implement the function');\n};\n",
            "paths.spec.js": PATHS_SPEC,
        },
    )


def python_someday(track: Path) -> Path:
    return tree.exercise(
        track,
        "someday",
        {
            ".meta/config.json": tree.config(["someday.py"], ["someday_test.py"], [".meta/example.py"]),
            ".meta/example.py": "def answer():\n    return 42\n",
            "someday.py": "def answer():\n    pass\n",
            "someday_test.py": SOMEDAY_TEST,
        },
    )


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("imported")
    src = tree.polyglot_tree(root / "polyglot")
    rust_lazy(src / "rust")
    javascript_paths(src / "javascript")
    python_someday(src / "python")
    done = subprocess.run(
        [*QUOTABENCH, "import", "polyglot", str(src), str(root / "suites")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return root / "suites"


def test_import_names_what_it_skipped_and_the_gate_refuses_a_test_that_skips_itself(imported):
    notes = json.loads((imported / NOTES_FILE).read_text())
    listed = {p.parent.name for p in imported.glob("*/*/task.toml")}
    assert listed == {"py-leap", "py-someday", "rs-grains", "rs-lazy", "js-two-fer", "js-paths", "go-hello-world"}
    skipped = {key: note["reason"] for key, note in notes.items() if note["status"] != "imported"}
    # numpy, a broken config, a crate, lodash, a go module, java: each with its reason
    assert len(skipped) == 6, skipped
    assert all(reason for reason in skipped.values()), skipped

    done = subprocess.run([*QUOTABENCH, "validate", str(imported), "--jobs", "2"], capture_output=True, text=True)
    assert done.returncode == 1, done.stdout + done.stderr
    # the one refusal: a hidden test that skips at run time, named; every other task gates clean
    assert "py-someday: 1 of 2 hidden tests skipped" in done.stdout + done.stderr
    assert "someday_test.py::test_later" in done.stdout + done.stderr
    assert f"{len(listed) - 1} of {len(listed)} tasks gate cleanly" in done.stdout


def test_a_paired_run_over_the_imported_suites_grades_each_test(imported, tmp_path):
    leap = imported / "python" / "py-leap"
    (leap / "negative").mkdir(exist_ok=True)
    (leap / "negative" / "leap.py").write_text(LEAP_SKIPS)
    tasks = ["py-leap", "rs-grains", "rs-lazy", "js-two-fer", "js-paths"]
    suites = tuple(str(imported / lang) for lang in ("python", "rust", "javascript"))
    cfg = write_config(
        tmp_path, [arm_toml("A", "solver"), arm_toml("B", "wrong")], suites=suites, tasks=tasks, max_attempts=1
    )
    _, run_id, _ = run_sync(cfg, tmp_path / "l.sqlite")
    ledger = Ledger(tmp_path / "l.sqlite")
    rows = {
        (r["arm"], r["task"]): r
        for r in ledger.query(
            "select r.name as arm, a.task_id as task, a.failure_class, g.verdict, g.passed, g.failed,"
            " g.expected_tests, g.failing_tests_json, g.tampering_json, g.mechanics_json, g.grammar_gaps_json"
            " from attempts a join arms r on r.id = a.arm_id"
            " join grades g on g.attempt_id = a.id where a.run_id = ?",
            [run_id],
        )
    }
    assert len(rows) == 2 * len(tasks)
    # every case of the exercise is a hidden test (skip markers gone), and the reference's answer passes each
    cases = {"py-leap": 6, "rs-grains": 6, "rs-lazy": 3, "js-two-fer": 4, "js-paths": 2}
    for task, count in cases.items():
        solved = rows[("A", task)]
        assert (solved["verdict"], solved["failure_class"]) == ("pass", "accepted"), (task, solved)
        assert (solved["expected_tests"], solved["passed"], solved["failed"]) == (count, count, 0), (task, solved)
        assert json.loads(solved["mechanics_json"] or "[]") == []
    # the valid code tree-sitter cannot parse: a note on the accepted attempt, never edit-mechanics
    for task, file in (("rs-lazy", "src/lib.rs"), ("js-paths", "paths.js")):
        (gap,) = json.loads(rows[("A", task)]["grammar_gaps_json"])
        assert gap["file"] == file, (task, gap)

    # B: the stubs fail their tests, each named (reasoning) ...
    for task in ("rs-grains", "js-two-fer", "js-paths"):
        wrong = rows[("B", task)]
        assert (wrong["verdict"], wrong["failure_class"]) == ("fail", "reasoning"), (task, wrong)
        assert len(json.loads(wrong["failing_tests_json"])) == wrong["failed"] == cases[task], (task, wrong)
    lazy = rows[("B", "rs-lazy")]
    assert (lazy["verdict"], lazy["passed"], sorted(json.loads(lazy["failing_tests_json"]))) == (
        "fail",
        1,
        ["gets_it_twice", "gets_what_the_closure_returns"],
    )
    # ... and an answer that skips every test its grade runs: the runner exits 0 with no test
    # passed, a record that disagrees with its exit (tampering), each skipped test named
    skips = rows[("B", "py-leap")]
    assert (skips["verdict"], skips["failure_class"], skips["passed"]) == ("tampering", "tampering", 0)
    (finding,) = json.loads(skips["tampering_json"])
    assert finding["rule"] == "missing-tests" and finding["snippet"].count("(skipped)") == 6, finding

    report = build_report(ledger, [run_id], resamples=0)
    text = render_report(report, "text")
    assert "grammar gaps: 2 attempts (2 files) that tree-sitter could not parse" in text
    (section,) = report["runs"]
    solved = {a["metrics"]["name"]: a["metrics"]["accepted"] for a in section["arms"]}
    assert solved == {"A": len(tasks), "B": 0}, solved
