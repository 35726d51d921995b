"""The Exercism / polyglot importer: the tasks it writes, what it skips and why, the test-file
edits, and the real gate on the imported Python, Rust and JavaScript tasks."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from tests.support import exercism_tree as tree
from verifiers.exercism import (
    NOTES_FILE,
    UNSUPPORTED,
    ExercismError,
    exercism_slug,
    import_exercism,
    import_polyglot,
)
from verifiers.exercism_tests import TestFileError, js_rebase_imports, js_unsupported, split_tests
from verifiers.gate import gate_suites
from verifiers.import_dest import DestinationError
from verifiers.tasks import load_suite, load_task, relative_files


@pytest.fixture(scope="module")
def polyglot(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A polyglot checkout of our own exercises, imported: (DEST, id -> skip reason or "")."""
    root = tmp_path_factory.mktemp("poly")
    dest = root / "out"
    outcomes = import_polyglot(tree.polyglot_tree(root / "src"), dest)
    return dest, {o.id: o.reason for o in outcomes}


def py_test_names(source: str) -> list[str]:
    return [n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]


def test_polyglot_writes_one_suite_per_language_and_lists_every_exercise(polyglot):
    dest, outcomes = polyglot
    assert {i for i, why in outcomes.items() if not why} == {"py-leap", "rs-grains", "js-two-fer", "go-hello-world"}
    assert sorted(p.name for p in dest.iterdir()) == sorted(
        [NOTES_FILE, "go", "javascript", "python", "rust"]
    )  # no java/
    for lang, task_id in (
        ("python", "py-leap"),
        ("rust", "rs-grains"),
        ("javascript", "js-two-fer"),
        ("go", "go-hello-world"),
    ):
        suite = load_suite(dest / lang)
        assert not suite.problems
        assert [t.id for t in suite.tasks] == [task_id]
    notes = json.loads((dest / NOTES_FILE).read_text())
    suite_of = {"go": "go", "js": "javascript", "py": "python", "rs": "rust", "java": "java"}
    assert set(notes) == {f"{suite_of[i.split('-')[0]]}/{i}" for i in outcomes}
    assert notes["java/java-hello-world"] == {
        "exercise": notes["java/java-hello-world"]["exercise"],
        "status": "skipped",
        "reason": UNSUPPORTED,
    }
    assert notes["python/py-leap"]["status"] == "imported" and notes["python/py-leap"]["reason"] == ""


def test_what_cannot_run_offline_or_be_read_is_skipped_with_its_reason(polyglot):
    _, outcomes = polyglot
    assert outcomes["java-hello-world"] == "language not supported yet"
    assert outcomes["go-uuid-gen"] == (
        "needs the Go module 'github.com/google/uuid' (the example solution for uuid_gen.go imports it), "
        "not downloaded offline"
    )
    assert outcomes["rs-dice"] == "needs crate rand from crates.io (offline)"
    assert outcomes["py-matrix-sum"].startswith("needs the Python package 'numpy' (matrix_sum_test.py imports it)")
    assert outcomes["js-chunky"].startswith("needs the npm package 'lodash' (the example solution for chunky.js")
    assert outcomes["py-broken"].startswith("malformed .meta/config.json (")


def test_python_task(polyglot):
    dest, _ = polyglot
    task = load_task(dest / "python" / "py-leap")
    assert (task.language, task.kind) == ("python", "exercism")
    assert task.visible_cmd == "python -m pytest -q -p no:cacheprovider test_visible.py"
    assert task.hidden_cmd == "python -m pytest -q -p no:cacheprovider leap_test.py"
    assert task.trap == "the whole Exercism test file: 6 cases, 2 of them visible"
    intro, instructions, append = (task.prompt.index(s) for s in ("A story", "Solve leap", "Mind the edge"))
    assert intro < instructions < append < task.prompt.index("`leap.py`") < task.prompt.index("`test_visible.py`")
    assert relative_files(task.workspace) == ["leap.py", "test_visible.py"]
    assert relative_files(task.hidden) == ["leap_test.py"]
    assert (task.reference / "leap.py").read_text().startswith("def leap_year(year):\n    return year % 4")
    hidden = (task.hidden / "leap_test.py").read_text()
    assert len(py_test_names(hidden)) == 6
    assert "skip" not in hidden and "import pytest" in hidden  # the markers go, the file's imports stay
    visible = (task.workspace / "test_visible.py").read_text()
    assert py_test_names(visible) == py_test_names(hidden)[:2]


