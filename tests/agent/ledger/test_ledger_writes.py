"""Ledger writes that nothing a model sends can break, and that several writers share."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import threading

import anyio
import pytest

from agent.ledger import Ledger
from agent.ledger.ops import Insert, Update
from agent.ledger.store import ROW_TEXT_CHARS, LedgerError, capped
from agent.ledger.writer import AsyncLedger


def test_update_if_tolerates_a_row_that_never_landed(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    ledger.batch([Update("calls", "NEVER-INSERTED", {"status": "lost", "prompt_tokens": 10}, must_exist=False)])
    assert not ledger.query("select * from calls")


def test_lone_surrogates_are_stored_replaced_not_raised(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    ledger.insert("runs", {"id": "R1", "status": "running", "config_path": "bad \ud800 path"})
    assert ledger.run("R1")["config_path"] == "bad ? path"


def test_long_text_keeps_its_head_length_and_sha256():
    text = "x" * (ROW_TEXT_CHARS + 10)
    kept = capped(text)
    assert kept.startswith("x" * ROW_TEXT_CHARS) and len(kept) < ROW_TEXT_CHARS + 200
    assert f"{len(text)} characters" in kept and hashlib.sha256(text.encode()).hexdigest() in kept
    assert capped("short") == "short" and capped(None) is None


def test_a_writer_waits_for_another_instead_of_failing(tmp_path):
    path = tmp_path / "l.sqlite"
    first, second = Ledger(path), Ledger(path)
    held, done = threading.Event(), []

    def hold() -> None:
        with first.transaction() as db:
            db["runs"].insert({"id": "R1", "status": "running"})
            held.set()
            threading.Event().wait(0.5)  # the write lock is held across this read-then-write

    thread = threading.Thread(target=hold)
    thread.start()
    held.wait()
    second.insert("runs", {"id": "R2", "status": "running"})  # waits on the busy timeout, then writes
    done.append(True)
    thread.join()
    assert {r["id"] for r in second.runs()} == {"R1", "R2"} and done


def test_a_damaged_file_is_a_ledger_error_with_a_fix(tmp_path):
    path = tmp_path / "l.sqlite"
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000)
    with pytest.raises(LedgerError) as caught:
        Ledger(path)
    assert str(path) in str(caught.value) and " — " in str(caught.value) and "\n" not in str(caught.value)
    assert caught.value.exit_code == 1


# -- the writer thread (issue 15: one awaited write per model call) ------------------------------


def _attempt(ledger: Ledger) -> None:
    ledger.batch(
        [
            Insert("runs", {"id": "R", "status": "running"}),
            Insert("arms", {"id": "A", "run_id": "R", "name": "A"}),
            Insert(
                "attempts",
                {"id": "T", "run_id": "R", "arm_id": "A", "arm": "A", "task_id": "t", "attempt_no": 1, "calls": 0},
            ),
        ]
    )


@pytest.mark.anyio
async def test_queued_writes_commit_in_order_before_the_next_awaited_write(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    _attempt(ledger)
    writer = AsyncLedger(ledger)
    for n in range(1, 201):
        writer.batch_queued(
            [
                Insert("calls", {"id": f"C{n:03d}", "attempt_id": "T", "turn": n}),
                Update("attempts", "T", {"calls": n}),
            ]
        )
    await writer.insert("calls", {"id": "LAST", "attempt_id": "T", "turn": 201})  # returns once all before it are in
    assert ledger.query("select calls from attempts")[0]["calls"] == 200
    assert [r["id"] for r in ledger.query("select id from calls order by rowid")] == [
        f"C{n:03d}" for n in range(1, 201)
    ] + ["LAST"]


@pytest.mark.anyio
async def test_a_queued_write_that_fails_is_raised_by_the_next_awaited_write_and_alone(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    _attempt(ledger)
    writer = AsyncLedger(ledger)
    writer.batch_queued([Insert("calls", {"id": "GOOD1", "attempt_id": "T"})])
    writer.batch_queued([Insert("calls", {"id": "BAD", "attempt_id": "T", "no_such_column": 1})])
    writer.batch_queued([Insert("calls", {"id": "GOOD2", "attempt_id": "T"})])
    with pytest.raises(LedgerError, match="no_such_column"):
        await writer.flush()
    # written together or not, the failing write took only itself down
    assert {r["id"] for r in ledger.query("select id from calls")} == {"GOOD1", "GOOD2"}
    await writer.flush()  # the error was reported once


@pytest.mark.anyio
async def test_an_awaited_write_whose_task_is_cancelled_still_lands(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    _attempt(ledger)
    writer = AsyncLedger(ledger)
    reached_after_the_write = False
    with anyio.CancelScope() as scope:
        scope.cancel()
        await writer.insert("calls", {"id": "IN-FLIGHT", "attempt_id": "T", "status": "in_flight"})
        reached_after_the_write = True  # like the in-flight registration right after the insert
        await anyio.lowlevel.checkpoint()  # the cancellation lands here, after the write
    assert reached_after_the_write and scope.cancelled_caught
    assert ledger.query("select status from calls")[0]["status"] == "in_flight"


def test_a_process_that_ends_normally_commits_what_it_queued(tmp_path):
    path = tmp_path / "l.sqlite"
    _attempt(Ledger(path))
    code = (
        f"import anyio; from agent.ledger import Ledger; from agent.ledger.ops import Insert\n"
        f"from agent.ledger.writer import AsyncLedger\n"
        f"async def main():\n"
        f"    writer = AsyncLedger(Ledger({str(path)!r}))\n"
        f"    for n in range(300):\n"
        f"        writer.batch_queued([Insert('calls', {{'id': f'C{{n}}', 'attempt_id': 'T'}})])\n"
        f"anyio.run(main)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    assert Ledger(path).query("select count(*) as n from calls")[0]["n"] == 300


def test_update_of_a_missing_row_is_an_error_and_insert_many_fills_missing_keys(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    with pytest.raises(LookupError, match="no runs row with id 'NOPE'"):
        ledger.update("runs", "NOPE", {"status": "finished"})
    ledger.insert_many("runs", [{"id": "R1", "status": "running"}, {"id": "R2", "host": "h"}])
    assert ledger.query("select id, status, host from runs order by id") == [
        {"id": "R1", "status": "running", "host": None},
        {"id": "R2", "status": None, "host": "h"},
    ]


def test_the_migrations_read_from_schema_py_are_the_registered_ones(tmp_path):
    # Ledger() skips sqlite-utils when every migration named in schema.py's text is applied:
    # the text must name exactly the migrations sqlite-utils would apply.
    import sqlite3

    from sqlite_utils import Database

    from agent.ledger import schema
    from agent.ledger.store import _migration_names

    registered = {m.name for m in schema.migrations.pending(Database(sqlite3.connect(":memory:")))}
    assert _migration_names() == registered and len(registered) >= 11
    ledger = Ledger(tmp_path / "l.sqlite")
    assert not schema.pending(ledger.db)  # a new file is migrated on open
