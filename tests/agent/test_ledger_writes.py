"""Ledger writes that nothing a model sends can break, and that several writers share."""
from __future__ import annotations

import hashlib
import threading

import pytest

from agent.ledger import Ledger
from agent.ledger.store import ROW_TEXT_CHARS, LedgerError, capped


def test_update_if_tolerates_a_row_that_never_landed(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    ledger.batch([("update_if", "calls", "NEVER-INSERTED", {"status": "lost", "prompt_tokens": 10})])
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
            threading.Event().wait(0.5)   # the write lock is held across this read-then-write

    thread = threading.Thread(target=hold)
    thread.start()
    held.wait()
    second.insert("runs", {"id": "R2", "status": "running"})     # waits on the busy timeout, then writes
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
