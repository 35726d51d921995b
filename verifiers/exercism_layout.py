"""One Exercism exercise folder read into the files of a task: what each language's runner
needs (the visible and hidden test names, the commands), and what makes an exercise
impossible to run offline (a crate, an npm package, a Python package outside the stdlib).

An exercise folder holds `.docs/` (instructions), `.meta/config.json` (whose `files` names the
`solution` stubs, the `test` files and the `example` solutions), the stubs, the test file and
the language's build files; reference data: exercism/python, exercism/rust, exercism/javascript.
"""

from __future__ import annotations

import ast
import json
import posixpath
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from verifiers import VerifierError
from verifiers.exercism_go import offline_problem, test_count
from verifiers.exercism_tests import (
    SplitTests,
    TestFileError,
    js_imports,
    js_rebase_imports,
    js_unsupported,
    split_tests,
)

PYTEST = "python -m pytest -q -p no:cacheprovider"
CARGO_EXAMPLE = ".meta/Cargo-example.toml"
DOCS = (".docs/introduction.md", ".docs/instructions.md", ".docs/instructions.append.md")
# build and editor files of a track that neither the model nor the runner needs here
_LEFT_OUT = frozenset(
    {
        "package.json",  # kept only when it sets "type" (see _javascript)
        "package-lock.json",
        "pnpm-lock.yaml",
        "yarn.lock",
        "babel.config.js",
        "babel.config.cjs",
        "eslint.config.mjs",
        "jest.config.js",
        "tsconfig.json",
        "LICENSE",
        "Cargo.lock",
    }
)
_LEFT_OUT_DIRS = frozenset({".meta", ".docs", "node_modules", "target", "__pycache__"})
_NODE_BUILTINS = frozenset(
    "assert buffer child_process crypto events fs os path process readline stream string_decoder timers url "
    "util zlib".split()
)


class ExerciseError(VerifierError):
    """One exercise that cannot become a task here; the message is the reason it is skipped."""


@dataclass(frozen=True)
class Language:
    name: str  # quotabench's language (task.toml)
    prefix: str  # of the task ids
    grammar: str  # of the test file (verifiers/exercism_tests.py)
    extensions: tuple[str, ...]  # of test files, to tell a track's language without its config.json


LANGUAGES = {
    "python": Language("python", "py", "python", ("_test.py",)),
    "rust": Language("rust", "rs", "rust", (".rs",)),
    "javascript": Language("javascript", "js", "javascript", (".spec.js", ".test.js")),
    "typescript": Language("typescript", "ts", "typescript", (".test.ts", ".spec.ts")),
    "go": Language("go", "go", "go", ("_test.go",)),
}
_OTHER_EXTENSIONS = {"Test.java": "java", "_test.cpp": "cpp", ".cpp": "cpp"}


