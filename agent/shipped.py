"""Where the shipped example configs (examples/) and task corpus (fixtures/) live.

From a checkout (or an editable install) they are the checkout's own folders; an installed
wheel carries them as quotabench_data/ beside this package (pyproject.toml maps them), so the
README's commands (`quotabench run examples/smoke-scripted.toml`, `quotabench validate
fixtures/core`) work from any folder.
"""

from __future__ import annotations

from pathlib import Path

SHIPPED = ("examples", "fixtures")


def data_root() -> Path:
    """The folder that holds examples/ and fixtures/."""
    here = Path(__file__).resolve().parents[1]
    return here if (here / "fixtures").is_dir() else here / "quotabench_data"


def shipped_path(given: str | Path) -> Path:
    """`given` as typed when it exists; else, for a relative path under examples/ or fixtures/,
    the shipped copy (so an installed quotabench finds its own examples outside the checkout)."""
    path = Path(given)
    if path.exists() or path.is_absolute() or not path.parts or path.parts[0] not in SHIPPED:
        return path
    shipped = data_root() / path
    return shipped if shipped.exists() else path
