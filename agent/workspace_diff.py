"""What an attempt changed: the final content of changed files, and a unified diff against the fixture."""
from __future__ import annotations

import difflib
from pathlib import Path

from verifiers.tasks import iter_files


def changed_files(fixture: Path, final: Path) -> dict[str, str | None]:
    """{relative path: new text} for new or changed files, {path: None} for deleted ones."""
    before = {str(p.relative_to(fixture)): p for p in iter_files(fixture)}
    after = {str(p.relative_to(final)): p for p in iter_files(final)}
    changes: dict[str, str | None] = {}
    for rel, path in after.items():
        data = path.read_bytes()
        if rel not in before or before[rel].read_bytes() != data:
            changes[rel] = data.decode("utf-8", "replace")
    for rel in before.keys() - after.keys():
        changes[rel] = None
    return dict(sorted(changes.items()))


def unified_diff(fixture: Path, changes: dict[str, str | None]) -> str:
    parts = []
    for rel, new in changes.items():
        old_path = fixture / rel
        old = old_path.read_text(encoding="utf-8", errors="replace") if old_path.is_file() else ""
        parts.extend(difflib.unified_diff(
            old.splitlines(keepends=True), (new or "").splitlines(keepends=True),
            fromfile=f"a/{rel}" if old_path.is_file() else "/dev/null",
            tofile=f"b/{rel}" if new is not None else "/dev/null"))
    return "".join(p if p.endswith("\n") else p + "\n\\ No newline at end of file\n" for p in parts)


def apply_changes(dest: Path, changes: dict[str, str | None]) -> None:
    """Rebuild a final workspace from a fixture copy at dest and recorded changes (used by resume)."""
    for rel, content in changes.items():
        target = dest / rel
        if content is None:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
