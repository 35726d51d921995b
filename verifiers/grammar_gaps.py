"""Grammar gaps: a tree-sitter parse error in a file the language's own toolchain accepted.

Tree-sitter grammars lag their languages (tree-sitter-rust rejects `Box<dyn 'a + Fn()>`, which
rustc builds). The toolchain, not a grammar, judges syntax: a syntax finding of
verifiers/mechanics.py (`syntax_error` or `missing_node`) is a *grammar gap* when the hidden
run shows the toolchain read the file and took it:

1. the tests ran as tests: the verdict is pass or fail and the runner's per-test records have a
   test passed or failed (with none, the build or the import failed, or nothing was collected:
   the mutation outcome `unviable`, verifiers/mutants/outcome.py; skips alone judge nothing);
2. the run reached the file: a crate root (src/lib.rs, src/main.rs, src/bin/*.rs, build.rs) or a
   hidden test file, or a file named from one it reached — a Python import, a JS/TS import or
   require, a Rust `mod` declaration, a shell script's file name — followed through the
   workspace (by module name: a file the tests never imported, an unused helper, stays
   mechanics); go builds packages, so a hidden test reaches every file of its folder, and an
   import reaches the folder it names; a JUnit run compiles every file under src/main/java; a
   C++ `#include "x.h"` reaches x.h and the x.cpp beside it (the command compiles both);
3. the output names the file beside no toolchain rejection (a SyntaxError, rustc's `error:`,
   bash's `syntax error`, go's `file.go:line:col:`, javac's `File.java:line: error:`, g++'s
   `file:line:col: error:`): Python, Node, rustc and go compile a whole
   module, crate or package before any of it runs, so a test that ran past an import is the
   compiler's word on that file.

Anything else stays an edit-mechanics finding: when unsure, the grammar's word stands. Emptied,
truncated, escaped-newline and wrong-language findings are not grammar verdicts and always stay.
A gap is a note on the attempt (the grades row's `grammar_gaps_json`) and on the gate's
`reference_parses` check, never a failure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from verifiers.mechanics import Finding, grammar_for
from verifiers.tasks import iter_files

if TYPE_CHECKING:
    from verifiers.grading import GradeResult

SYNTAX_FLAGS = ("syntax_error", "missing_node")
MAX_READ = 200_000  # characters of a file read for the names it reaches
TOOLCHAINS = {
    "python": "python",
    "javascript": "node",
    "typescript": "tsx",
    "tsx": "tsx",
    "rust": "rustc",
    "bash": "bash",
    "go": "go",
    "java": "javac",
    "cpp": "g++",
}
_CRATE_ROOTS = re.compile(r"^(?:src/(?:lib|main)\.rs|src/bin/[^/]+\.rs|build\.rs)$")
_REJECTED = {
    "python": re.compile(r"\b(?:SyntaxError|IndentationError|TabError)\b"),
    "javascript": re.compile(r"\bSyntaxError\b|Transform failed"),
    "typescript": re.compile(r"\bSyntaxError\b|Transform failed"),
    "tsx": re.compile(r"\bSyntaxError\b|Transform failed"),
    "rust": re.compile(r"^error(?:\[E\d+\])?:", re.MULTILINE),
    "bash": re.compile(r"syntax error"),
    "go": re.compile(r"\.go:\d+:\d+: "),  # any compile error of go's names its file:line:column
    "java": re.compile(r"\.java:\d+: error: "),
    "cpp": re.compile(r":\d+:\d+: (?:fatal )?error: "),
}
_PY_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+([.\w]+)[ \t]+import[ \t]+([^\n#;]+)|import[ \t]+([^\n#;]+))", re.MULTILINE
)
_JS_IMPORT = re.compile(r"""(?:\bfrom|\brequire\s*\(|\bimport\s*\(|\bimport)\s*['"]([^'"]+)['"]""")
_RUST_MOD = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", re.MULTILINE)
_SCRIPT_NAME = re.compile(r"[\w.-]+\.(?:sh|bash)\b")
_GO_IMPORTS = re.compile(r"^\s*import\s*(?:\(([^)]*)\)|([^\n]*))", re.MULTILINE)
_GO_PATH = re.compile(r'"([^"]+)"')
_CPP_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


@dataclass(frozen=True)
class Split:
    """An attempt's findings, parted: edit-mechanics, and grammar gaps (notes only)."""

    mechanics: tuple[Finding, ...] = ()
    gaps: tuple[Finding, ...] = ()


def module_name(rel: str) -> str:
    """The name other files reach `rel` by: a module's stem, a package's or folder's name for
    its `__init__.py`, `mod.rs` or `index.*`, a shell script's file name."""
    path = Path(rel)
    if grammar_for(rel) == "bash":
        return path.name
    if grammar_for(rel) == "go":  # go reaches packages: a file by its folder's name
        return path.parent.name
    if path.stem in ("__init__", "mod", "index") and path.parent.name:
        return path.parent.name
    return path.stem


def _names(text: str, grammar: str | None) -> set[str]:
    """The module names one file reaches."""
    names = set(_SCRIPT_NAME.findall(text))  # any language's file may run a script by its name
    if grammar == "python":
        for source, imported, plain in _PY_IMPORT.findall(text):
            names.update(w for w in re.split(r"[\s,.()]+", f"{source} {imported} {plain}") if w and w != "as")
    elif grammar in ("javascript", "typescript", "tsx"):
        names.update(Path(spec).stem for spec in _JS_IMPORT.findall(text))
    elif grammar == "rust":
        names.update(_RUST_MOD.findall(text))
    elif grammar == "go":
        for block, line in _GO_IMPORTS.findall(text):
            names.update(spec.rsplit("/", 1)[-1] for spec in _GO_PATH.findall(block or line))
    elif grammar == "cpp":  # a header by its stem, and so the source file of that stem beside it
        names.update(Path(spec).stem for spec in _CPP_INCLUDE.findall(text))
    return names


def reached(workspace: Path, hidden: Path | None) -> set[str]:
    """Workspace files (relative paths) the hidden run reached: crate roots and the hidden test
    files, then whatever those name, to a fixed point."""
    texts = {str(p.relative_to(workspace)): p for p in iter_files(workspace) if grammar_for(p) and not p.is_symlink()}
    frontier = [p for p in iter_files(hidden) if not p.is_symlink()] if hidden is not None else []
    seen = {rel for rel in texts if _CRATE_ROOTS.match(rel)}
    if hidden is not None:  # go builds a hidden test's whole package: its folder's other files
        folders = {str(p.relative_to(hidden).parent) for p in iter_files(hidden) if p.name.endswith("_test.go")}
        seen |= {r for r in texts if r.endswith(".go") and str(Path(r).parent) in folders}
        if any(p.suffix == ".java" for p in iter_files(hidden)):  # a JUnit run compiles all of main
            seen |= {r for r in texts if r.startswith("src/main/java/") and r.endswith(".java")}
    frontier += [texts[rel] for rel in seen]
    names: set[str] = set()
    while frontier:
        for path in frontier:
            with path.open(encoding="utf-8", errors="replace") as f:  # never read through a link (above)
                names |= _names(f.read(MAX_READ), grammar_for(path))
        new = {rel for rel in texts if rel not in seen and module_name(rel) in names}
        seen |= new
        frontier = [texts[rel] for rel in new]
    return seen


def accepted_by_toolchain(rel: str, grade: GradeResult, reached_files: set[str]) -> bool:
    """Whether the hidden run shows `rel`'s toolchain read it and took it (rules 1-3 above)."""
    if grade.verdict not in ("pass", "fail") or not ran_as_tests(grade) or rel not in reached_files:
        return False
    grammar = grammar_for(rel)
    rejected = _REJECTED.get(grammar or "")
    return rejected is None or Path(rel).name not in grade.output or not rejected.search(grade.output)


def ran_as_tests(grade: GradeResult) -> bool:
    """Whether the runner's records show a test passed or failed as a test (not only skipped)."""
    return any(outcome in ("passed", "failed") for outcome in grade.tests.values())


def split_findings(findings: Iterable[Finding], grade: GradeResult, workspace: Path, hidden: Path | None) -> Split:
    """`findings` of `workspace`, parted by what `grade` (its hidden run) shows the toolchain did."""
    findings = list(findings)
    syntax = {f.file for f in findings if f.flag in SYNTAX_FLAGS}
    files = reached(workspace, hidden) if syntax and ran_as_tests(grade) else set()
    accepted = {rel for rel in syntax if accepted_by_toolchain(rel, grade, files)}
    gaps = tuple(f for f in findings if f.flag in SYNTAX_FLAGS and f.file in accepted)
    return Split(tuple(f for f in findings if f not in gaps), gaps)


def gap_note(f: Finding, tests: int | None = None) -> str:
    """One line: the grammar's complaint and whose word overrules it."""
    toolchain = TOOLCHAINS.get(grammar_for(f.file) or "", "the toolchain")
    ran = f"; {tests} test{'' if tests == 1 else 's'} ran" if tests else ""
    return f"grammar gap: {f} (tree-sitter only: {toolchain} accepted it{ran})"
