"""`Ledger`: open (and migrate) the SQLite file, write rows, read them back.

Every write is a small transaction in WAL mode (writes that wait together on the writer thread
may share one), so a SIGKILL at any point leaves a file that opens and reads, holding
everything up to the last completed call. Write transactions start with BEGIN IMMEDIATE: they
take the write lock up front and wait on the busy timeout, so several `quotabench run`
processes (and `browse` reading) share one ledger. The engine calls these methods from one
writer thread (see agent/ledger/writer.py), never on the event loop.
Any SQLite failure (disk full, a damaged file, a lock held too long) is a `LedgerError` with
one line saying what to do.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import json
import re
import sqlite3
import threading
import uuid
import weakref
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, date, datetime
from datetime import time as dt_time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent import ExitCode, QuotabenchError
from agent.ledger.connection import BUSY_TIMEOUT_S, read_only_connection, writing_connection
from agent.ledger.ops import Insert, InsertAll, Op, Update

if TYPE_CHECKING:
    from sqlite_utils import Database

ROW_TEXT_CHARS = 64_000  # per text cell of calls/tool_calls/grades; longer text is cut (length + sha256 kept)


class LedgerError(QuotabenchError):
    """The ledger file cannot be read or written (disk full, damaged, locked)."""

    exit_code = ExitCode.FAILED


def new_id() -> str:
    """A ULID (python-ulid): 48-bit millisecond time + 80 random bits as 26 Crockford base32
    characters, the format every ledger has stored; monotonic within a millisecond."""
    from ulid import ULID  # here: its 50 ms of imports (importlib.metadata) are no read's business

    return str(ULID())


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def to_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def capped(text: str | None, limit: int = ROW_TEXT_CHARS) -> str | None:
    """`text` if it fits, else its head and a note with the full length and sha256: a row keeps
    a bounded amount of what a model or endpoint sent (the final files live in files_json)."""
    if text is None or len(text) <= limit:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{text[:limit]}\n[cut by quotabench: {len(text)} characters in all, sha256 {digest}]"


def clean_text(text: str) -> str:
    """Text SQLite (and a terminal) can take: lone surrogates become `?`."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def _clean_row(row: dict[str, Any]) -> dict[str, Any]:
    return {k: clean_text(v) if isinstance(v, str) else v for k, v in row.items()}


def _clean_op(op: Op) -> Op:
    if isinstance(op, Insert):
        return Insert(op.table, _clean_row(op.row))
    if isinstance(op, InsertAll):
        return InsertAll(op.table, [_clean_row(row) for row in op.rows])
    return Update(op.table, op.id, _clean_row(op.fields), op.must_exist)


# Plain sqlite3 on the write path: sqlite-utils introspected the table on every insert and
# update (~38 statements for a model call's 4 writes, 1.1-1.4 ms CPU). Each SQL text below is
# built once per (table, columns) and sqlite3's statement cache keeps it prepared.
_ID_TABLES = ("runs", "arms", "attempts", "calls", "tool_calls", "grades", "preflights", "submissions")
_PLAIN = (str, int, float, type(None), bytes)


@functools.lru_cache(maxsize=256)
def _insert_sql(table: str, columns: tuple[str, ...]) -> str:
    return f"insert into [{table}] ({', '.join(f'[{c}]' for c in columns)}) values ({', '.join('?' * len(columns))})"


@functools.lru_cache(maxsize=256)
def _update_sql(table: str, columns: tuple[str, ...]) -> str:
    if table not in _ID_TABLES:
        raise ValueError(f"ledger update: table {table!r} has no id column — valid tables: {', '.join(_ID_TABLES)}")
    return f"update [{table}] set {', '.join(f'[{c}] = ?' for c in columns)} where id = ?"


def _value(value: Any) -> Any:
    """What sqlite-utils stored for a non-SQL value: JSON for containers, ISO text for times."""
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, default=repr, ensure_ascii=False)
    if isinstance(value, (datetime, date, dt_time)):
        return value.isoformat()
    return str(value) if isinstance(value, (uuid.UUID, Path)) else value


