"""Opening the ledger file: a writing connection in WAL mode, or one that never writes it."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

BUSY_TIMEOUT_S = 60  # how long a write waits for another process's before it fails


def writing_connection(path: Path) -> sqlite3.Connection:
    """A connection shared by the writer thread and the event loop (every use serialized by the
    Ledger), switched to WAL, with foreign keys and recursive triggers on."""
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=BUSY_TIMEOUT_S)
    _to_wal(conn)
    for pragma in ("synchronous=NORMAL", "foreign_keys=ON", "recursive_triggers=ON"):
        conn.execute(f"PRAGMA {pragma}")
    return conn


def read_only_connection(path: Path) -> sqlite3.Connection:
    """A connection that never writes the file (foreign keys on): `mode=ro`, else (a read-only filesystem, where
    SQLite cannot make the WAL's shared-memory file) `immutable=1`. The first read tells which."""
    uri = path.resolve().as_uri()
    for flags in ("mode=ro", "mode=ro&immutable=1"):
        conn = sqlite3.connect(f"{uri}?{flags}", uri=True, check_same_thread=False, timeout=BUSY_TIMEOUT_S)
        try:
            conn.execute("select count(*) from sqlite_master").fetchone()
            conn.execute("PRAGMA foreign_keys=ON")
            return conn
        except sqlite3.OperationalError:
            conn.close()
            if flags.endswith("immutable=1"):
                raise
    raise AssertionError("unreachable")


def _to_wal(conn: sqlite3.Connection) -> None:
    """PRAGMA journal_mode=WAL, waiting its turn as a write does. SQLite takes the exclusive lock
    the switch needs without calling the busy handler, so a process opening a new ledger while
    another switched or migrated it failed at once with "database is locked" (half the time, two
    runs started together on a new --db): here it retries for as long as a write would wait."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    pause = 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorcode", None) != sqlite3.SQLITE_BUSY or time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
