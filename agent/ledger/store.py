"""`Ledger`: open (and migrate) the SQLite file, write rows, read them back.

Every write is its own small transaction in WAL mode, so a SIGKILL at any point leaves a file
that opens and reads, holding everything up to the last completed call. The engine calls these
methods from one worker thread (see agent/ledger/writer.py), never on the event loop.
"""
from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from sqlite_utils import Database

from agent.ledger import schema

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_id_lock = threading.Lock()
_last_id = [0, 0]


def new_id() -> str:
    """A ULID: 48-bit millisecond time + 80 random bits, Crockford base32, monotonic in-process."""
    with _id_lock:
        ms = int(time.time() * 1000)
        if ms <= _last_id[0]:
            ms, rand = _last_id[0], _last_id[1] + 1
        else:
            rand = int.from_bytes(os.urandom(10), "big")
        _last_id[:] = [ms, rand]
    value = (ms << 80) | (rand & ((1 << 80) - 1))
    return "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def to_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


class Ledger:
    def __init__(self, path: Path | str):
        self.path = Path(path)
        # One connection shared by the writer thread and the event loop: every use is serialized.
        self.lock = threading.RLock()
        conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        self.db = Database(conn)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        schema.apply(self.db)

    def close(self) -> None:
        self.db.conn.close()

    # -- writes ----------------------------------------------------------------------------
    def insert(self, table: str, row: dict) -> None:
        with self.lock, self.db.atomic():
            self.db[table].insert(row)

    def insert_many(self, table: str, rows: Iterable[dict]) -> None:
        with self.lock, self.db.atomic():
            self.db[table].insert_all(rows)

    def update(self, table: str, pk: Any, fields: dict) -> None:
        with self.lock, self.db.atomic():
            self.db[table].update(pk, fields)

    def batch(self, ops: Iterable[tuple]) -> None:
        """Several ("insert", table, row) / ("update", table, pk, fields) ops in one transaction."""
        with self.lock, self.db.atomic():
            for op in ops:
                if op[0] == "insert":
                    self.db[op[1]].insert(op[2])
                else:
                    self.db[op[1]].update(op[2], op[3])

    # -- reads -----------------------------------------------------------------------------
    def query(self, sql: str, params: Iterable | dict = ()) -> list[dict]:
        with self.lock:
            return list(self.db.query(sql, params))

    def runs(self) -> list[dict]:
        return self.query("select * from runs order by created_utc desc")

    def run(self, run_id: str) -> dict | None:
        rows = self.query("select * from runs where id = ?", [run_id])
        return rows[0] if rows else None

    def resolve_run_id(self, prefix: str | None) -> str:
        """A full run id from a prefix, or the newest run when prefix is None."""
        from agent import QuotabenchError
        if prefix is None:
            rows = self.query("select id from runs order by created_utc desc limit 1")
            if not rows:
                raise QuotabenchError(f"ledger {self.path}: holds no runs yet — start one with `quotabench run CONFIG.toml`")
            return rows[0]["id"]
        rows = self.query("select id from runs where id like ? order by created_utc desc", [prefix + "%"])
        if len(rows) != 1:
            what = "no run" if not rows else f"{len(rows)} runs"
            raise QuotabenchError(f"ledger {self.path}: {what} with id starting {prefix!r} — list runs with `quotabench report --list`")
        return rows[0]["id"]

    def arms(self, run_id: str) -> list[dict]:
        return self.query("select * from arms where run_id = ? order by name", [run_id])

    def tasks(self, run_id: str) -> list[dict]:
        return self.query("select * from tasks where run_id = ? order by position", [run_id])

    def attempts(self, run_id: str) -> list[dict]:
        return self.query(
            "select a.*, t.language, t.kind, t.position from attempts a join tasks t "
            "on t.run_id = a.run_id and t.task_id = a.task_id where a.run_id = ? "
            "order by t.position, a.arm, a.attempt_no", [run_id])

    def calls(self, attempt_id: str) -> list[dict]:
        return self.query("select * from calls where attempt_id = ? order by started_utc, retry_index", [attempt_id])

    def tool_calls(self, attempt_id: str) -> list[dict]:
        return self.query("select * from tool_calls where attempt_id = ? order by rowid", [attempt_id])

    def grade(self, attempt_id: str) -> dict | None:
        rows = self.query("select * from grades where attempt_id = ?", [attempt_id])
        return rows[0] if rows else None
