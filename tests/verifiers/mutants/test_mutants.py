"""Mutation scoring: the table-driven mutator on shipped references, the verdict mapping, and
planted tasks scored in the real sandbox (weak and strong hidden tests, the cache)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.support.verifier_tasks import ONE_CASE, THOROUGH, planted_clamp_task
from verifiers.mechanics import grammar_for, parses_clean
from verifiers.mutants.cache import ScoreCache
from verifiers.mutants.generate import changed_files, mutants_of_source, mutants_of_task
from verifiers.mutants.outcome import OUTCOMES, outcome_of
from verifiers.mutants.runner import Settings, score_suites
from verifiers.sandbox import Limits, RunResult, Sandbox
from verifiers.sandboxes import make_sandbox
from verifiers.tasks import load_task

# One shipped reference per language whose changed files offer every mutation kind that language has.
REFERENCES = {
    "python": "core/py-http-byte-range",
    "javascript": "core/js-calc-power",
    "typescript": "core/ts-cidr-match",
    "rust": "core/rs-timeline-order",
    "shell": "core/sh-export-users",
}


@pytest.mark.parametrize("language", sorted(REFERENCES))
def test_each_language_yields_five_kinds_of_parsing_mutants(language: str) -> None:
    task = load_task(FIXTURES / REFERENCES[language])
    assert task.language == language
    found = mutants_of_task(task, max_mutants=10_000)
    kinds = Counter(m.kind for m in found.mutants)
    assert len(kinds) >= 5, kinds
    references = dict(changed_files(task))
    for mutant in found.mutants:
        grammar = grammar_for(mutant.file)
        assert grammar is not None and parses_clean(mutant.source, grammar), mutant.description
        assert mutant.source != references[mutant.file]
    assert len({m.source for m in found.mutants}) == len(found.mutants)  # no duplicates


def test_mutants_that_do_not_parse_are_skipped() -> None:
    source = b"export const f = (a) => a-0;\n"  # 0 -> -1 writes `a--1`, which is not JavaScript
    found = mutants_of_source(source, "f.mjs")
    assert found.unparsed >= 1
    assert all(b"a--1" not in m.source for m in found.mutants)
    assert any(m.source == b"export const f = (a) => a-1;\n" for m in found.mutants)


def test_max_mutants_keeps_an_even_share_of_kinds() -> None:
    task = load_task(FIXTURES / "core/ts-add-months")  # 60 of its 89 mutants are constants
    found = mutants_of_task(task, max_mutants=20)
    assert len(found.mutants) == 20 and found.dropped > 0
    kinds = Counter(m.kind for m in found.mutants)
    assert kinds["constant"] < 10 and len(kinds) >= 5
    assert [m.id for m in mutants_of_task(task, max_mutants=20).mutants] == [m.id for m in found.mutants]


@pytest.mark.parametrize(
    ("verdict", "tests", "failed", "exit_status", "expected"),
    [
        ("pass", {"t::a": "passed"}, 0, 0, "survived"),
        ("fail", {"t::a": "failed"}, 1, 1, "killed"),
        ("fail", {}, None, 101, "unviable"),  # nothing ran: a build or import error
        ("fail", {}, None, -9, "killed"),  # killed by a limit while the tests ran
        ("fail", {}, None, 137, "killed"),
        ("timeout", {}, None, None, "killed"),
        ("error", {}, None, 127, "error"),
        ("tampering", {"t::a": "failed"}, 1, 1, "killed"),
        ("tampering", {"t::a": "passed"}, 0, 0, "flagged"),  # rejected by the integrity checks, not the tests
    ],
)
def test_verdicts_map_to_outcomes(
    verdict: str, tests: dict[str, str], failed: int | None, exit_status: int | None, expected: str
) -> None:
    assert outcome_of(verdict, tests, failed, exit_status) == expected
    assert expected in OUTCOMES


class CountingSandbox:
    """The real sandbox, counting the commands it runs."""

    def __init__(self, inner: Sandbox) -> None:
        self.inner = inner
        self.name = inner.name
        self.runs = 0

    def run(
        self, command: str, source: Path, limits: Limits, protected: Path | None = None, channel: bytes | None = None
    ) -> RunResult:
        self.runs += 1
        return self.inner.run(command, source, limits, protected, channel)


def test_planted_weak_task_is_flagged_with_its_survivors(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    planted_clamp_task(suite, ONE_CASE, "weak")
    scores, problems = score_suites([suite], settings=Settings(jobs=2), cache=ScoreCache(tmp_path / "cache"))
    assert not problems
    (score,) = scores
    assert score.skipped is None and score.generated >= 10
    assert score.weak(0.80), score.score
    survivors = score.survivors()
    assert len(survivors) >= 3
    for s in survivors:
        assert s.diff.startswith("--- reference/mod.py") and ("\n-" in s.diff or "\n+" in s.diff)
    # scale() is never called: its mutants survive, and none is excused as equivalent
    assert {s.function for s in survivors} >= {"scale"}
    assert not [m for m in score.mutants if m.outcome == "equivalent" and m.function == "scale"]


def test_planted_strong_task_scores_above_threshold_and_the_cache_skips_grading(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    planted_clamp_task(suite, THOROUGH, "strong")
    sandbox = CountingSandbox(make_sandbox())
    cache = ScoreCache(tmp_path / "cache")
    (first,), _ = score_suites([suite], sandbox, Settings(jobs=2), cache)
    assert sandbox.runs > first.generated  # the reference, then every mutant
    assert first.score is not None and first.score >= 0.80 and not first.weak(0.80)
    # `value < lo` -> `<=` returns lo == value: equivalent, and so judged against the alternate
    equivalent = [m for m in first.mutants if m.outcome == "equivalent"]
    assert any("< → <=" in m.description for m in equivalent)
    runs = sandbox.runs
    (second,), _ = score_suites([suite], sandbox, Settings(jobs=2), cache)
    assert sandbox.runs == runs  # nothing graded the second time
    assert second == first


def test_an_edited_task_is_scored_again(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    task = planted_clamp_task(suite, ONE_CASE, "edited")
    sandbox = CountingSandbox(make_sandbox())
    cache = ScoreCache(tmp_path / "cache")
    score_suites([suite], sandbox, Settings(max_mutants=3), cache)
    before = sandbox.runs
    (task / "hidden" / "test_hidden.py").write_text(THOROUGH)
    (again,), _ = score_suites([suite], sandbox, Settings(max_mutants=3), cache)
    assert sandbox.runs > before and again.generated == 3


def test_controls_are_not_scored(tmp_path: Path) -> None:
    scores, _ = score_suites([FIXTURES / "controls"], cache=ScoreCache(tmp_path / "cache"))
    assert scores and all(s.skipped and s.skipped.startswith("control") for s in scores)
    assert not list((tmp_path / "cache").glob("*.json"))
