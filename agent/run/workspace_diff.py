"""What an attempt changed: the final content of changed files, and a unified diff against the fixture.

A symlink is never read through: its recorded content is the line `symlink -> TARGET`, so no
file outside the workspace can reach the ledger.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from verifiers.tasks import iter_files


def _content(path: Path) -> bytes:
    if path.is_symlink():
        return f"symlink -> {os.readlink(path)}\n".encode("utf-8", "replace")
    return path.read_bytes()


def changed_files(fixture: Path, final: Path) -> dict[str, str | None]:
    """{relative path: new text} for new or changed files, {path: None} for deleted ones."""
    before = {str(p.relative_to(fixture)): p for p in iter_files(fixture)}
    after = {str(p.relative_to(final)): p for p in iter_files(final)}
    changes: dict[str, str | None] = {}
    for rel, path in after.items():
        data = _content(path)
        if rel not in before or _content(before[rel]) != data:
            changes[rel] = data.decode("utf-8", "replace")
    for rel in before.keys() - after.keys():
        changes[rel] = None
    return dict(sorted(changes.items()))


def unified_diff(fixture: Path, changes: dict[str, str | None]) -> str:
    parts: list[str] = []
    for rel, new in changes.items():
        old_path = fixture / rel
        exists = old_path.is_symlink() or old_path.is_file()
        old = _content(old_path).decode("utf-8", "replace") if exists else ""
        parts.extend(
            difflib.unified_diff(
                old.splitlines(keepends=True),
                (new or "").splitlines(keepends=True),
                fromfile=f"a/{rel}" if exists else "/dev/null",
                tofile=f"b/{rel}" if new is not None else "/dev/null",
            )
        )
    return "".join(p if p.endswith("\n") else p + "\n\\ No newline at end of file\n" for p in parts)


def apply_changes(dest: Path, changes: dict[str, str | None]) -> None:
    """Rebuild a final workspace from a fixture copy at dest and recorded changes (used by resume)."""
    for rel, content in changes.items():
        target = dest / rel
        if target.is_symlink():
            target.unlink()
        if content is None:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
