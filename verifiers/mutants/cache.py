"""Mutation results cached per task version: one small JSON file per (task files, settings).

The key hashes the task's version as the grader sees it (its files, hidden command and harness,
verifiers.grading.task_key) with the mutator's version and `max_mutants`: edit any file of the
task, or the mutator, and the old entry is simply never read again. Writes are atomic (a temp
file renamed into place), so a killed `validate --mutants` leaves whole entries or none.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from verifiers.grading import task_key
from verifiers.mutants.outcome import TaskScore
from verifiers.tasks import Task

MUTATOR_VERSION = "4"  # bump when generate.py or outcome.py would give other results


def default_cache_dir() -> Path:
    """$XDG_CACHE_HOME/quotabench/mutants, else ~/.cache/quotabench/mutants."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "quotabench" / "mutants"


def cache_key(task: Task, max_mutants: int) -> str:
    return hashlib.sha256(f"{task_key(task)}\0{MUTATOR_VERSION}\0{max_mutants}".encode()).hexdigest()


class ScoreCache:
    """The cache folder; `get` returns None for anything missing or unreadable."""

    def __init__(self, folder: Path | None = None):
        self.folder = Path(folder) if folder is not None else default_cache_dir()

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def get(self, key: str) -> TaskScore | None:
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            score = TaskScore.from_json(data)
        except (OSError, ValueError, TypeError):
            return None
        return score if score.key == key else None

    def put(self, score: TaskScore) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=self.folder)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(score.to_json(), out, ensure_ascii=False)
        os.replace(tmp, self._path(score.key))
