"""Every script benchmarks/all.py runs still runs, at its smallest: in a fresh process, with
`--json` to a temporary file, it exits 0 or 1 (1: a target missed, which a busy machine may
cause) without a traceback, and its figures hold every key the README's blocks read from it
(benchmarks/readme_figures.figures_read, with these figures in place of the script's last ones).
What is measured at this size means nothing; that it is there is the point."""

import importlib.util
import json
import subprocess
import sys

import pytest

from benchmarks.all import DOCS, RESULTS, SCRIPTS
from benchmarks.readme_figures import figures_read
from tests.conftest import ROOT

NEEDS_EXTRA = {"executor": "ray"}  # script -> the optional extra's module it imports

SMALLEST = {  # script: the arguments that still take every path through it, as quickly as it goes
    "engine": ["--attempts", "2", "--turns", "3", "--rows", "50", "--repeats", "1"],
    "report": ["--sizes", "1000", "--runs", "1"],
    "export": ["--attempts", "1000", "--runs", "1"],
    "memory": ["--small", "1", "--large", "2"],
    "mechanics": ["--repeats", "1"],
    "sandbox": ["--runs", "3", "--grades", "1"],
    "executor": ["--runs", "3", "--grades", "2"],
    "tui": ["--rate", "500", "--size", "80x24", "--seconds", "1", "--repeats", "1"],
    "browse": ["--size", "80x24", "--repeats", "1"],
}


@pytest.mark.slow
@pytest.mark.parametrize("name", [*SCRIPTS, *(set(SMALLEST) - set(SCRIPTS))])
def test_the_script_runs_and_writes_every_figure_the_docs_read(name, tmp_path):
    assert name in SCRIPTS, f"{name!r} is not among benchmarks/all.py's scripts: remove it from SMALLEST"
    if name in NEEDS_EXTRA and importlib.util.find_spec(NEEDS_EXTRA[name]) is None:
        pytest.skip(f"{SCRIPTS[name][0]} needs the [{NEEDS_EXTRA[name]}] extra, which is not installed")
    assert name in SMALLEST, f"benchmarks/all.py runs {name!r}: add its smallest arguments to SMALLEST"
    out = tmp_path / "figures.json"
    docs = {path: path.read_bytes() for path in (RESULTS, *DOCS)}
    done = subprocess.run(
        [sys.executable, SCRIPTS[name][0], *SMALLEST[name], "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1) and "Traceback (most recent call last)" not in done.stderr, (
        f"{SCRIPTS[name][0]} exited {done.returncode}:\n{done.stderr[-6000:]}"
    )
    assert out.exists(), f"{SCRIPTS[name][0]} exited {done.returncode} without writing --json"
    assert {path: path.read_bytes() for path in docs} == docs, "a script wrote the results file or the docs"
    figures = json.loads(out.read_text())
    results = json.loads(RESULTS.read_text())
    results["scripts"][name] = results["scripts"].get(name, {}) | figures
    read = figures_read(results)[name]
    assert read, f"no figure block reads any of {name}'s figures: {sorted(figures['figures'])}"
    missing = sorted(read - figures["figures"].keys())
    assert not missing, f"{SCRIPTS[name][0]} no longer writes {missing}, which the docs' figure blocks read"
