"""A ledger as a user hands it over: one from a newer quotabench is refused (read and write), an
archived one on a read-only filesystem is reported, exported and listed (an older schema too,
upgraded in memory only), and every path that does not work is one line and a non-zero exit —
never a traceback or a crash log."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys

import pytest
from sqlite_utils import Database

from agent.ledger import Ledger
from agent.ledger.schema import migrations
from tests.conftest import ROOT
from tests.support.engine_helpers import arm_toml, run_sync, write_config
from tuiapp.cli import main


def cli(*args: object, wrap: list[str] | None = None) -> subprocess.CompletedProcess:
    argv = [*(wrap or []), sys.executable, "-m", "tuiapp.cli", *map(str, args)]
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def one_line(done: subprocess.CompletedProcess | tuple[int, str], code: int | None = None) -> str:
    rc, err = (done.returncode, done.stderr) if isinstance(done, subprocess.CompletedProcess) else done
    assert rc != 0 and (code is None or rc == code), (rc, err)
    assert err.count("\n") == 1 and err.startswith("quotabench: "), err
    assert "Traceback" not in err and "crashed" not in err, err
    return err


@pytest.fixture(scope="module")
def run_ledger(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ledger")
    cfg = write_config(folder, [arm_toml("A", "solver")], tasks=["py-word-count"], max_attempts=1)
    _, run_id, _ = run_sync(cfg, folder / "l.sqlite")
    conn = sqlite3.connect(folder / "l.sqlite")
    conn.execute("pragma wal_checkpoint(TRUNCATE)")  # the whole ledger in its one file: copies are whole
    conn.close()
    return folder / "l.sqlite", cfg, run_id


def _newer(path) -> None:
    conn = sqlite3.connect(path)
    conn.execute(
        "insert into _sqlite_migrations (migration_set, name, applied_at) values ('quotabench', 'm999_from_the_future', '')"
    )
    conn.commit()
    conn.close()


def test_a_ledger_from_a_newer_quotabench_is_refused_for_reading_and_writing(tmp_path, run_ledger):
    db = tmp_path / "newer.sqlite"
    shutil.copy(run_ledger[0], db)
    _newer(db)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    for args in (["report", "--db", db], ["export", "--db", db], ["report", "--list", "--db", db]):
        err = one_line(cli(*args), 1)
        assert "written by a newer quotabench (schema m999_from_the_future unknown" in err and "upgrade" in err
    err = one_line(cli("run", run_ledger[1], "--db", db, "--headless"), 1)
    assert "m999_from_the_future" in err
    err = one_line(cli("preflight", run_ledger[1], "--db", db), 1)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before  # nothing written


def _old_schema(path) -> None:
    """A ledger as the schema before the newest migration left it, holding one finished run."""
    old = Database(sqlite3.connect(path))
    migrations.apply(old, stop_before="m021_run_process_and_broken_tasks")
    old["runs"].insert({"id": "01OLDRUN0000000000000000000", "status": "finished", "manifest_sha256": "m" * 64})
    old.conn.commit()
    old.conn.close()


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap for a read-only mount")
def test_an_archived_ledger_on_a_read_only_filesystem_reads(tmp_path, run_ledger):
    archive = tmp_path / "archive"
    archive.mkdir()
    shutil.copy(run_ledger[0], archive / "l.sqlite")
    _old_schema(archive / "old.sqlite")
    sums = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in archive.iterdir()}
    ro = ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(archive), str(archive)]
    probe = subprocess.run([*ro, "touch", str(archive / "x")], capture_output=True, text=True)
    assert probe.returncode != 0 and "Read-only file system" in probe.stderr  # the mount is read-only

    report = cli("report", "--db", archive / "l.sqlite", wrap=ro)
    assert report.returncode == 0, report.stderr
    assert f"Run {run_ledger[2]} (finished" in report.stdout and "acceptance" in report.stdout
    listing = cli("report", "--list", "--db", archive / "l.sqlite", wrap=ro)
    assert listing.returncode == 0 and run_ledger[2] in listing.stdout and "finished" in listing.stdout
    export = cli("export", "--db", archive / "l.sqlite", "--format", "jsonl", wrap=ro)
    assert export.returncode == 0 and export.stdout.count("\n") == 1 and "exported 1 attempts" in export.stderr
    old = cli("report", "--list", "--db", archive / "old.sqlite", wrap=ro)  # upgraded in memory only
    assert old.returncode == 0 and "01OLDRUN" in old.stdout, old.stderr
    written = one_line(cli("run", run_ledger[1], "--db", archive / "l.sqlite", "--headless", wrap=ro))
    assert "l.sqlite" in written
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in archive.iterdir()} == sums


def test_read_commands_open_the_ledger_read_only(tmp_path, run_ledger):
    db = tmp_path / "l.sqlite"
    shutil.copy(run_ledger[0], db)
    ledger = Ledger(db, read_only=True)
    assert ledger.query("select count(*) n from runs")[0]["n"] == 1
    with pytest.raises(Exception, match="readonly"):
        ledger.execute("delete from runs")
    _old_schema(tmp_path / "old.sqlite")
    before = (tmp_path / "old.sqlite").read_bytes()
    old = Ledger(tmp_path / "old.sqlite", read_only=True)
    assert "process_json" in {r["name"] for r in old.query("pragma table_info(runs)")}  # in memory
    assert (tmp_path / "old.sqlite").read_bytes() == before


def test_every_path_that_does_not_work_is_one_line(tmp_path, run_ledger, capsys):
    db, cfg, _ = run_ledger
    folder = tmp_path / "a-folder"
    folder.mkdir()
    a_file = tmp_path / "a-file.txt"
    a_file.write_text("x")
    missing = tmp_path / "no" / "such"
    cases = [
        ("export", "--db", db, "-o", missing / "x.csv"),
        ("export", "--db", db, "-o", folder),
        ("export", "--db", db, "-o", a_file / "x.csv"),
        ("report", "--db", folder),
        ("report", "--db", missing / "l.sqlite"),
        ("report", "--config", missing / "run.toml"),
        ("report", "--db", a_file),
        ("resume", "--db", missing / "l.sqlite"),
        ("run", cfg, "--db", missing / "l.sqlite", "--headless"),
        ("run", cfg, "--db", folder, "--headless"),
        ("run", missing / "run.toml", "--headless"),
        ("run", folder, "--headless"),
        ("preflight", cfg, "--db", missing / "l.sqlite"),
        ("validate", missing),
        ("validate", a_file),
        ("validate", folder),
        ("validate", "--jobs", "0", ROOT / "fixtures" / "smoke"),
        ("import", "humaneval", a_file / "dest", "--limit", "1"),
    ]
    for args in cases:
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse: usage, then one line
            code = exc.code
        err = capsys.readouterr().err
        last = err.strip().splitlines()[-1] if err.strip() else ""
        assert code not in (0, None), args
        assert "Traceback" not in err and "crashed" not in err and "crash-" not in err, (args, err)
        assert last.startswith(("quotabench: ", "quotabench validate: error:")), (args, err)
    assert not missing.exists()


def test_export_to_a_missing_folder_through_the_shell(tmp_path, run_ledger):
    err = one_line(cli("export", "--db", run_ledger[0], "-o", tmp_path / "no" / "dir" / "x.csv"), 2)
    assert "cannot write it (No such file or directory)" in err


def test_report_on_a_run_without_prices_answers_in_every_format(tmp_path):
    arm = arm_toml("A", "solver").replace("price = { input_per_mtok = 1.0, output_per_mtok = 2.0 }\n", "")
    cfg = write_config(tmp_path, [arm], tasks=["py-word-count"], max_attempts=1)
    assert "price" not in cfg.read_text()
    db = tmp_path / "l.sqlite"
    done = cli("run", cfg, "--db", db, "--headless")
    assert done.returncode == 0, done.stderr
    for out in (done.stdout, cli("report", "--db", db).stdout):  # the end-of-run report, and `report`
        table = out.split("cost columns left out")[0]
        assert "CPSP" not in table and "no price" not in table.split("published with")[0]
        assert "cost columns left out (CPSP, $/task, $/solved, the cost lines): run " in out
        assert "arm A: no price — add a price table" in out
    for fmt in ("--markdown", "--json"):
        other = cli("report", "--db", db, fmt)
        assert other.returncode == 0 and not other.stderr.strip() and "no price" in other.stdout, other.stderr