def track_language(track: Path, exercises: list[Path]) -> str | None:
    """A track's language slug: config.json's `slug` or `language`, else its test files' extension."""
    try:
        config = json.loads((track / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = {}
    for key in ("slug", "language"):
        value = config.get(key) if isinstance(config, dict) else None
        if isinstance(value, str) and value.strip():
            return value.strip().lower()
    endings = {**{e: slug for slug, lang in LANGUAGES.items() for e in lang.extensions}, **_OTHER_EXTENSIONS}
    for folder in exercises:
        for path in sorted(folder.rglob("*")):
            for ending, slug in endings.items():
                if path.is_file() and path.name.endswith(ending) and ".meta" not in path.parts:
                    return slug
    return None


@dataclass
class Layout:
    """The files of one task, built from one exercise."""

    language: Language
    exercise: Path
    prompt: str
    visible_cmd: str
    hidden_cmd: str
    timeout_s: int
    trap: str
    workspace: dict[str, str] = field(default_factory=dict)
    hidden: dict[str, str] = field(default_factory=dict)
    reference: dict[str, str] = field(default_factory=dict)

    def files(self, task_id: str) -> dict[str, str]:
        toml = json.dumps  # a JSON string literal is a valid TOML basic string
        files = {
            "task.toml": (
                f"# imported from {self.exercise.parent.parent.parent.name}/exercises/practice/{self.exercise.name}\n"
                f'id = {toml(task_id)}\nlanguage = "{self.language.name}"\nkind = "exercism"\n'
                f"visible_cmd = {toml(self.visible_cmd)}\nhidden_cmd = {toml(self.hidden_cmd)}\n"
                f"timeout_s = {self.timeout_s}\ntrap = {toml(self.trap)}\n"
            ),
            "prompt.md": self.prompt,
        }
        for folder, part in (("workspace", self.workspace), ("hidden", self.hidden), ("reference", self.reference)):
            files.update({f"{folder}/{rel}": text for rel, text in part.items()})
        return files


def _text(path: Path, exercise: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ExerciseError(f"{path.relative_to(exercise)} is not UTF-8 text") from None
    except OSError as exc:
        raise ExerciseError(f"{path.relative_to(exercise)}: {exc.strerror}") from None


def _config_files(exercise: Path) -> dict[str, list[str]]:
    """config.json's `files`: solution, test and example, each a non-empty list of relative paths."""
    path = exercise / ".meta" / "config.json"
    if not path.is_file():
        raise ExerciseError("no .meta/config.json")
    try:
        config = json.loads(_text(path, exercise))
    except ValueError as exc:
        raise ExerciseError(f"malformed .meta/config.json ({exc})") from None
    files = config.get("files") if isinstance(config, dict) else None
    if not isinstance(files, dict):
        raise ExerciseError('malformed .meta/config.json: no "files" table')
    found: dict[str, list[str]] = {}
    for key in ("solution", "test", "example"):
        value = files.get(key)
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
            raise ExerciseError(f'malformed .meta/config.json: "files.{key}" is not a list of file names')
        for rel in value:
            pure = PurePosixPath(rel)
            if pure.is_absolute() or ".." in pure.parts:
                raise ExerciseError(f'malformed .meta/config.json: "files.{key}" names {rel!r}, outside the exercise')
            if not (exercise / rel).is_file():
                raise ExerciseError(f'.meta/config.json "files.{key}" names {rel}, which is not in the exercise')
        found[key] = value
    return found


def _examples(solution: list[str], example: list[str]) -> dict[str, str]:
    """solution path -> the example file that replaces it: the same file name, else the one
    solution file with the example's extension (a stub no example replaces stays as it is, as a
    Rust track's Cargo.toml does)."""
    pairs: dict[str, str] = {}
    for ex in example:
        name, suffix = PurePosixPath(ex).name, PurePosixPath(ex).suffix
        same = [s for s in solution if PurePosixPath(s).name == name and s not in pairs]
        if not same:
            same = [s for s in solution if PurePosixPath(s).suffix == suffix and s not in pairs]
        if len(same) != 1:
            raise ExerciseError(
                f"cannot tell which solution file the example {ex} replaces (solution files: {', '.join(solution)})"
            )
        pairs[same[0]] = ex
    return pairs


def _extras(exercise: Path, skip: set[str]) -> dict[str, str]:
    """The exercise's other files the workspace needs (helpers, Cargo.toml, ...)."""
    found = {}
    for path in sorted(exercise.rglob("*")):
        rel = path.relative_to(exercise).as_posix()
        parts = PurePosixPath(rel).parts
        if not path.is_file() or rel in skip or parts[0] in _LEFT_OUT_DIRS or path.name in _LEFT_OUT:
            continue
        if any(p.startswith(".") for p in parts) or path.suffix == ".md" or "node_modules" in parts:
            continue
        found[rel] = _text(path, exercise)
    return found


def _prompt(exercise: Path, solution: list[str], visible: str, shown: int, cases: int, note: str) -> str:
    docs = [_text(exercise / rel, exercise).strip() for rel in DOCS if (exercise / rel).is_file()]
    files = ", ".join(f"`{s}`" for s in solution)
    return (
        "\n\n".join(docs)
        + f"\n\n## Your task\n\nImplement the instructions above in {files} (the stub there has the names the "
        f"tests use). `{visible}` holds {shown} of the {cases} tests; the others, which you do not see, check the "
        f"rest of the instructions.{note}\n"
    )


def read_exercise(exercise: Path, language: Language) -> Layout:
    """The task files of one exercise folder; ExerciseError (the reason to skip it) if it cannot
    run here or cannot be read."""
    if not (exercise / ".docs" / "instructions.md").is_file():
        raise ExerciseError("no .docs/instructions.md")
    files = _config_files(exercise)
    test, *helpers = files["test"]
    examples = _examples(files["solution"], files["example"])
    workspace = _extras(exercise, set(files["test"]) | set(files["solution"]))
    workspace.update({s: _text(exercise / s, exercise) for s in files["solution"]})
    reference = {s: _text(exercise / e, exercise) for s, e in examples.items()}
    if language.grammar in ("javascript", "typescript"):  # an example in .meta/ imports `../helper`
        for s, e in examples.items():
            moved = (posixpath.dirname(e), posixpath.dirname(s))
            reference[s] = js_rebase_imports(reference[s], language.grammar, *moved)
    source = _text(exercise / test, exercise)
    if language.name == "go":
        return _go(exercise, language, files["test"], workspace, reference, files["solution"])
    shared = {}
    for rel in helpers:  # a second test file may only be a helper the first one imports
        shared[rel] = _text(exercise / rel, exercise)
        if language.name == "rust" or _has_cases(shared[rel], language):
            raise ExerciseError(f"{len(files['test'])} test files ({', '.join(files['test'])}); one is supported")
    build = {"python": _python, "rust": _rust}.get(language.name, _javascript)
    layout = build(exercise, language, test, source, {**workspace, **shared}, reference, files["solution"])
    layout.hidden.update(shared)  # put back as shipped, whatever the model did to them
    return layout


def _has_cases(text: str, language: Language) -> bool:
    try:
        split_tests(text, language.grammar)
    except TestFileError:
        return False
    return True


def _example_texts(ref: dict[str, str]) -> list[tuple[str, str]]:
    return [(f"the example solution for {rel}", text) for rel, text in ref.items()]


def _trap(split: SplitTests) -> str:
    return f"the whole Exercism test file: {split.cases} cases, {split.visible_cases} of them visible"


def _laid_out(
    exercise: Path,
    language: Language,
    split: SplitTests,
    sol: list[str],
    files: tuple[dict[str, str], dict[str, str]],
    visible: str,
    hidden: str,
    commands: tuple[str, str, int],
    note: str,
) -> Layout:
    """The task of one exercise: the visible half of its tests in the workspace, the whole file hidden."""
    ws, ref = files
    ws[visible] = split.visible
    visible_cmd, hidden_cmd, timeout_s = commands
    prompt = _prompt(exercise, sol, visible, split.visible_cases, split.cases, note)
    return Layout(
        language, exercise, prompt, visible_cmd, hidden_cmd, timeout_s, _trap(split), ws, {hidden: split.hidden}, ref
    )


def _python(
    exercise: Path, language: Language, test: str, source: str, ws: dict[str, str], ref: dict[str, str], sol: list[str]
) -> Layout:
    local = {PurePosixPath(rel).parts[0].removesuffix(".py") for rel in [*ws, test]}
    for stub in sol:
        name = PurePosixPath(stub).parts[0].removesuffix(".py")
        if name in sys.stdlib_module_names or name == "pytest":
            raise ExerciseError(f"the solution module {name!r} has the name of a standard-library module")
    for rel, text in [(test, source), *_example_texts(ref)]:
        for module in _python_imports(rel, text):
            if module not in local and module not in sys.stdlib_module_names and module != "pytest":
                raise ExerciseError(f"needs the Python package {module!r} ({rel} imports it), not in the stdlib")
    split = split_tests(source, language.grammar)
    visible = "test_visible.py"
    commands = (f"{PYTEST} {visible}", f"{PYTEST} {test}", 60)
    note = " Only the standard library is importable."
    return _laid_out(exercise, language, split, sol, (ws, ref), visible, test, commands, note)


def _python_imports(rel: str, text: str) -> list[str]:
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise ExerciseError(f"{rel} does not parse (line {exc.lineno}: {exc.msg})") from None
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module.split(".")[0])
    return found


def _crates(manifest: dict[str, Any]) -> list[str]:
    """Dependencies a build would fetch from a registry (path dependencies are local)."""
    found = []
    for table in ("dependencies", "dev-dependencies", "build-dependencies"):
        deps = manifest.get(table) or {}
        for name, spec in deps.items() if isinstance(deps, dict) else ():
            if not (isinstance(spec, dict) and "path" in spec):
                found.append(name)
    return found


def _offline_manifest(text: str, name: str, whose: str) -> None:
    """Refuse a Cargo manifest that does not parse or fetches a crate from a registry."""
    try:
        manifest = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ExerciseError(f"{name} is not valid TOML ({exc})") from None
    crates = _crates(manifest)
    if crates:
        plural = "s" if len(crates) > 1 else ""
        raise ExerciseError(f"{whose}needs crate{plural} {', '.join(crates)} from crates.io (offline)")


def _rust(
    exercise: Path, language: Language, test: str, source: str, ws: dict[str, str], ref: dict[str, str], sol: list[str]
) -> Layout:
    if "Cargo.toml" not in ws:
        raise ExerciseError("no Cargo.toml")
    _offline_manifest(ws["Cargo.toml"], "Cargo.toml", "")
    example_manifest = exercise / CARGO_EXAMPLE  # the example's own, when it uses crates the stub's lacks
    if example_manifest.is_file():
        _offline_manifest(_text(example_manifest, exercise), CARGO_EXAMPLE, "the example solution ")
        ref["Cargo.toml"] = _text(example_manifest, exercise)
    split = split_tests(source, language.grammar)
    commands = ("cargo test --offline -q --test visible", "cargo test --offline -q --test hidden", 120)
    note = " The crate uses std only (no crates.io)."
    return _laid_out(exercise, language, split, sol, (ws, ref), "tests/visible.rs", "tests/hidden.rs", commands, note)


def _go(
    exercise: Path, language: Language, tests: list[str], ws: dict[str, str], ref: dict[str, str], sol: list[str]
) -> Layout:
    texts = {rel: _text(exercise / rel, exercise) for rel in tests}
    why = offline_problem(ws.get("go.mod"), [*texts.items(), *_example_texts(ref), *((s, ws[s]) for s in sol)])
    if why:
        raise ExerciseError(why)
    ws.update(texts)
    count = test_count(list(texts.values()))
    shown = ", ".join(f"`{t}`" for t in tests)
    docs = [_text(exercise / rel, exercise).strip() for rel in DOCS if (exercise / rel).is_file()]
    files = ", ".join(f"`{s}`" for s in sol)
    prompt = (
        "\n\n".join(docs) + f"\n\n## Your task\n\nImplement the instructions above in {files} (the stub there has "
        f"the names the tests use). {shown} hold{'s' if len(tests) == 1 else ''} every test ({count}); they run as "
        "shipped, whatever is changed in them. Only the standard library is importable.\n"
    )
    trap = f"the whole Exercism test file{'s' if len(tests) > 1 else ''}: {count} test functions, all visible"
    return Layout(language, exercise, prompt, "go test ./...", "go test ./...", 120, trap, ws, dict(texts), ref)


def _javascript(
    exercise: Path, language: Language, test: str, source: str, ws: dict[str, str], ref: dict[str, str], sol: list[str]
) -> Layout:
    grammar = language.grammar
    why = js_unsupported(source, grammar)
    if why:
        raise ExerciseError(why)
    split = split_tests(source, language.grammar)
    for rel, text in [(test, split.hidden), *_example_texts(ref), *((s, ws[s]) for s in sol)]:
        for module in js_imports(text, grammar):
            bare = module.removeprefix("node:").split("/")[0]
            if not module.startswith((".", "/", "node:")) and bare not in _NODE_BUILTINS:
                raise ExerciseError(f"needs the npm package {module!r} ({rel} imports it), not installed offline")
    package = exercise / "package.json"
    if package.is_file():
        try:
            typed = "type" in json.loads(_text(package, exercise))
        except (ValueError, TypeError):
            typed = False
        if typed:  # "type" decides how node reads .js files; the rest is npm's business
            ws["package.json"] = _text(package, exercise)
    name = PurePosixPath(test).name
    visible = "visible" + name[name.index(".") :] if "." in name else f"visible.spec.{grammar[:2]}"
    visible = str(PurePosixPath(test).parent / visible) if "/" in test else visible
    commands = (f"jest {visible}", f"jest {test}", 60)
    note = " No npm package is installed."
    return _laid_out(exercise, language, split, sol, (ws, ref), visible, test, commands, note)
