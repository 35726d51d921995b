"""Import Exercism exercises as task suites: one track checkout (`exercises/practice/<exercise>/`)
or Aider's polyglot benchmark (`<lang>/exercises/practice/<exercise>/` for each language).

Each exercise becomes one task folder in the format of docs/tasks.md:

    py-bowling/task.toml            id, language, kind "exercism", the runner's commands
    py-bowling/prompt.md            .docs/introduction.md + instructions.md + instructions.append.md
    py-bowling/workspace/           the stub (config.json `files.solution`), the helper files, and a
                                    visible test with the first third of the cases (at least one)
    py-bowling/hidden/              the whole test file with every skip marker removed
    py-bowling/reference/           the example solution (`files.example`) at the stub's path

What cannot run here offline (a language quotabench has no runner for yet, a crate from
crates.io, an npm package, a Python package outside the stdlib) or cannot be read (a broken
.meta/config.json, no test case) is skipped with its reason: listed in DEST/import-notes.json
(beside the suite, or the polyglot's language suites), never dropped silently. Test-file edits live in verifiers/exercism_tests.py,
how each language is laid out in verifiers/exercism_layout.py.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from verifiers import VerifierError
from verifiers.exercism_layout import (
    LANGUAGES,
    ExerciseError,
    Layout,
    read_exercise,
    track_language,
)
from verifiers.exercism_tests import TestFileError
from verifiers.import_dest import check_dest

NOTES_FILE = "import-notes.json"
PRACTICE = Path("exercises") / "practice"
UNSUPPORTED = "language not supported yet"


class ExercismError(VerifierError):
    """The source is not an Exercism track or polyglot checkout."""


class Status(StrEnum):
    IMPORTED = "imported"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class Outcome:
    """What became of one exercise: imported as a task, or skipped and why."""

    id: str
    suite: str  # the language folder (polyglot) or "" (a track)
    language: str  # the track's slug: python, rust, go, ...
    exercise: Path
    reason: str = ""  # "" when imported

    @property
    def status(self) -> Status:
        return Status.SKIPPED if self.reason else Status.IMPORTED


def _exercises(track: Path) -> list[Path]:
    practice = track / PRACTICE
    return sorted(p for p in practice.iterdir() if p.is_dir() and not p.name.startswith("."))


def _task_id(prefix: str, exercise: str) -> str:
    name = "".join(ch if ch.isascii() and (ch.isalnum() or ch == "-") else "-" for ch in exercise.lower())
    return f"{prefix}-{name.strip('-') or 'exercise'}"


def _write_task(task_id: str, layout: Layout, dest: Path) -> None:
    """Write `layout` as dest/task_id, through a dot folder renamed when complete."""
    staging = dest / f".{task_id}.partial"  # dot folders are not tasks
    shutil.rmtree(staging, ignore_errors=True)
    for rel, text in layout.files(task_id).items():
        path = staging / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    shutil.rmtree(dest / task_id, ignore_errors=True)
    staging.rename(dest / task_id)


def import_track(
    track: Path, dest: Path, slug: str, *, suite: str = "", on_outcome: Callable[[Outcome], None] | None = None
) -> list[Outcome]:
    """Write every exercise of one track (language `slug`) as a task in dest; the outcome of each."""
    language = LANGUAGES.get(slug)
    prefix = language.prefix if language else slug
    outcomes: list[Outcome] = []
    for folder in _exercises(track):
        task_id = _task_id(prefix, folder.name)
        if language is None:
            outcome = Outcome(task_id, suite, slug, folder, UNSUPPORTED)
        else:
            try:
                _write_task(task_id, read_exercise(folder, language), dest)
                outcome = Outcome(task_id, suite, slug, folder)
            except (ExerciseError, TestFileError) as exc:
                outcome = Outcome(task_id, suite, slug, folder, str(exc))
        if outcome.reason and (dest / task_id / "task.toml").is_file():
            shutil.rmtree(dest / task_id)  # a task an earlier import wrote, which no longer imports
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
    if dest.is_dir() and not any(dest.iterdir()):
        dest.rmdir()  # a folder with no task would gate as one broken task
    return outcomes


def write_notes(dest: Path, outcomes: list[Outcome]) -> Path:
    """dest/import-notes.json: every exercise, imported or skipped (and why), by task id."""
    notes = {
        (f"{o.suite}/{o.id}" if o.suite else o.id): {
            "exercise": str(o.exercise),
            "status": o.status,
            "reason": o.reason,
        }
        for o in outcomes
    }
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / NOTES_FILE
    path.write_text(json.dumps(notes, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def _require_folder(src: Path, what: str) -> None:
    if not src.exists():
        raise ExercismError(f"source {src}: no such folder — pass {what}")
    if not src.is_dir():
        raise ExercismError(f"source {src}: is a file, not a folder — pass {what}")


def polyglot_languages(src: Path) -> list[str]:
    """The language folders of a polyglot checkout (those holding exercises/practice/)."""
    what = "a checkout of Aider's polyglot benchmark (a folder holding python/exercises/practice/, rust/..., ...)"
    _require_folder(src, what)
    found = sorted(p.name for p in src.iterdir() if (p / PRACTICE).is_dir() and not p.name.startswith("."))
    if not found:
        raise ExercismError(
            f"source {src}: no <language>/exercises/practice/ folder in it — pass {what}"
            + (
                " (this looks like one Exercism track: use `quotabench import exercism`)"
                if (src / PRACTICE).is_dir()
                else ""
            )
        )
    return found


def import_polyglot(
    src: Path, dest: Path, *, force: bool = False, on_outcome: Callable[[Outcome], None] | None = None
) -> list[Outcome]:
    """One suite per language folder of `src`, written to dest/<language>."""
    languages = polyglot_languages(src)
    check_dest(dest, force)
    outcomes: list[Outcome] = []
    for lang in languages:
        outcomes += import_track(src / lang, dest / lang, lang, suite=lang, on_outcome=on_outcome)
    write_notes(dest, outcomes)
    return outcomes


def exercism_slug(src: Path) -> str:
    """The language of a track checkout: its config.json's `slug` or `language`, else the
    extension of its exercises' test files."""
    what = "an Exercism track checkout (a folder holding exercises/practice/<exercise>/)"
    _require_folder(src, what)
    if not (src / PRACTICE).is_dir():
        raise ExercismError(
            f"source {src}: no exercises/practice/ folder in it — pass {what}"
            + (
                " (this looks like the polyglot benchmark: use `quotabench import polyglot`)"
                if _polyglot_like(src)
                else ""
            )
        )
    slug = track_language(src, _exercises(src))
    if slug is None:
        raise ExercismError(
            f"source {src}: cannot tell the track's language (no config.json `slug`, no test file with a known "
            'extension) — add config.json with "slug": "python" (or rust, javascript, ...)'
        )
    return slug


def _polyglot_like(src: Path) -> bool:
    return any((p / PRACTICE).is_dir() for p in src.iterdir() if p.is_dir())


def import_exercism(
    src: Path, dest: Path, *, force: bool = False, on_outcome: Callable[[Outcome], None] | None = None
) -> list[Outcome]:
    """The exercises of one track checkout, written as one suite in dest."""
    slug = exercism_slug(src)
    check_dest(dest, force)
    outcomes = import_track(src, dest, slug, on_outcome=on_outcome)
    write_notes(dest, outcomes)
    return outcomes
