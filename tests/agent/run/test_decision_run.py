"""Deciding early in a real run (issue 20): the scripted solver against the unparseable model on
fixtures/core decides and stops both arms with `stop_when_decided`; two identical solvers run
to the end undecided; without the flag the run goes on and the report says where it could have
stopped. Real engine, scripted server on loopback, the sandbox, a SQLite ledger."""

from __future__ import annotations

import json

import pytest

from agent import events as ev
from agent.ledger import Ledger
from agent.metrics.report import build_report, render_report
from tests.support.engine_helpers import arm_toml, run_sync, write_config

pytestmark = pytest.mark.slow
CORE_TEN = [
    "py-free-slots",
    "py-word-count",
    "js-clamp-range",
    "py-tail-lines",
    "py-json-path-get",
    "py-duration-millis",
    "py-inventory-tags",
    "py-config-layering",
    "py-semver-precedence",
    "js-format-bytes",
]


def _run(tmp_path, b_model: str, *, stop: bool, tasks: list[str] | None = None):
    config = write_config(
        tmp_path,
        [arm_toml("A", "solver"), arm_toml("B", b_model, protocol="text")],
        suites=("core", "smoke"),
        tasks=tasks,
        max_attempts=1,
        run_extra=f"stop_when_decided = {'true' if stop else 'false'}\n",
    )
    engine, run_id, events = run_sync(config, tmp_path / "l.sqlite")
    ledger = Ledger(tmp_path / "l.sqlite")
    return engine, run_id, events, ledger


def test_a_settled_comparison_stops_both_arms(tmp_path):
    engine, run_id, events, ledger = _run(tmp_path, "unparseable", stop=True)
    run = ledger.run(run_id)
    arms = {a["name"]: a for a in ledger.arms(run_id)}
    assert run["status"] == "finished"
    assert {a["state"] for a in arms.values()} == {"decided"}
    decisions = [e for e in events if isinstance(e, ev.DecisionUpdated)]
    first_decided = next(e for e in decisions if e.decided)
    assert first_decided.stopping and first_decided.winner == "A" and first_decided.e_value >= 20
    assert first_decided.saved["A"] > 0 and first_decided.saved["B"] > 0
    assert "stopping both arms, saving ~" in next(
        e.text for e in events if isinstance(e, ev.LogMessage) and "stopping both arms" in e.text
    )
    not_run = json.loads(arms["A"]["unfinished_json"])
    tasks = ledger.tasks(run_id)
    assert len(not_run) >= len(tasks) - 12  # it stopped long before the suite's end
    order = [t["task_id"] for t in tasks]
    assert order != sorted(order, key=lambda t: (t.split("-")[0], t))  # a seeded shuffle, not suite order
    report = build_report(ledger, [run_id])
    section = report["runs"][0]
    d = section["decision"]
    assert d["decided"] and d["winner"] == "A" and d["after_tasks"] == 8 and d["stopped_early"]
    assert d["method"].startswith("Beta(1, 1)-mixture") and d["alpha"] == 0.05
    for arm in section["arms"]:
        assert arm["comparable"], arm["not_comparable"]  # a decided stop is not censoring
        assert arm["metrics"]["taxonomy"].get("not_run", 0) >= len(tasks) - 12
    text = render_report(report, "text")
    assert "decided after 8 tasks: A better" in text and "the run stopped here (stop_when_decided)" in text
    assert "biased toward a larger gap" in text


def test_two_identical_solvers_run_to_the_end_undecided(tmp_path):
    engine, run_id, events, ledger = _run(tmp_path, "solver", stop=True, tasks=CORE_TEN)
    assert {a["state"] for a in ledger.arms(run_id)} == {"finished"}
    last = [e for e in events if isinstance(e, ev.DecisionUpdated)][-1]
    assert not last.decided and last.e_value == 1.0 and last.n_pairs == len(CORE_TEN)
    d = build_report(ledger, [run_id])["runs"][0]["decision"]
    assert not d["decided"] and not d["stopped_early"] and d["n_pairs"] == len(CORE_TEN)


def test_without_the_flag_the_run_goes_on_and_says_where_it_could_have_stopped(tmp_path):
    engine, run_id, events, ledger = _run(tmp_path, "unparseable", stop=False, tasks=CORE_TEN)
    assert {a["state"] for a in ledger.arms(run_id)} == {"finished"}
    assert not any(e.stopping for e in events if isinstance(e, ev.DecisionUpdated))
    order = [t["task_id"] for t in ledger.tasks(run_id)]
    smoke = {"py-word-count", "js-clamp-range"}
    assert order == sorted(set(CORE_TEN) - smoke) + sorted(smoke)  # suite order: no shuffle without the flag
    text = render_report(build_report(ledger, [run_id]), "text")
    assert "could have stopped after 8 tasks" in text