def _values(values: Iterable[Any]) -> list[Any]:
    return [v if type(v) in _PLAIN else _value(v) for v in values]


_MIGRATION = re.compile(r"^@migrations\(\)\ndef (m\d{3}_\w+)\(", re.M)


@functools.cache
def _migration_names() -> frozenset[str]:
    """The migrations schema_base.py and schema.py define, read from their text: opening an
    up-to-date ledger then needs no sqlite-utils (with click, pluggy and dateutil, ~0.1 s of every
    command's start). tests/agent/ledger/test_ledger_writes.py checks the names against the registered
    migrations."""
    try:
        return frozenset(
            name
            for module in ("schema_base.py", "schema.py")
            for name in _MIGRATION.findall(Path(__file__).with_name(module).read_text(encoding="utf-8"))
        )
    except OSError:
        return frozenset()


def _migrated(conn: sqlite3.Connection) -> bool:
    names = _migration_names()
    try:
        applied = {
            row[0]
            for row in conn.execute("select name from _sqlite_migrations where migration_set = ?", ["quotabench"])
        }
    except sqlite3.OperationalError:  # a new file: no migrations table yet
        return False
    return bool(names) and names <= applied


def _fix_for(exc: sqlite3.Error) -> str:
    text = str(exc).lower()
    if "full" in text:
        return "free disk space"
    if "malformed" in text or "not a database" in text or "corrupt" in text:
        return "the file is damaged: restore it from a copy, or pass a new file with --db"
    if "locked" in text or "busy" in text:
        return f"another process held the ledger for over {BUSY_TIMEOUT_S} s; retry, or use another --db"
    if "readonly" in text or "unable to open" in text or "i/o" in text:
        return "check that the disk has space and the file is writable, or pass another --db"
    return "check the file with `sqlite3 FILE 'pragma integrity_check'`, or pass another file with --db"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"quotabench {version('quotabench')}"
    except PackageNotFoundError:
        return "this quotabench"


class Row(sqlite3.Row):
    """A row read for a large report: `row["arm"]` and `row.get("arm")` like a dict, a tuple
    underneath (100k attempt rows: ~60 MB instead of ~150 MB as dicts)."""

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except IndexError:
            return default


def _newer(conn: sqlite3.Connection) -> list[str]:
    """Migrations the file records that this quotabench does not know: a newer one wrote it."""
    names = _migration_names()
    try:
        applied = {
            row[0]
            for row in conn.execute("select name from _sqlite_migrations where migration_set = ?", ["quotabench"])
        }
    except sqlite3.OperationalError:
        return []
    return sorted(applied - names) if names else []


_WRITING: weakref.WeakSet[Ledger] = weakref.WeakSet()
# The runs this process wrote a row of, by (ledger path, run id): the status it last committed.
# Only such a run can be resumed after a failure (the CLI's failure line says so, or says nothing).
_RECORDED: dict[tuple[Path, str], str] = {}


def recorded_runs() -> list[tuple[Path, str, str]]:
    """(ledger, run id, status) of each run whose row this process committed, oldest first."""
    return [(path, run_id, status) for (path, run_id), status in _RECORDED.items()]


def _note_runs(path: Path, ops: list[Op]) -> None:
    """Remember the run rows `ops` (just committed) wrote and the status they set."""
    for op in ops:
        if isinstance(op, Insert) and op.table == "runs":
            _RECORDED[(path, str(op.row["id"]))] = str(op.row.get("status") or "")
        elif isinstance(op, InsertAll) and op.table == "runs":
            _RECORDED.update({(path, str(row["id"])): str(row.get("status") or "") for row in op.rows})
        elif isinstance(op, Update) and op.table == "runs" and "status" in op.fields:
            _RECORDED[(path, str(op.id))] = str(op.fields["status"])


@atexit.register  # registered on import, before the writer's drain: so it runs after it
def _close_at_exit() -> None:
    for ledger in list(_WRITING):
        with contextlib.suppress(sqlite3.Error):
            ledger.close()


