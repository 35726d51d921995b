"""Tree-sitter edit-mechanics checks: every flag in each of the five languages."""
import pytest

from verifiers.mechanics import check_file, check_workspace

# language extension -> (clean source, broken source with an ERROR node, source with a MISSING node)
SOURCES = {
    ".py": ("def add(a, b):\n    total = a + b\n    return total\n" * 12,
            "def add(a, b):\n    total = a + (b\n    return total\n",
            None),
    ".mjs": ("export function add(a, b) {\n  const total = a + b;\n  return total;\n}\n" * 12,
             "export function add(a, b) {\n  const total = a + ;\n  return total;\n}\n",
             "export function add(a, b) {\n  return a + b;\n"),
    ".ts": ("export function add(a: number, b: number): number {\n  const total = a + b;\n  return total;\n}\n" * 12,
            "export function add(a: number, b: number): number {\n  const total: = a + b;\n  return total\n}\n",
            "export function add(a: number, b: number): number {\n  return a + b;\n"),
    ".rs": ("pub fn add(a: i32, b: i32) -> i32 {\n    let total = a + b;\n    total\n}\n" * 12,
            "pub fn add(a: i32, b: i32) -> i32 {\n    let total = a + ;\n    total\n}\n",
            "pub fn add(a: i32, b: i32) { let total = a + b }\n"),
    ".sh": ("#!/bin/bash\nadd() {\n  local total=$(( $1 + $2 ))\n  echo \"$total\"\n}\n" * 12,
            "#!/bin/bash\nif [ -n \"$1\" ]; then\n  echo (\nfi\n",
            None),
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
