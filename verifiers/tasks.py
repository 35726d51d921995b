"""The task format (docs/tasks.md): load one task folder or a whole suite.

A suite loads every valid task and reports each broken one as a `TaskProblem`
(path, what is wrong, how to fix) instead of raising.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import shutil
import stat
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from verifiers import VerifierError

LANGUAGES = ("python", "javascript", "typescript", "rust", "shell", "go", "java", "cpp")
# The kinds of the shipped corpus (docs/tasks.md). A foreign suite's own kinds ("concurrency")
# are accepted as given, any short line of printable text, and reports group by them.
SHIPPED_KINDS = (
    "implement-spec",
    "boundary",
    "bugfix",
    "error-handling",
    "api-misuse",
    "refactor",
    "multi-file",
    "perf",
    "control",
)
# `control = "impossible"`: the tests contradict the prompt in one case, so no solution that
# follows the prompt passes; a pass means the tests were gamed (ImpossibleBench's control).
CONTROLS = ("impossible",)
DEFAULT_TIMEOUT_S = 60
MAX_TIMEOUT_S = 24 * 3600
MAX_MEMORY_MB = 256 * 1024
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
_KIND_RE = re.compile(r"^[^\x00-\x1f\x7f-\x9f]{1,64}$")
_JUNK = {"__pycache__", ".pytest_cache", "node_modules", "target", ".git"}


class TaskError(VerifierError):
    """A task folder that cannot be loaded."""


@dataclass(frozen=True)
class Task:
    id: str
    path: Path
    language: str
    kind: str
    prompt: str
    visible_cmd: str
    hidden_cmd: str
    timeout_s: float = DEFAULT_TIMEOUT_S
    trap: str = ""
    memory_mb: int | None = None
    control: str | None = None  # one of CONTROLS, or None for an ordinary task
    _digest: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)  # files_sha256, computed once

    @property
    def workspace(self) -> Path:
        return self.path / "workspace"

    @property
    def hidden(self) -> Path:
        return self.path / "hidden"

    @property
    def reference(self) -> Path:
        return self.path / "reference"

    @property
    def alternate(self) -> Path | None:
        p = self.path / "alternate"
        return p if p.is_dir() else None

    @property
    def negative(self) -> Path | None:
        p = self.path / "negative"
        return p if p.is_dir() else None

    @property
    def gamed(self) -> Path | None:
        """An impossible control's special-cased answer: the gate checks that it passes."""
        p = self.path / "gamed"
        return p if p.is_dir() else None

    def files_sha256(self) -> str:
        """Hash of every file in the task folder (names and bytes), for the run manifest.
        Read once per loaded Task: the manifest and the tasks rows both need it."""
        if "sha256" not in self._digest:
            h = hashlib.sha256()
            for f in iter_files(self.path):
                h.update(os.fsencode(f.relative_to(self.path)) + b"\0")  # any name bytes, not only UTF-8
                h.update((b"symlink:" + os.fsencode(os.readlink(f)) if f.is_symlink() else f.read_bytes()) + b"\0")
            self._digest["sha256"] = h.hexdigest()
        return str(self._digest["sha256"])


# The keys a task.toml may hold (docs/tasks.md): Task's fields but its folder and its cache.
TASK_KEYS = tuple(f.name for f in fields(Task) if f.name not in ("path", "_digest"))


@dataclass(frozen=True)
class TaskProblem:
    path: Path
    problem: str
    fix: str

    def __str__(self) -> str:
        return f"task {self.path}: {self.problem} — {self.fix}"


@dataclass
class Suite:
    path: Path
    tasks: list[Task] = field(default_factory=list)
    problems: list[TaskProblem] = field(default_factory=list)


def iter_files(root: Path) -> Iterator[Path]:
    """Every regular file under root, sorted, skipping caches and build output. Symlinks are
    never followed (a link to a folder is not walked); a symlink itself is yielded like a file
    so callers can record it as a link, never read through it."""
    root = Path(root)
    for name in relative_files(root):
        yield root / name


def relative_files(root: Path) -> list[str]:
    """iter_files' files as paths relative to root ("sub/name"), in the same order: sorted by
    their parts, as paths compare. Strings from one scandir per folder, no Path per entry (the
    agent's list_files walks the workspace on every call). A folder that cannot be read is skipped."""
    found: list[tuple[str, ...]] = []
    stack: list[tuple[str, tuple[str, ...]]] = [(os.fspath(root), ())]
    while stack:
        folder, parts = stack.pop()
        try:
            with os.scandir(folder) as entries:
                listed = list(entries)
        except OSError:
            continue
        for entry in listed:
            if entry.name in _JUNK:
                continue
            if _is_folder(entry):
                stack.append((entry.path, (*parts, entry.name)))
            elif _plain_entry(entry):
                found.append((*parts, entry.name))
    found.sort()
    return ["/".join(parts) for parts in found]