def test_rust_task_has_every_case_in_the_hidden_test_and_no_ignore(polyglot):
    dest, _ = polyglot
    task = load_task(dest / "rust" / "rs-grains")
    assert task.language == "rust"
    assert (task.visible_cmd, task.hidden_cmd) == (
        "cargo test --offline -q --test visible",
        "cargo test --offline -q --test hidden",
    )
    assert relative_files(task.workspace) == ["Cargo.toml", "src/lib.rs", "tests/visible.rs"]
    assert relative_files(task.hidden) == ["tests/hidden.rs"]
    assert relative_files(task.reference) == ["src/lib.rs"]
    hidden = (task.hidden / "tests" / "hidden.rs").read_text()
    assert hidden.count("#[test]") == 6 and "ignore" not in hidden
    assert '#[should_panic(expected = "Square must be between 1 and 64")]' in hidden
    visible = (task.workspace / "tests" / "visible.rs").read_text()
    assert re.findall(r"fn (\w+)", visible) == ["grains_on_square_1", "grains_on_square_2"]


def test_javascript_task_enables_every_skipped_case_and_keeps_strings(polyglot):
    dest, _ = polyglot
    task = load_task(dest / "javascript" / "js-two-fer")
    assert (task.visible_cmd, task.hidden_cmd) == ("jest visible.spec.js", "jest two-fer.spec.js")
    # package.json sets no "type", babel and eslint are npm's: none of it is copied
    assert relative_files(task.workspace) == ["greeting.js", "two-fer.js", "visible.spec.js"]
    hidden = (task.hidden / "two-fer.spec.js").read_text()
    assert not re.search(r"^\s*x(test|it)\(|\.skip\(", hidden, re.M)
    assert len(re.findall(r"^\s*(test|it)\(", hidden, re.M)) == 4
    assert "expect(twoFer('xtest(')).toEqual" in hidden
    visible = (task.workspace / "visible.spec.js").read_text()
    assert "no name given" in visible and "a name given" not in visible and "another name" not in visible
    assert (task.reference / "two-fer.js").read_text().startswith("import { me } from './greeting';\n")


def test_the_imported_python_rust_javascript_and_go_tasks_gate_cleanly(polyglot):
    dest, _ = polyglot
    results, problems = gate_suites([dest], jobs=2)
    assert not problems
    assert {g.task.id: (g.ok, g.skipped) for g in results} == {
        "py-leap": (True, None),
        "rs-grains": (True, None),
        "js-two-fer": (True, None),
        "go-hello-world": (True, None),
    }, [(g.task.id, c.name, c.detail) for g in results for c in g.failed()]


def test_a_go_exercise_is_shown_whole_and_put_back_as_shipped(polyglot):
    dest, _ = polyglot
    task = load_task(dest / "go" / "go-hello-world")
    shipped = (task.hidden / "hello_world_test.go").read_text()
    assert (task.workspace / "hello_world_test.go").read_text() == shipped and "func TestHelloWorld" in shipped
    assert (task.visible_cmd, task.hidden_cmd) == ("go test ./...", "go test ./...")
    assert (task.workspace / "go.mod").is_file() and 'return "Hello, World!"' in (
        task.reference / "hello_world.go"
    ).read_text()
    assert "`hello_world_test.go` holds every test (1); they run as shipped" in task.prompt


def test_a_package_json_that_sets_type_is_kept(tmp_path):
    track = tmp_path / "javascript"
    folder = tree.javascript_two_fer(track)
    (folder / "package.json").write_text('{"name": "two-fer", "type": "module"}\n')
    import_exercism(track, tmp_path / "out")
    task = load_task(tmp_path / "out" / "js-two-fer")
    assert (task.workspace / "package.json").read_text() == '{"name": "two-fer", "type": "module"}\n'


def test_a_track_language_comes_from_config_json_else_the_test_files(tmp_path):
    named = tmp_path / "named"
    tree.python_leap(named)
    (named / "config.json").write_text(json.dumps({"language": "Python", "slug": "python"}))
    assert exercism_slug(named) == "python"
    unnamed = tmp_path / "unnamed"
    tree.rust_grains(unnamed)
    assert exercism_slug(unnamed) == "rust"
    go = tmp_path / "go"
    tree.go_hello(go)
    assert exercism_slug(go) == "go"
    java = tmp_path / "java"
    tree.java_hello(java)
    assert exercism_slug(java) == "java"
    outcomes = import_exercism(java, tmp_path / "java-out")
    assert [(o.id, o.reason) for o in outcomes] == [("java-hello-world", UNSUPPORTED)]
    assert [p.name for p in (tmp_path / "java-out").iterdir()] == [NOTES_FILE]


