"""Grammar gaps (verifiers/grammar_gaps.py): a tree-sitter parse error in a file the language's
own toolchain built and tested is a note, not edit-mechanics; a file the toolchain rejected, or
that the tests never reached, stays mechanics."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.verifier_tasks import LAZY_DYN, write
from verifiers.grading import GradeResult
from verifiers.grammar_gaps import gap_note, reached, split_findings
from verifiers.mechanics import check_file, check_workspace

# Code each language's toolchain takes and its tree-sitter grammar (the wheels in the venv) does not.
GAPS = {
    # tree-sitter-rust: a lifetime bound before the trait in a trait object
    "rust": ("src/lib.rs", LAZY_DYN),
    # tree-sitter-python: old Mac line endings between two statements (a lone CR ends a line for
    # Python's tokenizer)
    "python": ("mod.py", "ONE = 1\rTWO = 2\rdef add(a, b):\r    return a + b\r"),
    # tree-sitter-javascript: a tagged template may hold escapes a plain one may not (`\u` + non-hex)
    "javascript": ("paths.js", "exports.home = String.raw`C:\\users\\me`;\n"),
    # tree-sitter-typescript: variance annotations on a type parameter (TypeScript 4.7)
    "typescript": (
        "box.ts",
        "export type Box<in out T> = { value: T };\nexport const one: Box<number> = { value: 1 };\n",
    ),
    # tree-sitter-bash: an escaped `<` (string comparison) inside `[ ]`
    "bash": ("before.sh", 'a=$1\nb=$2\nif [ "$a" \\< "$b" ]; then echo yes; else echo no; fi\n'),
}
TOOLCHAIN = {
    "rust": [
        "rustc",
        "--edition",
        "2021",
        "--crate-type",
        "lib",
        "--emit",
        "metadata",
        "-o",
        "{out}/lib.rmeta",
        "{file}",
    ],
    "python": [sys.executable, "-c", "import sys; sys.path.insert(0, '{dir}'); import mod; assert mod.add(2, 3) == 5"],
    "javascript": ["node", "-e", "require('{file}')"],
    "typescript": ["tsx", "{file}"],
    "bash": ["bash", "{file}", "a", "b"],
}


def grade(verdict: str = "pass", tests: dict[str, str] | None = None, output: str = "1 passed") -> GradeResult:
    ran = {"t::one": "passed"} if tests is None else tests
    passed = sum(o == "passed" for o in ran.values())
    return GradeResult(verdict, 0 if verdict == "pass" else 1, 10, passed, len(ran) - passed, output, {}, tests=ran)


@pytest.mark.parametrize("language", sorted(GAPS))
def test_each_gap_is_rejected_by_its_grammar_and_accepted_by_its_toolchain(language, tmp_path):
    name, source = GAPS[language]
    findings = check_file(name, source.encode(), None)
    assert {f.flag for f in findings} & {"syntax_error", "missing_node"}, findings
    command = TOOLCHAIN[language]
    if shutil.which(command[0]) is None:
        pytest.skip(f"{command[0]} is not installed")
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, newline="")
    args = [a.format(file=path, dir=path.parent, out=tmp_path) for a in command]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def _workspace(root: Path, files: dict[str, str]) -> tuple[Path, Path]:
    """(fixture, final): an empty fixture, so every file of `files` is new."""
    fixture, final = root / "fixture", root / "final"
    fixture.mkdir()
    write(final, files)
    for rel, text in files.items():  # keep the CRs and tabs write()'s dedent would not touch anyway
        (final / rel).write_text(text, newline="")
    return fixture, final


def _split(tmp_path: Path, files: dict[str, str], hidden: dict[str, str], g: GradeResult):
    fixture, final = _workspace(tmp_path, files)
    write(tmp_path / "hidden", hidden)
    return split_findings(check_workspace(fixture, final), g, final, tmp_path / "hidden")


def test_a_crate_root_the_tests_built_is_a_gap_and_its_note_says_whose_word_counts(tmp_path):
    split = _split(tmp_path, {"src/lib.rs": LAZY_DYN}, {"tests/hidden.rs": "use lazy::Lazy;\n"}, grade())
    assert not split.mechanics and [f.file for f in split.gaps] == ["src/lib.rs"]
    note = gap_note(split.gaps[0], 1)
    assert note.startswith("grammar gap: src/lib.rs:2:16: syntax_error") and "rustc accepted it; 1 test ran" in note


@pytest.mark.parametrize(
    "why,g",
    [
        ("no test ran: the build failed", grade("fail", tests={}, output="error[E0412]: cannot find type")),
        ("the sandbox could not run", grade("error", tests={})),
        ("only skips were recorded", grade("fail", tests={"t::one": "skipped"})),
        ("a timeout judges nothing", grade("timeout", tests={"t::one": "passed"})),
        ("rustc named the file", grade("fail", output="error: expected one of\n --> src/lib.rs:2:16\n")),
    ],
)
def test_without_the_toolchains_word_the_finding_stays_mechanics(why, g, tmp_path):
    split = _split(tmp_path, {"src/lib.rs": LAZY_DYN}, {"tests/hidden.rs": "use lazy::Lazy;\n"}, g)
    assert [f.file for f in split.mechanics] == ["src/lib.rs"] and not split.gaps, why


def test_a_failing_test_is_the_toolchains_word_too(tmp_path):
    g = grade("fail", tests={"t::one": "failed"}, output="assertion failed")
    split = _split(tmp_path, {"src/lib.rs": LAZY_DYN}, {"tests/hidden.rs": "use lazy::Lazy;\n"}, g)
    assert not split.mechanics and len(split.gaps) == 1


def test_a_rust_module_counts_only_when_a_reached_file_declares_it(tmp_path):
    files = {
        "src/lib.rs": "pub mod lazy;\n",
        "src/lazy.rs": LAZY_DYN,
        "src/unused.rs": LAZY_DYN,  # no `mod unused;`: cargo never compiled it
    }
    split = _split(tmp_path, files, {"tests/hidden.rs": "use lazy::lazy::Lazy;\n"}, grade())
    assert [f.file for f in split.gaps] == ["src/lazy.rs"]
    assert [f.file for f in split.mechanics] == ["src/unused.rs"]


def test_a_python_module_counts_when_the_tests_import_it_through_another(tmp_path):
    files = {
        "api.py": "from core import add\n",
        "core.py": GAPS["python"][1],
        "helper.py": GAPS["python"][1],  # imported by nothing: the tests never reached it
    }
    split = _split(tmp_path, files, {"test_hidden.py": "import api\n\ndef test_add():\n    pass\n"}, grade())
    assert [f.file for f in split.gaps] == ["core.py"]
    assert [f.file for f in split.mechanics] == ["helper.py"]


def test_a_syntax_error_naming_the_file_in_the_output_keeps_it_mechanics(tmp_path):
    output = 'E     File "/work/mod.py", line 1\nE   SyntaxError: invalid syntax\n1 passed, 1 error'
    files = {"mod.py": GAPS["python"][1]}
    split = _split(tmp_path, files, {"test_hidden.py": "import mod\n"}, grade("fail", output=output))
    assert [f.file for f in split.mechanics] == ["mod.py"] and not split.gaps


def test_js_ts_and_shell_files_are_reached_by_import_require_and_name(tmp_path):
    files = {
        "paths.js": GAPS["javascript"][1],
        "box.ts": GAPS["typescript"][1],
        "before.sh": GAPS["bash"][1],
    }
    hidden = {
        "hidden.test.cjs": "const { home } = require('./paths.js');\n",
        "box.test.ts": "import { one } from './box';\nimport { execFileSync } from 'node:child_process';\n"
        "execFileSync('bash', ['before.sh', 'a', 'b']);\n",
    }
    split = _split(tmp_path, files, hidden, grade())
    assert sorted(f.file for f in split.gaps) == ["before.sh", "box.ts", "paths.js"] and not split.mechanics


def test_findings_that_are_not_the_grammars_verdict_stay_mechanics(tmp_path):
    """A truncated file is an editing failure whatever the toolchain said of what is left."""
    before = "def add(a, b):\n    return a + b\n" * 10
    write(tmp_path / "fixture", {"mod.py": before})
    write(tmp_path / "final", {"mod.py": "def add(a, b):\n    return (\n"})
    write(tmp_path / "hidden", {"test_hidden.py": "import mod\n"})
    findings = check_workspace(tmp_path / "fixture", tmp_path / "final")
    split = split_findings(findings, grade(), tmp_path / "final", tmp_path / "hidden")
    assert {f.flag for f in split.mechanics} == {"truncated"}
    assert {f.flag for f in split.gaps} <= {"syntax_error", "missing_node"}


def test_reached_starts_at_crate_roots_and_hidden_files_only(tmp_path):
    write(tmp_path / "w", {"src/main.rs": "mod cli;\n", "src/cli.rs": "", "src/orphan.rs": "", "tool.py": ""})
    assert reached(tmp_path / "w", None) == {"src/main.rs", "src/cli.rs"}
