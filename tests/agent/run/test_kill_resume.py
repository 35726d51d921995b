"""SIGKILL `quotabench run` / `resume` anywhere — at named windows and at random moments — then
resume until the run finishes: the figures are the uninterrupted run's (acceptance, QAP, retry
tax, first-try share, tokens/attempt: an attempt lost in a kill is retried under its own number
and kept out of them), every token the arms and attempts report is the sum of their calls rows
(the lost ones' too: lost spend, charged against the cap), nothing is counted twice, and the
killed processes' scratch folders are gone."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest

from agent.endpoints.scripted_server import ScriptedServer
from agent.ledger import Ledger
from agent.manifest import RUNTIME_VERSIONS, runtime_versions
from tests.conftest import FIXTURES, ROOT
from tests.support.engine_helpers import arm_toml, write_config
from verifiers import scratch

pytestmark = pytest.mark.slow


def cli(*args, env=None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tuiapp.cli", *map(str, args)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


# Python tasks: their visible-test output reads the same every run, so the token counts of two
# uninterrupted runs are equal to the token (node's test runner prints its timings).
TASKS = ["py-word-count", "py-tail-lines", "py-free-slots"]
FIGURES = ("acceptance", "qap", "retry_tax", "first_try_share", "tokens_per_attempt", "n_attempts", "total_tokens")


@pytest.fixture(scope="module")
def server():
    with ScriptedServer([FIXTURES / "smoke", FIXTURES / "core"], delay_s=0.1) as s:
        yield s


@pytest.fixture(scope="module")
def clean(tmp_path_factory, server):
    folder = tmp_path_factory.mktemp("clean")
    cfg = _config(folder, server)
    proc = cli("run", cfg, "--db", folder / "l.sqlite", "--headless")
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out
    ledger = Ledger(folder / "l.sqlite")
    run_id = ledger.resolve_run_id(None)
    return cfg, (_accepted(ledger, run_id), figures(ledger, run_id))


def _config(folder, server):
    """A passes at once; B fails each task once and passes its retry (retry_seed): first tries,
    retries and the retry tax all have something to measure."""
    return write_config(
        folder,
        [
            arm_toml("A", "solver", base_url=server.base_url),
            arm_toml("B", "second-passes", base_url=server.base_url, extra="retry_seed = true\n"),
        ],
        suites=("smoke", "core"),
        tasks=TASKS,
        max_attempts=2,
    )


def figures(ledger: Ledger, run_id: str) -> dict:
    """Each arm's figures as the report states them."""
    from agent.metrics.report import build_report

    arms = build_report(ledger, [run_id], with_cost=False, resamples=0)["runs"][0]["arms"]
    return {a["metrics"]["name"]: {k: a["metrics"][k] for k in FIGURES} for a in arms}


def _accepted(ledger: Ledger, run_id: str) -> set:
    return {(r["arm"], r["task_id"]) for r in ledger.attempts(run_id) if r["accepted"]}


def _status(db) -> str | None:
    try:
        runs = Ledger(db).runs()
    except Exception:  # noqa: BLE001 — not created yet
        return None
    return runs[0]["status"] if runs else None


def _resume_until_finished(db, kills: list[int], rng: random.Random | None = None, max_kills: int = 0) -> None:
    for _ in range(12):
        if _status(db) == "finished":
            return
        proc = cli("resume", "--db", db)
        if rng is not None and len(kills) < max_kills:
            time.sleep(rng.uniform(0.5, 3.0))
            if proc.poll() is None:
                kills.append(proc.pid)
                proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode in (0, -signal.SIGKILL), out
        assert "Traceback" not in out, out
    assert _status(db) == "finished"


