"""An endpoint that fails every call is no measurement (issue 41 item 1): preflight refuses it,
a run that goes anyway exits 1 naming the arm, and the report leaves its unserved tasks out of
pairing and calls the arm not comparable, as seed 002 does with a censored one."""

from __future__ import annotations

import json

import pytest

from tests.support.engine_helpers import arm_toml, write_config
from tests.support.hostile_server import HostileServer
from tests.tuiapp.cli.test_cli import cli

TASKS = ["py-word-count", "js-clamp-range"]


@pytest.mark.parametrize("model", ["dead_500", "dead_no_choices"])
def test_preflight_refuses_an_endpoint_that_fails_every_probe(tmp_path, model):
    with HostileServer() as server:
        arms = [arm_toml("A", "solver"), arm_toml("B", model, base_url=server.base_url, max_retries=1)]
        cfg = write_config(tmp_path, arms, tasks=TASKS, max_attempts=1)
        done = cli("run", str(cfg), "--db", str(tmp_path / "l.sqlite"), cwd=tmp_path, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "B" in done.stderr and "fails every request" in done.stderr
    assert "protocol" not in done.stderr  # the failure is the endpoint, not its tool calls


def test_a_run_against_a_dead_endpoint_exits_1_and_the_report_compares_nothing_on_it(tmp_path):
    db = tmp_path / "l.sqlite"
    with HostileServer() as server:
        arms = [arm_toml("A", "solver"), arm_toml("B", "dead_500", base_url=server.base_url, max_retries=1)]
        cfg = write_config(tmp_path, arms, tasks=TASKS, max_attempts=1)
        done = cli("run", str(cfg), "--db", str(db), "--no-preflight", cwd=tmp_path, timeout=300)
    assert done.returncode == 1, done.stderr
    (line,) = [x for x in done.stderr.splitlines() if "never answered" in x]
    assert "arm B's endpoint never answered" in line and "HTTP 500" in line and "resume" not in line
    report = cli("report", "--db", str(db), "--json", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    (section,) = json.loads(report.stdout)["runs"]
    metrics = {a["metrics"]["name"]: a["metrics"] for a in section["arms"]}
    b = metrics["B"]
    assert (b["comparable"], b["decided"], sorted(b["unserved"])) == (False, 0, sorted(TASKS))
    assert b["not_comparable"] == "endpoint failed: 2 of 2 tasks never served (harness_error)"
    assert b["acceptance"] is None  # not 0.00: nothing was measured
    assert metrics["A"]["comparable"] and metrics["A"]["accepted"] == 2
    assert not section["comparisons"]  # no task decided on both arms: nothing pairs
    text = cli("report", "--db", str(db), cwd=tmp_path).stdout
    assert "endpoint failed: 2 of 2 tasks never served" in text
