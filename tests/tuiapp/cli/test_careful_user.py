"""What a careful user meets (issue 41, item 5): a config saved with a byte-order mark loads,
one report form at a time, `report --list` with run ids is refused, a shell builtin is no tool
to install."""

from __future__ import annotations

import subprocess
import sys

from agent.config import load_config
from tests.conftest import ROOT
from tests.support.verifier_tasks import make_task
from verifiers.runtimes import command_word, missing_runtimes
from verifiers.tasks import load_task

CONFIG = """
[run]
suites = ["{suite}"]

[[arms]]
name = "A"
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "m"
"""


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_a_config_with_a_byte_order_mark_loads(tmp_path):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + CONFIG.format(suite=ROOT / "fixtures" / "smoke").encode())
    assert [a.name for a in load_config(path).arms] == ["A"]


def test_one_report_form_at_a_time(tmp_path):
    done = _cli("report", "--json", "--markdown", "--db", tmp_path / "none.sqlite")
    assert done.returncode == 2 and "not allowed with argument" in done.stderr and not done.stdout


def test_report_list_with_run_ids_is_refused_in_one_line(tmp_path):
    done = _cli("report", "--list", "01ABC", "--db", tmp_path / "none.sqlite")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "report --list lists every run of the ledger: drop 01ABC" in done.stderr


def test_a_shell_builtin_command_needs_nothing_installed(tmp_path):
    assert not command_word("exit") and not command_word(":")
    root = make_task(
        tmp_path,
        id="sh-exit",
        language="shell",
        workspace={"a.sh": "echo hi\n"},
        hidden={"test_h.py": "def test_x():\n    pass\n"},
        reference={"a.sh": "echo hello\n"},
        visible_cmd="exit 0",
        hidden_cmd="exit 0",
    )
    missing, per_task = missing_runtimes([load_task(root)])
    assert not [m for m in missing if m.tool == "exit"] and "exit" not in per_task.get("sh-exit", "")
