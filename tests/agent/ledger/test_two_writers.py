"""Two `quotabench run` processes on one ledger, with a reader (what `browse` and `report` do)
querying it all the while: every write transaction takes the lock up front (BEGIN IMMEDIATE)
and waits its turn, so both runs finish and the reader never breaks a writer."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from agent.endpoints.scripted_server import ScriptedServer
from agent.ledger import Ledger
from agent.metrics.report import build_report
from tests.conftest import FIXTURES, ROOT
from tests.support.engine_helpers import arm_toml, write_config


@pytest.mark.slow
@pytest.mark.parametrize("existing", [True, False])
def test_two_runs_and_a_reader_share_one_ledger(tmp_path, existing):
    db = tmp_path / "shared.sqlite"
    if existing:
        Ledger(db).close()
    with ScriptedServer([FIXTURES / "smoke"], delay_s=0.02) as server:
        configs = []
        for name in ("one", "two"):
            (tmp_path / name).mkdir()
            configs.append(
                write_config(
                    tmp_path / name,
                    [
                        arm_toml("A", "solver", base_url=server.base_url),
                        arm_toml("B", "wrong", base_url=server.base_url),
                    ],
                )
            )
        stop, reads, failures = threading.Event(), [0], []

        def reader() -> None:
            while not stop.is_set():
                try:
                    ledger = Ledger(db) if db.exists() else None
                    if ledger is not None:
                        for run in ledger.runs():
                            ledger.attempts(run["id"])
                            if run["status"] == "finished":
                                build_report(ledger, [run["id"]])
                        ledger.close()
                        reads[0] += 1
                except Exception as exc:  # noqa: BLE001 — collected and asserted below
                    failures.append(repr(exc))
                stop.wait(0.05)

        thread = threading.Thread(target=reader)
        thread.start()
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "tuiapp.cli", "run", str(cfg), "--db", str(db), "--headless"],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for cfg in configs
        ]
        outs = [p.communicate(timeout=300)[0] for p in procs]
        stop.set()
        thread.join()
    for proc, out in zip(procs, outs):
        assert proc.returncode == 0, out
        assert "locked" not in out
    assert not failures, failures[:3]
    assert reads[0] > 0
    ledger = Ledger(db)
    runs = ledger.runs()
    assert len(runs) == 2 and {r["status"] for r in runs} == {"finished"}
    for run in runs:
        assert {(a["arm"], a["task_id"]) for a in ledger.attempts(run["id"]) if a["accepted"]} == {
            ("A", t) for t in ("js-clamp-range", "py-word-count", "rs-saturating-sum")
        }
