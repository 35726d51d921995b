"""The report of a fixed ledger, byte for byte, in every format: a refactor that moves where the
report reads or computes must not change what it prints. Regenerate the files only for a change
meant to alter the report: `python -m tests.agent.metrics.test_report_golden`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fixed_ledger import RUN, build_fixed_ledger

GOLDEN = Path(__file__).parent / "golden"
FORMATS = {"json": ["--json"], "text": [], "markdown": ["--markdown"]}


def report(db: Path, flags: list[str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", "report", "--db", str(db), RUN, *flags],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture(scope="module")
def fixed_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("golden") / "fixed.sqlite"
    build_fixed_ledger(db)
    return db


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_the_report_of_a_fixed_ledger_is_unchanged(fixed_db, fmt):
    assert report(fixed_db, FORMATS[fmt]) == (GOLDEN / f"fixed_report.{fmt}").read_text()


if __name__ == "__main__":
    import tempfile

    db = Path(tempfile.mkdtemp()) / "fixed.sqlite"
    build_fixed_ledger(db)
    for fmt, flags in FORMATS.items():
        (GOLDEN / f"fixed_report.{fmt}").write_text(report(db, flags))
