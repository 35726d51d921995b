"""The files around a task's tests: runner configuration a model may not change (put back to the
fixture's version before grading), the task's own pytest config, the names the task ships, and
the hidden Python sources the sandbox binds empty (the driver serves them from memory)."""

from __future__ import annotations

import shutil
from pathlib import Path

from verifiers.tasks import Task, iter_files

# Files a test runner reads on its own: conftest hooks, runner and build config, toolchain pins.
RUNNER_FILES = frozenset(
    {
        "conftest.py",
        "pytest.ini",
        ".pytest.ini",
        "tox.ini",
        "setup.cfg",
        "pyproject.toml",
        "sitecustomize.py",
        "usercustomize.py",
        "Cargo.toml",
        "Cargo.lock",
        "build.rs",
        "rust-toolchain",
        "rust-toolchain.toml",
        "package.json",
        ".npmrc",
        "tsconfig.json",
        "jsconfig.json",
        ".noderc",
        "go.mod",
        "go.sum",
        "go.work",
        "go.work.sum",
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle",
        "settings.gradle.kts",
        "gradle.properties",
        "gradlew",
        "pom.xml",
        "junit-platform.properties",
        "CMakeLists.txt",
        "catch.hpp",
        "catch_amalgamated.hpp",
        "catch_amalgamated.cpp",
        "tests-main.cpp",
    }
)
RUNNER_DIRS = frozenset({".cargo", "vendor", "gradle", ".mvn", ".quotabench"})
PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


def pytest_config(task: Task) -> str | None:
    """The task's own pytest config file, if it ships one (the grader restores it first)."""
    sections = {"pyproject.toml": "[tool.pytest", "tox.ini": "[pytest]", "setup.cfg": "[tool:pytest]"}
    for folder in (task.workspace, task.reference):
        for name in PYTEST_CONFIGS:
            path = folder / name
            if path.is_file() and (name not in sections or sections[name] in path.read_text(errors="replace")):
                return name
    return None


def task_files(task: Task) -> set[str]:
    names = set()
    for folder in (task.workspace, task.reference):
        for path in iter_files(folder):
            rel = path.relative_to(folder)
            names.add(str(rel))
            names.update(str(p) for p in rel.parents if str(p) != ".")
    return names


def without_sources(hidden: Path, dest: Path) -> tuple[Path, tuple[tuple[str, str], ...]]:
    """The hidden folder as the sandbox binds it for pytest, its test modules and conftests empty,
    and their text (which the driver serves from memory): a hidden test read off the disk reads
    nothing. Other files stay as they are: the tests may read them (HumanEval's check file)."""
    shutil.copytree(hidden, dest, symlinks=True)
    sources = []
    for path in iter_files(dest):
        name = path.name
        collected = name.startswith("test") or name.endswith("_test.py") or name == "conftest.py"
        if path.suffix == ".py" and collected and not path.is_symlink():
            sources.append((str(path.relative_to(dest)), path.read_text(encoding="utf-8", errors="replace")))
            path.unlink()
            path.write_bytes(b"")
    return dest, tuple(sources)


def drop_other_go_tests(staged: Path, hidden: Path) -> tuple[str, ...]:
    """A hidden go run builds the package with the hidden test files alone: every other
    `_test.go` file (the visible tests, the model's own) is left out, so no init() or TestMain
    of theirs is in the test binary, and no test the reference's run does not have."""
    keep = {str(p.relative_to(hidden)) for p in iter_files(hidden)}
    dropped = []
    for path in iter_files(staged):
        rel = str(path.relative_to(staged))
        if path.name.endswith("_test.go") and rel not in keep:
            path.unlink()
            dropped.append(rel)
    return tuple(dropped)


def drop_other_java_tests(staged: Path, hidden: Path) -> tuple[str, ...]:
    """A hidden JUnit run compiles the hidden test sources alone: every other file under
    src/test (the visible tests, the model's own, their resources) is left out, so no test class,
    extension or listener of theirs is on the class path."""
    keep = {str(p.relative_to(hidden)) for p in iter_files(hidden)}
    dropped = []
    for path in iter_files(staged / "src" / "test") if (staged / "src" / "test").is_dir() else ():
        rel = str(path.relative_to(staged))
        if rel not in keep:
            path.unlink()
            dropped.append(rel)
    return tuple(dropped)


def restore_runner_files(task: Task, staged: Path) -> tuple[str, ...]:
    """Put runner files back to a version the task allows (the fixture's, or the reference's);
    drop the ones the model made up. Returns what was changed."""
    changed = []
    for path in iter_files(staged):
        rel = path.relative_to(staged)
        if not (path.name in RUNNER_FILES or rel.parts[0] in RUNNER_DIRS):
            continue
        allowed = [f for f in (task.workspace / rel, task.reference / rel) if f.is_file() and not f.is_symlink()]
        data = None if path.is_symlink() else path.read_bytes()
        if any(data == f.read_bytes() for f in allowed):
            continue
        path.unlink()
        if allowed:
            path.write_bytes(allowed[0].read_bytes())
        changed.append(str(rel))
    return tuple(changed)