class Ledger:
    """The ledger file. `read_only` (report, export, browse): the file is opened so that nothing
    is written to it — an archived ledger on a read-only filesystem reads — and one from an older
    schema is migrated in a copy in memory, never on disk. A ledger a newer quotabench wrote is
    refused either way, with one line."""

    def __init__(self, path: Path | str, *, read_only: bool = False):
        self.path = Path(path)
        self.read_only = read_only
        # One connection shared by the writer thread and the event loop: every use is serialized.
        self.lock = threading.RLock()
        self._db: Database | None = None
        with self._guard("open"):
            if read_only:
                self.conn = read_only_connection(self.path)
            else:
                self.conn = writing_connection(self.path)
            newer = _newer(self.conn)
            if newer:
                self.conn.close()
                raise LedgerError(
                    f"ledger {self.path}: written by a newer quotabench (schema {', '.join(newer)} unknown to "
                    f"{_version()}) — upgrade quotabench to read or write it, or pass another --db"
                )
            if not _migrated(self.conn):
                from agent.ledger import schema

                if read_only and schema.pending(self.db):  # an older schema: upgraded in memory only
                    memory = sqlite3.connect(":memory:", check_same_thread=False)
                    self.conn.backup(memory)
                    self.conn.close()
                    self.conn, self._db = memory, None
                if schema.pending(self.db):
                    with self.transaction():  # two processes opening a new file: one migrates, the other waits
                        schema.apply(self.db)
        if not read_only:
            # The last connection to close folds the WAL into the file and removes it: without
            # this a finished run's rows stay in FILE-wal, and a copy of FILE alone holds none.
            _WRITING.add(self)

    @property
    def db(self) -> Database:
        """The sqlite-utils view of the connection (migrations, recovery); imported on first use."""
        if self._db is None:
            from sqlite_utils import Database

            self._db = Database(self.conn, recursive_triggers=False)
        return self._db

    def close(self) -> None:
        """Close the connection (again is a no-op); waits at most a few seconds for a writer."""
        if self.lock.acquire(timeout=5):
            try:
                self.conn.close()
            finally:
                self.lock.release()

    @contextlib.contextmanager
    def _guard(self, what: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise LedgerError(f"ledger {self.path}: cannot {what} ({exc}) — {_fix_for(exc)}") from None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Database]:
        """A write transaction that holds the write lock from its first statement (BEGIN IMMEDIATE),
        so a read-then-write inside it never fails with "database is locked" under another writer."""
        with self._transaction():
            yield self.db

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        with self.lock, self._guard("write"):
            conn = self.conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                if conn.in_transaction:
                    conn.rollback()
                raise
            conn.execute("COMMIT")

    def _write(self, ops: list[Op]) -> None:
        try:
            self._apply(ops)
        except UnicodeEncodeError:  # a lone surrogate from a model: store it replaced, once
            self._apply([_clean_op(op) for op in ops])

    def _apply(self, ops: list[Op]) -> None:
        with self._transaction():
            conn = self.conn
            for op in ops:
                if isinstance(op, Insert):
                    conn.execute(_insert_sql(op.table, tuple(op.row)), _values(op.row.values()))
                elif isinstance(op, InsertAll):
                    columns = tuple(dict.fromkeys(k for row in op.rows for k in row))
                    if op.rows:
                        conn.executemany(
                            _insert_sql(op.table, columns), [_values(row.get(c) for c in columns) for row in op.rows]
                        )
                elif isinstance(op, Update):
                    if not op.fields:
                        continue
                    cursor = conn.execute(
                        _update_sql(op.table, tuple(op.fields)), [*_values(op.fields.values()), op.id]
                    )
                    if op.must_exist and cursor.rowcount == 0:
                        raise LookupError(f"ledger {self.path}: no {op.table} row with id {op.id!r} to update")
                else:
                    raise TypeError(f"not a ledger write: {op!r} — build it with agent.ledger.ops")
        _note_runs(self.path, ops)

    # -- writes ----------------------------------------------------------------------------
    def insert(self, table: str, row: dict[str, Any]) -> None:
        self._write([Insert(table, row)])

    def insert_many(self, table: str, rows: Iterable[dict[str, Any]]) -> None:
        self._write([InsertAll(table, list(rows))])

    def update(self, table: str, pk: Any, fields: dict[str, Any]) -> None:
        self._write([Update(table, pk, fields)])

    def batch(self, ops: Iterable[Op]) -> None:
        """Several typed writes (agent/ledger/ops.py) in one transaction."""
        self._write(list(ops))

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> None:
        """One write statement in its own IMMEDIATE transaction."""
        with self._transaction():
            self.conn.execute(sql, params)

    # -- reads -----------------------------------------------------------------------------
    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[dict[str, Any]]:
        with self.lock, self._guard("read"):
            cursor = self.conn.execute(sql, params)
            keys = [d[0] for d in cursor.description or ()]
            return [dict(zip(keys, row)) for row in cursor]

    def rows(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Row]:
        """Like `query`, as compact `Row`s."""
        with self.lock, self._guard("read"):
            cursor = self.conn.cursor()
            cursor.row_factory = Row
            try:
                return cursor.execute(sql, params).fetchall()
            finally:
                cursor.close()

    @contextlib.contextmanager
    def stream(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Iterator[Iterator[tuple[Any, ...]]]:
        """Rows as plain tuples, fetched from SQLite as the caller reads them: for reads too large
        to hold as dicts (export, the report's calls). The connection is held until the block ends."""
        with self.lock, self._guard("read"):
            cursor = self.conn.execute(sql, params)
            try:
                yield iter(cursor)
            finally:
                cursor.close()

    def runs(self) -> list[dict[str, Any]]:
        return self.query("select * from runs order by created_utc desc")

    def run(self, run_id: str) -> dict[str, Any] | None:
        rows = self.query("select * from runs where id = ?", [run_id])
        return rows[0] if rows else None

    def resolve_run_id(self, prefix: str | None) -> str:
        """A full run id from a prefix, or the newest run when prefix is None."""
        from agent import QuotabenchError

        if prefix is None:
            rows = self.query("select id from runs order by created_utc desc limit 1")
            if not rows:
                raise QuotabenchError(
                    f"ledger {self.path}: holds no runs yet — start one with `quotabench run CONFIG.toml`"
                )
            return str(rows[0]["id"])
        rows = self.query(
            "select id from runs where substr(id, 1, ?) = ? order by created_utc desc", [len(prefix), prefix]
        )
        if len(rows) != 1:
            what = "no run" if not rows else f"{len(rows)} runs"
            raise QuotabenchError(
                f"ledger {self.path}: {what} with id starting {prefix!r} — list runs with `quotabench report --list`"
            )
        return str(rows[0]["id"])

    def arms(self, run_id: str) -> list[dict[str, Any]]:
        return self.query("select * from arms where run_id = ? order by name", [run_id])

    def mutation_scores(self, run_id: str) -> list[dict[str, Any]]:
        """The cached mutation scores the run recorded for its tasks (none if no task was scored)."""
        return self.query("select * from mutation_scores where run_id = ? order by task_id", [run_id])

    def tasks(self, run_id: str) -> list[dict[str, Any]]:
        return self.query("select * from tasks where run_id = ? order by position", [run_id])

    def attempts(self, run_id: str) -> list[dict[str, Any]]:
        return self.query(
            "select a.*, t.language, t.kind, t.position from attempts a join tasks t "
            "on t.run_id = a.run_id and t.task_id = a.task_id where a.run_id = ? "
            "order by t.position, a.arm, a.attempt_no",
            [run_id],
        )

    def calls(self, attempt_id: str) -> list[dict[str, Any]]:
        return self.query("select * from calls where attempt_id = ? order by started_utc, retry_index", [attempt_id])

    def tool_calls(self, attempt_id: str) -> list[dict[str, Any]]:
        return self.query("select * from tool_calls where attempt_id = ? order by rowid", [attempt_id])

    def grade(self, attempt_id: str) -> dict[str, Any] | None:
        rows = self.query("select * from grades where attempt_id = ?", [attempt_id])
        return rows[0] if rows else None
