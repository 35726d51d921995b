"""What a run does with the task folders it is given: a folder that will not load is left out,
said on screen (the headless printer's line; a notification in the live view) and named in the
report; a foreign suite's own task kind is kept as given and the report groups by it. A real
headless run on the scripted server through the CLI, a real ledger."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from agent.ledger import Ledger
from tests.conftest import FIXTURES, ROOT
from tests.support.engine_helpers import arm_toml


def mixed_suite(root):
    """py-word-count as shipped, a copy of it of kind `concurrency`, and a folder without hidden/."""
    suite = root / "suite"
    shutil.copytree(FIXTURES / "smoke" / "py-word-count", suite / "py-word-count")
    shutil.copytree(FIXTURES / "smoke" / "py-word-count", suite / "py-concurrent")
    toml = suite / "py-concurrent" / "task.toml"
    text = toml.read_text().replace('id = "py-word-count"', 'id = "py-concurrent"')
    toml.write_text(text.replace('kind = "boundary"', 'kind = "concurrency"'))
    shutil.copytree(FIXTURES / "smoke" / "py-word-count", suite / "py-broken")
    shutil.rmtree(suite / "py-broken" / "hidden")
    (suite / "py-broken" / "task.toml").write_text(text.replace('"py-concurrent"', '"py-broken"'))
    return suite


def test_a_broken_folder_is_said_and_reported_and_foreign_kinds_are_kept(tmp_path):
    suite = mixed_suite(tmp_path)
    assert 'kind = "concurrency"' in (suite / "py-concurrent" / "task.toml").read_text()
    cfg = tmp_path / "run.toml"
    cfg.write_text(
        f'[run]\nsuites = ["{suite}"]\nmax_attempts = 1\n'
        + arm_toml("A", "solver")
        + arm_toml("B", "unparseable", protocol="text")
    )
    db = tmp_path / "l.sqlite"
    done = subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", "run", str(cfg), "--db", str(db), "--headless"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    said = [line for line in done.stdout.splitlines() if "skipping broken task" in line]
    assert said == [
        f"warning: skipping broken task: task {suite / 'py-broken'}: hidden/ is missing — add the hidden/ folder (see docs/tasks.md)"
    ]

    ledger = Ledger(db)
    (run,) = ledger.runs()
    assert json.loads(run["broken_tasks_json"]) == [
        {
            "path": str(suite / "py-broken"),
            "problem": "hidden/ is missing",
            "fix": "add the hidden/ folder (see docs/tasks.md)",
        }
    ]
    kinds = {t["task_id"]: t["kind"] for t in ledger.tasks(run["id"])}
    assert kinds == {"py-concurrent": "concurrency", "py-word-count": "boundary"}

    report = subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", "report", "--db", str(db)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert report.returncode == 0, report.stderr
    for text in (report.stdout, done.stdout):  # the report, and the one printed at the end of the run
        assert "task folders left out of this run (1, not in n): they would not load" in text
        assert f"  {suite / 'py-broken'}: hidden/ is missing — add the hidden/ folder (see docs/tasks.md)" in text
        assert "accepted by task kind (accepted / decided tasks):" in text
        assert "  concurrency (1 task): A 1/1, B 0/1" in text and "  boundary (1 task): A 1/1, B 0/1" in text
        assert "n=2 tasks" in text


def test_a_workspace_link_to_a_folder_is_no_file_for_the_scripted_models(tmp_path):
    """A workspace symlink to a directory (a data folder shared between tasks): the scripted
    server read it as a file, printed a traceback per request and left every attempt
    harness_error, while validate passed the task."""
    suite = tmp_path / "suite"
    shutil.copytree(FIXTURES / "smoke" / "py-word-count", suite / "py-word-count")
    (suite / "py-word-count" / "shared").mkdir()
    (suite / "py-word-count" / "shared" / "words.txt").write_text("apple banana\n")
    (suite / "py-word-count" / "workspace" / "data").symlink_to("../shared", target_is_directory=True)
    cfg = tmp_path / "run.toml"
    cfg.write_text(
        f'[run]\nsuites = ["{suite}"]\nmax_attempts = 1\n' + arm_toml("A", "solver") + arm_toml("B", "wrong")
    )
    done = subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", "run", str(cfg), "--db", str(tmp_path / "l.sqlite"), "--headless"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-3000:]
    classes = {
        a["arm"]: a["failure_class"]
        for a in Ledger(tmp_path / "l.sqlite").query(
            "select r.name as arm, a.failure_class from attempts a join arms r on r.id = a.arm_id"
        )
    }
    assert classes == {"A": "accepted", "B": "reasoning"}, (classes, done.stderr[-2000:])
