"""Tree-sitter edit-mechanics checks: every flag in each of the five languages."""

import pytest

from verifiers.mechanics import check_file, check_workspace

# language extension -> (clean source, broken source with an ERROR node, source with a MISSING node)
SOURCES = {
    ".py": (
        "def add(a, b):\n    total = a + b\n    return total\n" * 12,
        "def add(a, b):\n    total = a + (b\n    return total\n",
        None,
    ),
    ".mjs": (
        "export function add(a, b) {\n  const total = a + b;\n  return total;\n}\n" * 12,
        "export function add(a, b) {\n  const total = a + ;\n  return total;\n}\n",
        "export function add(a, b) {\n  return a + b;\n",
    ),
    ".ts": (
        "export function add(a: number, b: number): number {\n  const total = a + b;\n  return total;\n}\n" * 12,
        "export function add(a: number, b: number): number {\n  const total: = a + b;\n  return total\n}\n",
        "export function add(a: number, b: number): number {\n  return a + b;\n",
    ),
    ".rs": (
        "pub fn add(a: i32, b: i32) -> i32 {\n    let total = a + b;\n    total\n}\n" * 12,
        "pub fn add(a: i32, b: i32) -> i32 {\n    let total = a + ;\n    total\n}\n",
        "pub fn add(a: i32, b: i32) { let total = a + b }\n",
    ),
    ".sh": (
        '#!/bin/bash\nadd() {\n  local total=$(( $1 + $2 ))\n  echo "$total"\n}\n' * 12,
        '#!/bin/bash\nif [ -n "$1" ]; then\n  echo (\nfi\n',
        None,
    ),
}
ESCAPED = {
    ".py": "def add(a, b):\\n    total = a + b\\n    return total\\n",
    ".mjs": "export function add(a, b) {\\n  const total = a + b;\\n  return total;\\n}\\n",
    ".ts": "export function add(a: number, b: number): number {\\n  return a + b;\\n}\\n",
    ".rs": "pub fn add(a: i32, b: i32) -> i32 {\\n    let total = a + b;\\n    total\\n}\\n",
    ".sh": "add() {\\n  echo $1\\n}\\nfor x in 1 2; do\\n  add $x\\ndone\\n",
}
# code in another language than the file's extension says
WRONG_LANGUAGE = {
    ".py": "pub fn add(a: i32, b: i32) -> i32 {\n    let total = a + b;\n    total\n}\n",
    ".mjs": "def add(a, b):\n    total = a + b\n    return total\n",
    ".ts": "def add(a, b):\n    total = a + b\n    return total\n",
    ".rs": "def add(a, b):\n    total = a + b\n    return total\n",
    ".sh": None,  # bash accepts almost any word soup; covered for the other four
}
EXTS = list(SOURCES)


def flags(findings):
    return {f.flag for f in findings}


@pytest.mark.parametrize("ext", EXTS)
def test_clean_edit_has_no_findings(ext):
    clean = SOURCES[ext][0]
    assert check_file("f" + ext, (clean + "\n").encode(), clean.encode()) == []


@pytest.mark.parametrize("ext", EXTS)
def test_syntax_error_reports_line_column_and_context(ext):
    broken = SOURCES[ext][1]
    findings = check_file("f" + ext, broken.encode(), None)
    errors = [f for f in findings if f.flag in ("syntax_error", "missing_node")]
    assert errors, findings
    first = errors[0]
    assert first.line and first.column and first.node_kind
    assert ">" in first.context and first.file == "f" + ext


@pytest.mark.parametrize("ext", [e for e in EXTS if SOURCES[e][2]])
def test_missing_node(ext):
    findings = check_file("f" + ext, SOURCES[ext][2].encode(), None)
    assert "missing_node" in flags(findings) or "syntax_error" in flags(findings)
    if ext in (".rs", ".mjs", ".ts"):
        assert "missing_node" in flags(findings), findings


@pytest.mark.parametrize("ext", EXTS)
def test_escaped_newlines(ext):
    findings = check_file("f" + ext, ESCAPED[ext].encode(), None)
    assert "escaped_newlines" in flags(findings), findings


@pytest.mark.parametrize("ext", EXTS)
def test_emptied(ext):
    findings = check_file("f" + ext, b"", SOURCES[ext][0].encode())
    assert flags(findings) == {"emptied"}