def _check(db, expected: tuple[set, dict], killed: list[int]) -> None:
    expected_accepted, expected_figures = expected
    ledger = Ledger(db)
    run_id = ledger.resolve_run_id(None)
    assert ledger.run(run_id)["status"] == "finished"
    run = ledger.run(run_id)
    assert {key: run[key] for key in RUNTIME_VERSIONS} == runtime_versions()  # even if killed before they came
    assert _accepted(ledger, run_id) == expected_accepted
    assert figures(ledger, run_id) == expected_figures  # figure by figure, the uninterrupted run's
    rows = ledger.attempts(run_id)
    assert max(r["attempt_no"] for r in rows) <= 2  # a lost attempt's retry keeps its number
    keys = [
        (r["arm"], r["task_id"], r["attempt_no"]) for r in rows if r["failure_class"] not in ("aborted", "censored")
    ]
    assert len(keys) == len(set(keys))
    assert all(r["status"] == "done" for r in rows)
    counted: dict = {}
    for r in rows:
        if r["failure_class"] not in ("aborted", "censored"):
            counted[(r["arm"], r["task_id"])] = counted.get((r["arm"], r["task_id"]), 0) + 1
    assert max(counted.values()) <= 2  # no attempt counted twice
    assert not ledger.query("select id from calls where status = 'in_flight'")
    for r in rows:
        summed = ledger.query(
            "select coalesce(sum(prompt_tokens + completion_tokens), 0) n from calls where attempt_id = ?", [r["id"]]
        )[0]["n"]
        assert r["total_tokens"] == summed, r
    for arm in ledger.arms(run_id):
        summed = ledger.query(
            "select coalesce(sum(prompt_tokens + completion_tokens), 0) n from calls "
            "where run_id = ? and arm = ? and kind = 'attempt'",
            [run_id, arm["name"]],
        )[0]["n"]
        assert arm["tokens_used"] == summed, arm
        assert arm["state"] == "finished"
    assert len(
        ledger.query("select id from grades g where attempt_id in (select id from attempts where run_id = ?)", [run_id])
    ) == len([r for r in rows if r["verdict"]])
    leftovers = [p.name for p in scratch.root().iterdir() if p.name.split(".")[0] in {str(k) for k in killed}]
    assert not leftovers  # cleaned on the next start


@pytest.mark.parametrize("point", ["run_row", "call_row:3", "attempt_ended:2", "graded:2", "graded:5"])
def test_kill_at_a_named_window_then_resume(tmp_path, clean, point):
    cfg, expected = clean
    db = tmp_path / "l.sqlite"
    proc = cli("run", cfg, "--db", db, "--headless", env=dict(os.environ, QUOTABENCH_KILL_AT=point))
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL, out
    assert _status(db) == "running"
    if point == "run_row":
        assert not Ledger(db).query("select id from arms")  # the window: a run without arms rows
    killed = [proc.pid]
    _resume_until_finished(db, killed)
    _check(db, expected, killed)


def test_kill_loop_at_random_moments_then_resume(tmp_path, clean):
    cfg, expected = clean
    rng = random.Random(12)
    db = tmp_path / "l.sqlite"
    proc = cli("run", cfg, "--db", db, "--headless")
    deadline = time.monotonic() + 120
    while _status(db) is None and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # the random moment is counted from the run's start, not the process's (load)
    time.sleep(rng.uniform(1.0, 3.0))
    killed = [proc.pid]
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    _resume_until_finished(db, killed, rng, max_kills=4)
    _check(db, expected, killed)


def test_a_ledger_graded_before_the_attempt_update_resumes(tmp_path, clean):
    """Ledgers written before grade+attempt became one transaction can hold a grade for an
    attempt still `ended`: resume must take the class from it, not insert a second grade."""
    cfg, expected = clean
    db = tmp_path / "l.sqlite"
    proc = cli("run", cfg, "--db", db, "--headless")
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out
    ledger = Ledger(db)
    run_id = ledger.resolve_run_id(None)
    graded = ledger.query(
        "select a.id from attempts a join grades g on g.attempt_id = a.id where a.run_id = ?", [run_id]
    )
    for row in graded[:3]:
        ledger.update("attempts", row["id"], {"status": "ended", "failure_class": None, "accepted": 0, "verdict": None})
    ledger.update("runs", run_id, {"status": "running"})
    _resume_until_finished(db, [])
    _check(db, expected, [])


def test_a_run_killed_with_9_is_this_folders_last_ledger_and_its_hints_name_it(tmp_path, clean):
    cfg, expected = clean
    folder = tmp_path / "work"
    folder.mkdir()
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "state"))
    older = folder / "older.sqlite"
    Ledger(older).close()
    subprocess.run(
        [sys.executable, "-c", f"from tuiapp.cli.ledgers import remember; remember({str(older)!r})"],
        cwd=folder,
        env=env,
        check=True,
    )

    def quotabench(*args, **extra):
        return subprocess.run(
            [sys.executable, "-m", "tuiapp.cli", *map(str, args)],
            cwd=folder,
            env=dict(env, PYTHONPATH=str(ROOT), **extra),
            capture_output=True,
            text=True,
            timeout=300,
        )

    killed = quotabench("run", cfg, "--db", "kill.sqlite", "--headless", QUOTABENCH_KILL_AT="graded:2")
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    run_id = Ledger(folder / "kill.sqlite").resolve_run_id(None)
    listed = quotabench("report", "--list", "--db", "kill.sqlite")
    assert f"`quotabench resume {run_id[:10]} --db kill.sqlite` finishes it" in listed.stdout, listed.stdout
    # exactly what a user types next, bare, in the same folder: the killed run's ledger opens
    resumed = quotabench("resume", run_id[:10])
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "reading kill.sqlite, the ledger of the last run started here" in resumed.stderr
    assert _status(folder / "kill.sqlite") == "finished"
