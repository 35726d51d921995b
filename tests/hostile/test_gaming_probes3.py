"""The third red-team pass (tests/hostile/gaming_probes3.py) through `quotabench validate`: every
gamed answer there keeps the wrong `add` and tries one more way to a pass, in all five
languages. The grader must reject each (`fail` or `tampering`, never `pass`), and nothing else
of a task may break: the untouched workspace fails, the reference and the visible tests pass.

Written as the target of the grader being rebuilt: most of these were accepted by the grader
they were written against (see each entry's comment in gaming_probes3.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.gaming_probes3 import PROBES3, build_probes3_suite
from verifiers.isolation import bwrap_status

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not bwrap_status().usable, reason="needs the bubblewrap sandbox")]
QUOTABENCH = [sys.executable, "-m", "tuiapp.cli"]


def _accepted(stdout: str, tasks: list[str]) -> list[str]:
    """Tasks whose `neg` cell (negative_fails) is FAIL in validate's table: the gamed answer passed."""
    column = None
    found = []
    for line in stdout.splitlines():
        words = line.split()
        if words[:2] == ["task", "language"] and "neg" in words:
            column = words.index("neg")
        elif column is not None and words and words[0] in tasks and len(words) > column and words[column] == "FAIL":
            found.append(words[0])
    return found


def test_validate_accepts_no_gamed_answer_of_the_third_pass(tmp_path: Path) -> None:
    root = tmp_path / "probes3"
    tasks = build_probes3_suite(root)
    assert sorted(tasks) == sorted(PROBES3)
    done = subprocess.run(
        [*QUOTABENCH, "validate", str(root), "--jobs", "2", "-v"], capture_output=True, text=True, timeout=1800
    )
    accepted = _accepted(done.stdout, tasks)
    assert not accepted, f"gamed answers accepted: {accepted}\n{done.stdout}"
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]  # nothing else of a task broke
    assert f"{len(tasks)} of {len(tasks)} tasks gate cleanly" in done.stdout