def _is_folder(entry: os.DirEntry[str]) -> bool:
    """A folder to walk into: a real directory, never a symlink to one."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _plain_entry(entry: os.DirEntry[str]) -> bool:
    """A regular file or a symlink: never a FIFO, socket or device (reading one would block)."""
    try:
        return entry.is_symlink() or entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _plain(path: Path) -> bool:
    """A regular file or a symlink: never a FIFO, socket or device (reading one would block)."""
    try:
        mode = path.lstat().st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) or stat.S_ISLNK(mode)


def _require_str(data: dict[str, Any], key: str, toml_path: Path) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise TaskError(f'task {toml_path.parent}: `{key}` is missing or empty in task.toml — add {key} = "..."')
    return value.strip()


def _check_keys(data: dict[str, Any], path: Path) -> None:
    """A misspelt key would silently leave its setting at the default: refuse it."""
    unknown = sorted(set(data) - set(TASK_KEYS))
    if not unknown:
        return
    key = unknown[0]
    close = difflib.get_close_matches(key, TASK_KEYS, n=1)
    fix = f"did you mean `{close[0]}`?" if close else f"remove it; valid keys: {', '.join(TASK_KEYS)}"
    raise TaskError(f"task {path}: unknown key `{key}` in task.toml — {fix}")


def load_task(path: Path) -> Task:
    """Load one task folder; raise TaskError with a one-line message if it is broken."""
    path = Path(path)
    try:
        return _load_task(path)
    except (OSError, RuntimeError, RecursionError) as exc:  # unreadable files, symlink loops
        raise TaskError(f"task {path}: cannot read the task folder ({exc}) — fix the files or links in it") from None


def _check_links(path: Path) -> None:
    """A symlink that loops or points nowhere would fail every copy of the task later: refuse it now."""
    for folder, dirs, files in os.walk(path):
        for name in dirs + files:
            entry = Path(folder) / name
            if entry.is_symlink():
                try:
                    entry.resolve(strict=True)
                except (OSError, RuntimeError) as exc:
                    reason = "loops" if "loop" in str(exc).lower() else "points to nothing"
                    raise TaskError(
                        f"task {path}: the symlink {entry.relative_to(path)} {reason} — "
                        "remove it or point it at a file in the task"
                    ) from None


def _load_task(path: Path) -> Task:
    toml_path = path / "task.toml"
    if not toml_path.is_file():
        raise TaskError(f"task {path}: no task.toml — add one (see docs/tasks.md)")
    try:
        data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TaskError(f"task {path}: task.toml is not valid TOML ({exc}) — fix the syntax") from None
    _check_keys(data, path)
    task_id = _require_str(data, "id", toml_path)
    if not _ID_RE.match(task_id):
        raise TaskError(f"task {path}: id {task_id!r} has characters other than letters, digits, - and _ — rename it")
    language = _require_str(data, "language", toml_path)
    if language not in LANGUAGES:
        raise TaskError(f"task {path}: language {language!r} is not one of {', '.join(LANGUAGES)} — pick one of them")
    kind = _require_str(data, "kind", toml_path)
    if not _KIND_RE.match(kind):
        raise TaskError(
            f"task {path}: kind {kind[:80]!r} is not a short line of text — write it as one word or a few, "
            f"e.g. one of {', '.join(SHIPPED_KINDS)}"
        )
    prompt = data.get("prompt")
    if prompt is not None and not isinstance(prompt, str):
        raise TaskError(f'task {path}: prompt = {prompt!r:.40} is not a string — write prompt = "..." or use prompt.md')
    if not prompt:
        prompt_md = path / "prompt.md"
        if not prompt_md.is_file():
            raise TaskError(f'task {path}: no prompt — add prompt = "..." to task.toml or a prompt.md beside it')
        try:
            prompt = prompt_md.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise TaskError(f"task {path}: prompt.md is not UTF-8 text (byte {exc.start}) — save it as UTF-8") from None
    timeout = data.get("timeout_s", DEFAULT_TIMEOUT_S)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not 0 < timeout <= MAX_TIMEOUT_S:
        raise TaskError(
            f"task {path}: timeout_s = {timeout!r} is not a number of seconds in (0, {MAX_TIMEOUT_S}] "
            "— e.g. timeout_s = 60"
        )
    memory_mb = data.get("memory_mb")
    if memory_mb is not None and (
        not isinstance(memory_mb, int) or isinstance(memory_mb, bool) or not 0 < memory_mb <= MAX_MEMORY_MB
    ):
        raise TaskError(
            f"task {path}: memory_mb = {memory_mb!r} is not an integer in [1, {MAX_MEMORY_MB}] — e.g. memory_mb = 2048"
        )
    control = data.get("control")
    if control is not None and control not in CONTROLS:
        raise TaskError(
            f"task {path}: control = {control!r} is not one of {', '.join(CONTROLS)} — remove it or write "
            'control = "impossible"'
        )
    if not isinstance(data.get("trap", ""), str):
        raise TaskError(f'task {path}: trap is not a string — write trap = "..." or leave it out')
    task = Task(
        id=task_id,
        path=path,
        language=language,
        kind=kind,
        prompt=prompt.strip(),
        visible_cmd=_require_str(data, "visible_cmd", toml_path),
        hidden_cmd=_require_str(data, "hidden_cmd", toml_path),
        timeout_s=float(timeout),
        trap=str(data.get("trap", "")).strip(),
        memory_mb=memory_mb,
        control=control,
    )
    _check_links(path)
    for name, folder in (("workspace", task.workspace), ("hidden", task.hidden), ("reference", task.reference)):
        if not folder.is_dir():
            raise TaskError(f"task {path}: {name}/ is missing — add the {name}/ folder (see docs/tasks.md)")
        if not any(iter_files(folder)):
            raise TaskError(f"task {path}: {name}/ is empty — add at least one file to {name}/")
    if control == "impossible" and task.gamed is None:
        raise TaskError(
            f"task {path}: an impossible control needs gamed/, the special-cased answer the gate checks "
            "passes — add it (see docs/tasks.md)"
        )
    return task


def _subfolders(path: Path) -> list[Path]:
    try:
        return sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError as exc:
        raise TaskError(f"suite {path}: cannot list the folder ({exc.strerror}) — check its permissions") from None


def task_folders(path: Path) -> list[Path]:
    """The task folders of a suite: the folder itself when it holds a task.toml, else each of its
    subfolders — and a subfolder that is itself a suite (a folder of suites, like fixtures/)
    gives its own subfolders instead. A folder that is neither is kept: it loads as broken."""
    if (path / "task.toml").is_file():
        return [path]
    folders: list[Path] = []
    for sub in _subfolders(path):
        inner = [] if (sub / "task.toml").is_file() else _subfolders(sub)
        folders += inner if any((p / "task.toml").is_file() for p in inner) else [sub]
    return folders


def load_suite(path: Path) -> Suite:
    """Load a suite folder (a folder of suites, or a single task folder) without ever raising on
    a bad task."""
    path = Path(path)
    if not path.is_dir():
        raise TaskError(f"suite {path}: not a folder — pass a folder of tasks or one task folder")
    suite = Suite(path=path)
    candidates = task_folders(path)
    seen: dict[str, Path] = {}
    for folder in candidates:
        try:
            task = load_task(folder)
        except TaskError as exc:
            text = str(exc)
            where, _, rest = text.partition(": ")
            problem, _, fix = rest.partition(" — ")
            suite.problems.append(TaskProblem(folder, problem, fix or "see docs/tasks.md"))
            continue
        if task.id in seen:
            suite.problems.append(
                TaskProblem(folder, f"duplicate id {task.id!r} (also {seen[task.id]})", "give each task a unique id")
            )
            continue
        seen[task.id] = folder
        suite.tasks.append(task)
    return suite


def copy_with_overlays(source: Path, dest: Path, *overlays: Path | None, link: bool = False) -> Path:
    """Copy source to dest (without caches and build output), then each overlay on top, in order.

    Symlinks are copied as symlinks, never followed. With `link`, files are hard links where
    the filesystem allows (a read-only staging tree for the sandbox: nothing may write through it).
    """
    dest = Path(dest)
    copy = _link_or_copy if link else shutil.copy2
    for folder in (source, *overlays):
        if folder is not None:
            shutil.copytree(
                folder,
                dest,
                symlinks=True,
                dirs_exist_ok=True,
                copy_function=copy,
                ignore=_ignore,
            )
    return dest


def _ignore(folder: str, names: list[str]) -> set[str]:
    """Caches, build output and special files (FIFOs, sockets, devices) are never copied."""
    skipped = set(shutil.ignore_patterns(*_JUNK)(folder, names))
    for name in names:
        path = Path(folder) / name
        if name not in skipped and not path.is_dir() and not _plain(path):
            skipped.add(name)
    return skipped


def _link_or_copy(src: str, dst: str) -> None:
    if os.path.lexists(dst):
        os.unlink(dst)
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:
        shutil.copy2(src, dst, follow_symlinks=False)


def materialize(task: Task, dest: Path, *overlays: Path | None) -> Path:
    """The task's workspace at dest with each overlay folder copied on top, in order."""
    return copy_with_overlays(task.workspace, dest, *overlays)
