"""Which ledger a command opens, and what is wrong with a ledger path given to it.

A bare `quotabench report` / `browse` / `export` / `resume` opens the ledger of the last run
started in this folder. A run (or the demo) remembers its ledger for the folder it was started in,
as it starts (a run killed with -9 is still the last one), in $XDG_STATE_HOME/quotabench/ledgers.json (~/.local/state/...; beside the crash logs). Without
--db, a command started in that folder opens the remembered ledger, else ./quotabench.sqlite;
when neither exists the error names the ledgers it can see. A read opens the ledger read-only
(agent/ledger/store.py), so an archived ledger on a read-only filesystem reports, exports and
browses.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agent import QuotabenchError

if TYPE_CHECKING:  # sqlite-utils: loaded when a ledger is opened, not for --help
    from agent.ledger import Ledger

DEFAULT_DB = "quotabench.sqlite"
MAX_FOLDERS = 200  # folders remembered; the oldest are forgotten first


def state_dir() -> Path:
    return Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "quotabench"


def _memory() -> Path:
    return state_dir() / "ledgers.json"


def _load() -> dict[str, str]:
    try:
        data = json.loads(_memory().read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def remember(db: str | Path, folder: Path | None = None) -> None:
    """Remember `db` as the ledger of `folder` (the current one). Best effort: a state folder
    that cannot be written only means the next command needs --db."""
    folder = (folder or Path.cwd()).resolve()
    memory = _load()
    memory.pop(str(folder), None)
    memory[str(folder)] = str(Path(db).resolve())
    memory = dict(list(memory.items())[-MAX_FOLDERS:])
    try:
        _memory().parent.mkdir(parents=True, exist_ok=True)
        tmp = _memory().with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(memory, indent=1))
        tmp.replace(_memory())
    except OSError:
        pass


def recall(folder: Path | None = None) -> Path | None:
    """The ledger the last run started in `folder` wrote, if it still exists."""
    path = _load().get(str((folder or Path.cwd()).resolve()))
    return Path(path) if path and Path(path).is_file() else None


def default_ledger(folder: Path | None = None, say: Callable[[str], None] | None = None) -> str:
    """The ledger to read when no --db is given (see the module docstring)."""
    folder = folder or Path.cwd()
    remembered = recall(folder)
    if remembered is not None:
        if remembered.resolve() != (folder / DEFAULT_DB).resolve():
            shown = remembered.name if remembered.parent.resolve() == folder.resolve() else str(remembered)
            (say or _stderr)(
                f"quotabench: reading {shown}, the ledger of the last run started here (--db picks another)"
            )
        return str(remembered)
    return DEFAULT_DB


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def missing(path: Path) -> str:
    """The error for a ledger that does not exist, naming the ones this folder has."""
    here = sorted(p.name for p in Path.cwd().glob("*.sqlite"))
    if here:
        return f"ledger {path}: no such file — pass --db {here[0]} (ledgers in this folder: {', '.join(here[:5])})"
    return (
        f"ledger {path}: no such file — a run writes one (`quotabench run CONFIG.toml`, `quotabench demo`); "
        "from another folder, pass --db FILE"
    )


def check_ledger_path(path: str | Path, must_exist: bool = False) -> Path:
    """`path` as a ledger file: one line naming what is wrong (a folder, a missing file to read,
    a folder that does not exist to write in)."""
    path = Path(path)
    if path.is_dir():
        raise QuotabenchError(f"ledger {path}: is a folder — pass the ledger file, e.g. --db {path / DEFAULT_DB}")
    if must_exist and not path.is_file():
        raise QuotabenchError(missing(path))
    if not path.exists() and not path.parent.is_dir():
        raise QuotabenchError(
            f"ledger {path}: the folder {path.parent} does not exist — create it, or pass another --db"
        )
    if not path.exists() and not os.access(path.parent, os.W_OK):
        raise QuotabenchError(f"ledger {path}: the folder {path.parent} is not writable — pass a --db in one that is")
    return path


def open_ledger(path: str | Path, must_exist: bool = False, read_only: bool = False) -> Ledger:
    from agent.ledger import Ledger

    # a file that is not a ledger (or is damaged, or from a newer quotabench) is one LedgerError line
    return Ledger(check_ledger_path(path, must_exist), read_only=read_only)


def db_flag(db: str | Path | None, folder: Path | None = None) -> str:
    """` --db PATH` for a command line that must open `db`, unless it is ./quotabench.sqlite
    (what every command opens here without --db, when no other ledger is remembered)."""
    if db is None:
        return ""
    folder = (folder or Path.cwd()).resolve()
    path = Path(db).resolve()
    if path == folder / DEFAULT_DB:
        return ""
    shown = path.name if path.parent == folder else str(path)
    return f" --db {shlex.quote(shown)}"
