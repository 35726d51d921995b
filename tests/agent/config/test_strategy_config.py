"""Strategy config keys (issue 16): one ConfigError line naming file, key, value and fix; the
manifest tells strategies apart; m015-m017 on an empty ledger and up from an older one."""

from __future__ import annotations

import sqlite3

import pytest
from sqlite_utils import Database

from agent.config import ConfigError, load_config_text
from agent.ledger import Ledger
from agent.ledger.schema import migrations
from agent.manifest import manifest_sha256
from agent.strategy_spec import StrategyError, parse_strategy
from tests.conftest import FIXTURES

RUN = f'[run]\nsuites = ["{FIXTURES / "smoke"}"]\nmax_attempts = 1\n'
ARM = '[[arms]]\nname = "A"\nkind = "scripted"\nmodel = "solver"\n'


@pytest.mark.parametrize(
    "text, key, words",
    [
        (RUN + ARM + 'strategy = "parallel@1"\n', 'arms[0].strategy = "parallel@1"', "direct, parallel@k"),
        (RUN + ARM + 'strategy = "best-of-3"\n', 'arms[0].strategy = "best-of-3"', "revise"),
        (RUN + ARM + 'strategy = "revise"\nselect = "judge"\n', 'arms[0].select = "judge"', "only parallel@k"),
        (RUN + ARM + 'select = "visible"\n', 'arms[0].select = "visible"', "no strategy"),
        (RUN + ARM + 'strategy = "parallel@2"\nselect = "vote"\n', 'arms[0].select = "vote"', "visible, judge"),
        (
            RUN.replace("max_attempts = 1", "max_attempts = 2") + ARM + 'strategy = "parallel@2"\n',
            "run.max_attempts = 2",
            "max_attempts = 1",
        ),
        (RUN + ARM + 'fallback = "yes"\n', "arms[0].fallback", "bool"),
    ],
)
def test_bad_strategy_keys_get_one_line(tmp_path, text, key, words):
    with pytest.raises(ConfigError) as info:
        load_config_text(text, tmp_path / "run.toml")
    message = str(info.value)
    assert "\n" not in message and key in message and words in message and str(tmp_path / "run.toml") in message


def test_strategies_parse_with_their_multiplier():
    assert [(s.kind, s.k, s.multiplier) for s in map(parse_strategy, ("direct", "parallel@4", "revise"))] == [
        ("direct", 1, 1),
        ("parallel", 4, 4),
        ("revise", 1, 3),
    ]
    with pytest.raises(StrategyError):
        parse_strategy("parallel@17")


def test_the_manifest_tells_strategies_and_selection_rules_apart(tmp_path):
    from verifiers.tasks import load_suite

    tasks = load_suite(FIXTURES / "smoke").tasks
    hashes = {
        manifest_sha256(tasks, load_config_text(RUN + ARM + extra, tmp_path / "r.toml"), "v1")
        for extra in (
            "",
            'strategy = "direct"\n',
            'strategy = "parallel@2"\n',
            'strategy = "parallel@2"\nselect = "judge"\n',
            'strategy = "parallel@2"\nfallback = false\n',
        )
    }
    assert len(hashes) == 5
    plain = load_config_text(RUN.replace("max_attempts = 1\n", "") + ARM, tmp_path / "r.toml")
    assert plain.arms[0].strategy is None and plain.max_attempts == 2  # no strategy: today's config, unchanged


def _columns(db: Database, table: str) -> set[str]:
    return {c.name for c in db[table].columns}


def test_an_empty_ledger_gets_the_stage_columns_and_submissions(tmp_path):
    db = Ledger(tmp_path / "l.sqlite").db
    assert {"stage", "candidate", "submitted"} <= _columns(db, "attempts")
    assert "stage" in _columns(db, "calls")
    assert {"strategy", "select_rule", "fallback"} <= _columns(db, "arms")
    assert {
        "run_id",
        "arm",
        "task_id",
        "strategy",
        "select_rule",
        "submitted_attempt_id",
        "route",
        "reason",
        "parse_route",
        "fallback",
        "scores_json",
    } <= _columns(db, "submissions")


def test_a_ledger_from_before_issue_16_migrates_and_its_rows_are_plain_attempts(tmp_path):
    path = tmp_path / "old.sqlite"
    old = Database(sqlite3.connect(path))
    migrations.apply(old, stop_before="m015_stages")
    old["runs"].insert({"id": "R1", "status": "finished"})
    old["attempts"].insert({"id": "A1", "run_id": "R1", "arm": "A", "task_id": "t", "attempt_no": 1})
    old["calls"].insert({"id": "C1", "attempt_id": "A1", "run_id": "R1", "arm": "A"})
    old.conn.commit()
    old.conn.close()
    ledger = Ledger(path)
    assert ledger.query("select stage, candidate, submitted from attempts") == [
        {"stage": "attempt", "candidate": None, "submitted": None}
    ]
    assert ledger.query("select stage from calls") == [{"stage": "attempt"}]
