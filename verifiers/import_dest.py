"""Where an importer (verifiers/humaneval.py, verifiers/exercism.py) writes its suite: a new or
empty folder, or, with --force, one that already holds files."""

from __future__ import annotations

from pathlib import Path

from verifiers import VerifierError


class DestinationError(VerifierError):
    """The folder an import would write its suite into cannot take it."""


def check_dest(dest: Path, force: bool) -> None:
    """Refuse a destination that is not a folder, or one already in use unless `force`."""
    if dest.is_symlink() and not dest.exists():
        raise DestinationError(
            f"destination {dest}: is a symlink to nothing — remove the link, or pass a new or empty folder"
        )
    if dest.exists() and not dest.is_dir():
        raise DestinationError(f"destination {dest}: is a file, not a folder — pass a new or empty folder")
    if dest.is_dir() and any(dest.iterdir()) and not force:
        raise DestinationError(
            f"destination {dest}: already holds files — pass a new or empty folder, or --force to replace "
            "the tasks this import writes there"
        )
