"""Processes opening one ledger at the same moment: each waits its turn, as a write does, and
none fails with "database is locked" (two runs started together on a new --db did, half the
time: SQLite's switch to WAL takes its lock without waiting)."""

from __future__ import annotations

import multiprocessing

import pytest

from agent.ledger import Ledger


def _open(path: str, start: multiprocessing.synchronize.Barrier, out: multiprocessing.Queue) -> None:
    start.wait()
    try:
        Ledger(path).close()
        out.put("ok")
    except Exception as exc:  # noqa: BLE001 — sent to the test, which names it
        out.put(repr(exc))


@pytest.mark.parametrize("existing", [False, True])
def test_processes_opening_one_ledger_at_once_all_open_it(tmp_path, existing):
    forked = multiprocessing.get_context("fork")
    results = []
    for round_no in range(12):
        path = tmp_path / f"shared-{round_no}.sqlite"
        if existing:
            Ledger(path).close()
        start, out = forked.Barrier(3), forked.Queue()
        procs = [forked.Process(target=_open, args=(str(path), start, out)) for _ in range(3)]
        for proc in procs:
            proc.start()
        results += [out.get(timeout=120) for _ in procs]
        for proc in procs:
            proc.join(timeout=120)
    assert [r for r in results if r != "ok"] == []