def test_a_source_not_in_the_layout_or_a_dest_in_use_is_refused(tmp_path):
    track = tmp_path / "track"
    tree.python_leap(track)
    with pytest.raises(ExercismError, match="no such folder"):
        import_exercism(tmp_path / "missing", tmp_path / "out")
    with pytest.raises(ExercismError, match="use `quotabench import exercism`"):
        import_polyglot(track, tmp_path / "out")
    with pytest.raises(ExercismError, match="use `quotabench import polyglot`"):
        import_exercism(tmp_path, tmp_path / "out")
    used = tmp_path / "used"
    used.mkdir()
    (used / "keep.txt").write_text("mine")
    with pytest.raises(DestinationError, match="already holds files .* or --force"):
        import_exercism(track, used)
    import_exercism(track, used, force=True)
    assert (used / "keep.txt").read_text() == "mine" and (used / "py-leap" / "task.toml").is_file()


def test_a_forced_reimport_removes_a_task_that_no_longer_imports(tmp_path):
    track = tmp_path / "track"
    folder = tree.python_leap(track)
    import_exercism(track, tmp_path / "out")
    (folder / ".meta" / "config.json").write_text("{not json")
    (outcome,) = import_exercism(track, tmp_path / "out", force=True)
    assert outcome.reason.startswith("malformed .meta/config.json")
    assert not (tmp_path / "out" / "py-leap").exists()


@pytest.mark.parametrize(
    ("config", "reason"),
    [
        ({"files": {"solution": ["leap.py"], "test": ["leap_test.py"]}}, '"files.example" is not a list'),
        ({"files": {"solution": ["../x.py"], "test": ["leap_test.py"], "example": [".meta/example.py"]}}, "outside"),
        ({"files": {"solution": ["nope.py"], "test": ["leap_test.py"], "example": [".meta/example.py"]}}, "not in the"),
        (["files"], 'no "files" table'),
    ],
)
def test_a_malformed_config_skips_that_exercise_and_says_why(tmp_path, config, reason):
    track = tmp_path / "track"
    tree.python_leap(track)
    bad = tree.python_leap(tmp_path / "other")
    (bad / ".meta" / "config.json").write_text(json.dumps(config))
    bad.rename(track / "exercises" / "practice" / "leap-bad")
    outcomes = {o.id: o.reason for o in import_exercism(track, tmp_path / "out")}
    assert outcomes["py-leap"] == ""
    assert reason in outcomes["py-leap-bad"]


def test_a_rust_solution_list_with_cargo_toml_pairs_the_example_with_src_lib(tmp_path):
    track = tmp_path / "track"
    folder = tree.rust_grains(track)
    config = json.loads((folder / ".meta" / "config.json").read_text())
    config["files"]["solution"] = ["src/lib.rs", "Cargo.toml"]
    (folder / ".meta" / "config.json").write_text(json.dumps(config))
    import_exercism(track, tmp_path / "out")
    task = load_task(tmp_path / "out" / "rs-grains")
    assert relative_files(task.reference) == ["src/lib.rs"]  # Cargo.toml stays the workspace's
    assert (task.workspace / "Cargo.toml").read_text().startswith("[package]")


def test_a_rust_example_with_its_own_manifest(tmp_path):
    track = tmp_path / "track"
    folder = tree.rust_grains(track)
    manifest = (folder / "Cargo.toml").read_text()
    (folder / ".meta" / "Cargo-example.toml").write_text(manifest.replace('version = "1.2.0"', 'version = "1.3.0"'))
    import_exercism(track, tmp_path / "out")
    task = load_task(tmp_path / "out" / "rs-grains")
    assert 'version = "1.3.0"' in (task.reference / "Cargo.toml").read_text()
    (folder / ".meta" / "Cargo-example.toml").write_text(manifest + 'itertools = "0.12"\n')
    (outcome,) = import_exercism(track, tmp_path / "out", force=True)
    assert outcome.reason == "the example solution needs crate itertools from crates.io (offline)"


def test_a_second_test_file_without_cases_is_a_helper_in_workspace_and_hidden(tmp_path):
    track = tmp_path / "track"
    folder = tree.python_leap(track)
    (folder / "test_utils.py").write_text("YEARS = (1996, 2000)\n")
    test = folder / "leap_test.py"
    test.write_text("from test_utils import YEARS\n" + test.read_text())
    config = json.loads((folder / ".meta" / "config.json").read_text())
    config["files"]["test"] = ["leap_test.py", "test_utils.py"]
    (folder / ".meta" / "config.json").write_text(json.dumps(config))
    (outcome,) = import_exercism(track, tmp_path / "out")
    assert outcome.reason == ""
    task = load_task(tmp_path / "out" / "py-leap")
    assert "test_utils.py" in relative_files(task.workspace) and "test_utils.py" in relative_files(task.hidden)


