"""The figures the README and docs quote are the ones benchmarks/results.json holds: every figure
block reads as benchmarks/all.py renders it from that file (`python benchmarks/all.py --check`)."""

import subprocess
import sys

from tests.conftest import ROOT


def test_every_figure_block_matches_the_results_file():
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "all.py"), "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