@pytest.mark.parametrize("ext", EXTS)
def test_truncated(ext):
    clean = SOURCES[ext][0]
    findings = check_file("f" + ext, clean[: len(clean) // 5].encode(), clean.encode())
    assert "truncated" in flags(findings), findings


@pytest.mark.parametrize("ext", [e for e in EXTS if WRONG_LANGUAGE[e]])
def test_wrong_language(ext):
    findings = check_file("f" + ext, WRONG_LANGUAGE[ext].encode(), None)
    assert "wrong_language" in flags(findings), findings


def test_file_broken_in_the_fixture_is_not_blamed_on_the_model():
    broken = SOURCES[".py"][1].encode()
    assert check_file("f.py", broken + b"# touched\n", broken) == []


def test_unknown_extension_only_gets_generic_checks():
    assert check_file("notes.txt", b"anything (", None) == []
    assert flags(check_file("notes.txt", b"", b"some text")) == {"emptied"}


def test_check_workspace_only_looks_at_changed_files(tmp_path):
    fixture, final = tmp_path / "fixture", tmp_path / "final"
    for root in (fixture, final):
        root.mkdir()
        (root / "same.py").write_text("def broken(:\n")  # broken but unchanged
    (final / "new.rs").write_text("fn main() { let x = 1 }")
    findings = check_workspace(fixture, final)
    assert {f.file for f in findings} == {"new.rs"}


# -- a truncated file's finding points at the line where the parse breaks (issue 13) ----------
TRUNCATED = [
    ("core/rs-word-wrap/reference/src/lib.rs", 14),
    ("core/rs-semver-precedence/reference/src/lib.rs", 20),
    ("core/js-format-bytes/reference/format.mjs", 14),
    ("core/ts-add-months/reference/dates.ts", 18),
    ("core/ts-render-template/reference/template.ts", 9),
]


@pytest.mark.parametrize("rel, keep", TRUNCATED)
def test_truncated_file_points_where_it_breaks_not_at_the_enclosing_item(rel, keep):
    from tests.conftest import FIXTURES

    before = (FIXTURES / rel).read_bytes()
    lines = before.splitlines(keepends=True)
    assert len(lines) > keep + 3
    after = b"".join(lines[:keep]) + lines[keep][: len(lines[keep]) // 2]  # cut mid-line keep + 1
    syntax = [
        f for f in check_file(rel.rsplit("/", 1)[-1], after, before) if f.flag in ("syntax_error", "missing_node")
    ]
    assert syntax, "the cut file must not parse"
    assert syntax[0].line == keep + 1, (syntax[0], syntax[0].context)
    assert f"{keep + 1:>5}>" in syntax[0].context


def test_truncated_new_file_points_at_its_last_line():
    source = b"pub fn wrap(text: &str) -> Vec<String> {\n    let mut out = Vec::new();\n    for w in text.split(' ') {\n        out.push(w.to_string());\n"
    (finding,) = [f for f in check_file("src/lib.rs", source, None) if f.flag == "syntax_error"]
    assert finding.line == 4


def test_broken_edit_inside_a_function_points_at_the_edit():
    before = (
        b"pub fn add(a: i32, b: i32) -> i32 {\n    let total = a + b;\n    let twice = total * 2;\n    twice - total\n}\n"
        * 3
    )
    after = before.replace(b"let twice = total * 2;", b"let twice = (total * 2;", 1)
    syntax = [f for f in check_file("src/lib.rs", after, before) if f.flag in ("syntax_error", "missing_node")]
    assert syntax and syntax[0].line == 3


def test_cut_short_says_so():
    from tests.conftest import FIXTURES

    before = (FIXTURES / "core/rs-word-wrap/reference/src/lib.rs").read_bytes()
    after = b"".join(before.splitlines(keepends=True)[:14])
    (finding,) = [f for f in check_file("lib.rs", after, before) if f.flag == "syntax_error"]
    assert finding.line == 14 and "the file breaks off here" in finding.message


@pytest.mark.parametrize("ext", EXTS)
def test_the_incremental_clean_verdict_agrees_with_a_full_parse(ext):
    # Issue 15: a changed file is re-parsed from the fixture's tree; that shortcut may only
    # ever say "clean" when a whole parse would, on any edit (here: 300 random ones).
    import random

    from verifiers.mechanics import grammar_for, parses_clean, parses_clean_edited

    grammar = grammar_for("f" + ext)
    before = SOURCES[ext][0].encode()
    rng = random.Random(ext)
    pieces = [b"(", b")", b"{", b"}", b";", b":", b"=", b"\n", b" ", b"x", b"1", b'"', b"'", b"$", b"return "]
    agreed = {True: 0, False: 0}
    for _ in range(300):
        start = rng.randrange(len(before))
        end = min(len(before), start + rng.choice([0, 0, 1, 3, 12]))
        insert = b"".join(rng.choice(pieces) for _ in range(rng.choice([0, 1, 2, 5])))
        after = before[:start] + insert + before[end:]
        clean = parses_clean(after, grammar)
        assert parses_clean_edited(before, after, grammar) == clean, (start, end, insert)
        agreed[clean] += 1
    assert agreed[True] and agreed[False]  # the edits hit both outcomes