# --- the test-file edits ------------------------------------------------------------------------


def test_python_visible_drops_a_class_left_without_tests_and_module_functions():
    source = (
        "import unittest\n\n\ndef test_one():\n    assert True\n\n\ndef test_two():\n    assert True\n\n\n"
        "class LaterTest(unittest.TestCase):\n    def test_three(self):\n        pass\n\n    def test_four(self):\n"
        "        pass\n\n\ndef test_five():\n    assert True\n\n\ndef test_six():\n    assert True\n"
    )
    split = split_tests(source, "python")
    assert (split.cases, split.visible_cases) == (6, 2)
    assert (
        split.visible == "import unittest\n\n\ndef test_one():\n    assert True\n\n\ndef test_two():\n    assert True\n"
    )
    assert split.hidden == source


def test_rust_cases_in_modules_and_ignore_with_a_reason():
    source = (
        "mod parse {\n    use calc::*;\n\n    #[test]\n    fn a() {\n        assert!(ok());\n    }\n\n"
        '    #[test]\n    #[ignore = "later"]\n    fn b() {\n        assert!(ok());\n    }\n}\n\n'
        "#[test]\n#[ignore]\n/// a doc comment between the attributes and the function\nfn c() {\n"
        '    let s = "#[ignore]";\n    assert!(!s.is_empty());\n}\n'
    )
    split = split_tests(source, "rust")
    assert (split.cases, split.visible_cases, split.unskipped) == (3, 1, 2)
    assert split.hidden.count("#[ignore") == 1  # the one in the string
    assert "fn b" not in split.visible and "fn c" not in split.visible and "fn a" in split.visible
    assert "doc comment" not in split.visible  # left alone, it would document nothing: rustc refuses that


def test_js_skipped_groups_and_jest_globals_imports():
    source = (
        "import { describe, expect, test } from '@jest/globals';\nimport { f } from './f';\n\n"
        "describe.skip('g', () => {\n  it.skip('a', () => {\n    expect(f()).toBe(1);\n  });\n});\n\n"
        "xdescribe('h', () => {\n  xtest('b', () => {\n    expect(f()).toBe(1);\n  });\n\n"
        "  test.skip('c', () => {\n    expect(f()).toBe(1);\n  });\n});\n"
    )
    split = split_tests(source, "javascript")
    assert (split.cases, split.visible_cases, split.unskipped) == (3, 1, 5)
    assert (
        "@jest/globals" not in split.hidden
        and "skip" not in split.hidden
        and "x" not in split.hidden.replace("expect", "")
    )
    assert split.visible == (
        "import { f } from './f';\n\ndescribe('g', () => {\n  it('a', () => {\n    expect(f()).toBe(1);\n  });\n});\n"
    )


def test_js_require_of_jest_globals_is_dropped():
    source = (
        "const { test, expect } = require('@jest/globals');\nconst { f } = require('./f');\n\n"
        "test('a', () => {\n  expect(f()).toBe(1);\n});\n"
    )
    split = split_tests(source, "javascript")
    assert split.hidden.startswith("const { f } = require('./f');\n")


def test_an_example_kept_in_meta_imports_the_helpers_from_the_stubs_place():
    source = "import { Person } from '../person';\nconst lens = require('../lens');\nimport _ from 'lodash';\n"
    moved = js_rebase_imports(source, "javascript", ".meta", "")
    assert moved == "import { Person } from './person';\nconst lens = require('./lens');\nimport _ from 'lodash';\n"


def test_typescript_spec_splits():
    source = "import { f } from './f'\n\ndescribe('f', () => {\n  it('a', () => {\n    expect(f(1 as number)).toBe(1)\n  })\n})\n"
    assert split_tests(source, "typescript").cases == 1


def test_what_the_jest_layer_lacks_is_named():
    assert "jest.fn" in js_unsupported("const spy = jest.fn();\n", "javascript")
    assert "test.each" in js_unsupported("test.each([[1]])('x %i', (n) => {});\n", "javascript")
    assert js_unsupported("test('x', () => {});\n", "javascript") == ""


def test_a_file_with_no_case_is_refused():
    with pytest.raises(TestFileError, match="no test case"):
        split_tests("def helper():\n    pass\n", "python")
    with pytest.raises(TestFileError, match="does not parse"):
        split_tests("def test_x(:\n", "python")
