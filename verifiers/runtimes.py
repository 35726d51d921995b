"""Per-language runtime check: does this machine have what a task's test commands run?

A task's commands name their runner (`tsx --test ...`, `cargo test ...`, `python -m pytest ...`)
and its language needs an interpreter under it (tsx runs on node). A jest command (`jest
FILE`, `npx jest FILE`) runs on quotabench's own layer over node:test and needs node alone, one
new enough to read `import` in a `.js` file of a package with no "type" (JEST_NODE). Looked up on the PATH the
sandbox gives the tests, once per tool. A missing tool is said once per tool and language
("6 typescript tasks need `tsx` on PATH: npm install -g tsx"), not once per check of every
task; `quotabench validate` and the run engine both skip those tasks (class `environment`).
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from verifiers.catch2_main import HEADER as CATCH2_HEADER
from verifiers.harness import harness_command
from verifiers.tasks import Task

# What each language needs beneath the command's own first word.
LANGUAGE_NEEDS = {
    "python": (),
    "shell": ("bash",),
    "javascript": ("node",),
    "typescript": ("node",),
    "rust": ("cargo",),
    "go": ("go",),
    "java": ("javac", "java", "junit"),
    "cpp": ("g++", "catch2"),
}
FIXES = {
    "tsx": "npm install -g tsx",
    "node": "install Node.js 18 or newer (apt-get install nodejs, or nvm install --lts)",
    "cargo": "install Rust (rustup, or apt-get install cargo)",
    "go": "apt-get install golang-go (or Go from go.dev/dl)",
    "javac": "apt-get install default-jdk-headless",
    "java": "apt-get install default-jdk-headless",
    "junit": "apt-get install junit5 libassertj-core-java",
    "g++": "apt-get install g++",
    "catch2": "apt-get install catch2",
    "bash": "apt-get install bash",
    "python": "run quotabench from a Python environment with `python` on PATH",
    "pytest": "pip install pytest (into the environment quotabench runs from)",
}
# What the harness links against that is a library, not a program on PATH (a Debian package's files).
LIBRARIES = {
    "junit": ("/usr/share/java/junit-platform-console-standalone.jar", "/usr/share/java/assertj-core.jar"),
    "catch2": (str(CATCH2_HEADER),),
}
MIN_NODE_MAJOR = 18  # node:test
# jest-style specs: module syntax detection and require() of an ES module, on by default from
# these releases on (20.19 in the 20 line, 22.12 in the 22 line)
JEST_NODE = ((20, 19), (22, 12))
_PLAIN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")
# Shell builtins and keywords a command may start with: not programs on PATH.
SHELL_WORDS = frozenset(
    "cd export set unset source eval exec true false test echo printf read shift trap umask ulimit "
    "if then else elif fi for while until do done case esac function select time command builtin "
    "local declare typeset readonly alias wait exit return break continue : . let shopt pushd popd hash type "
    "getopts".split()
)


@dataclass(frozen=True)
class MissingRuntime:
    """One missing tool and the tasks of one language that need it."""

    tool: str
    language: str
    task_ids: tuple[str, ...]
    detail: str = ""  # e.g. "node v16.20.0 is too old"

    @property
    def fix(self) -> str:
        return FIXES.get(self.tool, f"install {self.tool} and put it on PATH")

    def __str__(self) -> str:
        n = len(self.task_ids)
        what = f"`{self.tool}` on PATH" if not self.detail else f"a newer `{self.tool}` ({self.detail})"
        if self.tool in LIBRARIES and not self.detail:
            what = f"{self.tool} ({LIBRARIES[self.tool][0]})"
        return f"{n} {self.language} task{'s' if n != 1 else ''} need{'s' if n == 1 else ''} {what}: {self.fix}"


def sandbox_path() -> str:
    """The PATH the sandbox gives test commands (verifiers.hostpaths builds it)."""
    from verifiers.hostpaths import host_paths

    return ":".join(host_paths().path_dirs)


def command_word(word: str) -> bool:
    """A command's first word that names a program to look up: a plain name, not a path, an
    assignment, a function definition (`node() {`), an expansion or a shell builtin."""
    return bool(_PLAIN.match(word)) and word not in SHELL_WORDS


def tools_of(task: Task) -> list[str]:
    """The executables a task's commands start (only plain command words: anything else is left
    to run and say what it misses), and what its language runs them on."""
    tools: list[str] = []
    for command in (task.visible_cmd, task.hidden_cmd):
        try:
            words = shlex.split(command)
        except ValueError:
            continue
        if words and command_word(words[0]) and harness_command(command).runner in ("junit", "catch2"):
            continue  # the harness runs these on the language's own tools (below), not on gradle
        if words and command_word(words[0]):
            tools.append(_jest_runner(command) or words[0])
            if words[0] in ("python", "python3") and words[1:3] == ["-m", "pytest"]:
                tools.append("pytest")
    tools += LANGUAGE_NEEDS.get(task.language, ())
    return list(dict.fromkeys(tools))


def _jest_runner(command: str) -> str | None:
    """The runner a jest command runs on (node, or tsx for TypeScript specs); None for others."""
    words = command.split()
    if words[:1] != ["jest"] and words[:2] != ["npx", "jest"]:
        return None
    runner = harness_command(command).runner
    return runner if runner != "script" else None


def runs_jest(task: Task) -> bool:
    return any(_jest_runner(c) for c in (task.visible_cmd, task.hidden_cmd))


def _jest_ready(version: str) -> bool:
    parts = version.lstrip("v").split(".")
    if len(parts) < 2 or not (parts[0].isdigit() and parts[1].isdigit()):
        return True  # an unusual version string: let the run say what it misses
    found = (int(parts[0]), int(parts[1]))
    (old, old_minor), (new, new_minor) = JEST_NODE
    return found >= (new, new_minor) or (old, old_minor) <= found < (old + 1, 0)


class Probe:
    """Looks tools up once each on one PATH."""

    def __init__(self, path: str | None = None):
        self.path = sandbox_path() if path is None else path
        self._seen: dict[str, str | None] = {}

    def problem(self, tool: str) -> str | None:
        """None if the tool is usable; "" if it is absent; a detail if it is there but unusable."""
        if tool not in self._seen:
            self._seen[tool] = self._check(tool)
        return self._seen[tool]

    def jest_problem(self) -> str | None:
        """None if node runs jest-style specs; else why not (node missing is problem("node"))."""
        if "jest" not in self._seen:
            found = shutil.which("node", path=self.path)
            version = (_runs([found, "--version"]) or "") if found else ""
            ready = not version or _jest_ready(version)
            wanted = " or ".join(f"{major}.{minor}" for major, minor in JEST_NODE)
            self._seen["jest"] = (
                None if ready else f"node {version} is older than {wanted}, which jest-style specs need"
            )
        return self._seen["jest"]

    def _check(self, tool: str) -> str | None:
        if tool in LIBRARIES:
            return None if all(Path(f).is_file() for f in LIBRARIES[tool]) else ""
        if tool == "pytest":
            python = shutil.which("python", path=self.path)
            same = python is not None and Path(python).resolve() == Path(sys.executable).resolve()
            if same:
                return None if importlib.util.find_spec("pytest") else ""
            return None if python and _runs([python, "-c", "import pytest"]) is not None else ""
        found = shutil.which(tool, path=self.path)
        if found is None:
            return ""
        if tool == "node":
            version = _runs([found, "--version"]) or ""
            major = version.lstrip("v").split(".")[0]
            if major.isdigit() and int(major) < MIN_NODE_MAJOR:
                return f"node {version} is older than {MIN_NODE_MAJOR}"
        return None


def _runs(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def missing_runtimes(tasks: Iterable[Task], probe: Probe | None = None) -> tuple[list[MissingRuntime], dict[str, str]]:
    """What is missing, grouped by tool and language, and for each affected task one line
    naming the first missing tool and its fix."""
    probe = probe or Probe()
    groups: dict[tuple[str, str, str], list[str]] = {}
    per_task: dict[str, str] = {}
    for task in tasks:
        for tool in tools_of(task):
            detail = probe.problem(tool)
            if detail is None and tool == "node" and runs_jest(task):
                detail = probe.jest_problem()
            if detail is None:
                continue
            groups.setdefault((tool, task.language, detail), []).append(task.id)
            if task.id not in per_task:
                m = MissingRuntime(tool, task.language, (task.id,), detail)
                what = f"`{tool}` is not on PATH" if not detail else detail
                if tool in LIBRARIES and not detail:
                    what = f"{LIBRARIES[tool][0]} is missing"
                per_task[task.id] = f"{what} — {m.fix}"
    missing = [MissingRuntime(tool, language, tuple(ids), detail) for (tool, language, detail), ids in groups.items()]
    return missing, per_task
