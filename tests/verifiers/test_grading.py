"""Grading with real runners in each of the five languages: every verdict, counts, failing names."""

import shutil

import pytest

from tests.support.verifier_tasks import PYTEST, make_task
from verifiers.grading import SandboxGrader
from verifiers.tasks import load_task

grader = SandboxGrader()

# Per language: workspace, a hidden test that passes, one that fails, one that hangs, the command.
LANGS = {
    "python": dict(
        files={"mod.py": "def one():\n    return 1\n"},
        ok="import mod\n\ndef test_one():\n    assert mod.one() == 1\n\ndef test_two():\n    assert mod.one() + 1 == 2\n",
        bad="import mod\n\ndef test_one():\n    assert mod.one() == 1\n\ndef test_wrong():\n    assert mod.one() == 2\n",
        hang="import time\n\ndef test_hang():\n    time.sleep(120)\n",
        name="test_h.py",
        cmd=f"{PYTEST} test_h.py",
        failing="test_h.py::test_wrong",
    ),
    "javascript": dict(
        files={"mod.mjs": "export const one = () => 1;\n"},
        ok="import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { one } from './mod.mjs';\ntest('one', () => assert.equal(one(), 1));\ntest('two', () => assert.equal(one() + 1, 2));\n",
        bad="import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { one } from './mod.mjs';\ntest('one', () => assert.equal(one(), 1));\ntest('wrong', () => assert.equal(one(), 2));\n",
        hang="import { test } from 'node:test';\ntest('hang', async () => { await new Promise(r => setTimeout(r, 120000)); });\n",
        name="h.test.mjs",
        cmd="node --test h.test.mjs",
        failing="wrong",
    ),
    "typescript": dict(
        files={"mod.ts": "export const one = (): number => 1;\n"},
        ok="import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { one } from './mod.ts';\ntest('one', () => assert.equal(one(), 1));\ntest('two', () => assert.equal(one() + 1, 2));\n",
        bad="import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { one } from './mod.ts';\ntest('one', () => assert.equal(one(), 1));\ntest('wrong', () => assert.equal(one(), 2));\n",
        hang="import { test } from 'node:test';\ntest('hang', async () => { await new Promise(r => setTimeout(r, 120000)); });\n",
        name="h.test.ts",
        cmd="tsx --test h.test.ts",
        failing="wrong",
    ),
    "rust": dict(
        files={
            "Cargo.toml": '[package]\nname = "m"\nversion = "0.1.0"\nedition = "2021"\n',
            "src/lib.rs": "pub fn one() -> i32 { 1 }\n",
        },
        ok="#[test]\nfn one() { assert_eq!(m::one(), 1); }\n#[test]\nfn two() { assert_eq!(m::one() + 1, 2); }\n",
        bad="#[test]\nfn one() { assert_eq!(m::one(), 1); }\n#[test]\nfn wrong() { assert_eq!(m::one(), 2); }\n",
        hang="#[test]\nfn hang() { std::thread::sleep(std::time::Duration::from_secs(120)); }\n",
        name="tests/h.rs",
        cmd="cargo test --offline -q --test h",
        failing="wrong",
    ),
    "shell": dict(
        files={"one.sh": "#!/bin/bash\necho 1\n"},
        ok="import subprocess, pathlib\nHERE = pathlib.Path(__file__).parent\ndef run():\n    return subprocess.run(['bash', str(HERE / 'one.sh')], capture_output=True, text=True).stdout.strip()\ndef test_one():\n    assert run() == '1'\ndef test_two():\n    assert int(run()) + 1 == 2\n",
        bad="import subprocess, pathlib\nHERE = pathlib.Path(__file__).parent\ndef run():\n    return subprocess.run(['bash', str(HERE / 'one.sh')], capture_output=True, text=True).stdout.strip()\ndef test_one():\n    assert run() == '1'\ndef test_wrong():\n    assert run() == '2'\n",
        hang="import subprocess\ndef test_hang():\n    subprocess.run(['bash', '-c', 'sleep 120'])\n",
        name="test_h.py",
        cmd=f"{PYTEST} test_h.py",
        failing="test_h.py::test_wrong",
    ),
}


def _task(tmp_path, language, hidden_src, timeout_s=60, cmd=None):
    spec = LANGS[language]
    root = make_task(
        tmp_path / "suite",
        id=f"t-{language}",
        language=language,
        workspace=spec["files"],
        hidden={spec["name"]: hidden_src},
        reference=spec["files"],
        visible_cmd="true",
        hidden_cmd=cmd or spec["cmd"],
        timeout_s=timeout_s,
    )
    return load_task(root)


@pytest.mark.parametrize("language", LANGS)
def test_pass_with_counts(tmp_path, language):
    task = _task(tmp_path, language, LANGS[language]["ok"])
    grade = grader.grade(task, task.workspace)
    assert grade.verdict == "pass", grade.output
    assert (grade.passed, grade.failed) == (2, 0)


@pytest.mark.parametrize("language", LANGS)
def test_fail_with_counts_and_failing_test(tmp_path, language):
    task = _task(tmp_path, language, LANGS[language]["bad"])
    grade = grader.grade(task, task.workspace)
    assert grade.verdict == "fail", grade.output
    assert (grade.passed, grade.failed) == (1, 1)
    assert any(LANGS[language]["failing"] in name for name in grade.failing_tests), grade.failing_tests


@pytest.mark.parametrize("language", LANGS)
def test_timeout_is_its_own_verdict(tmp_path, language):
    limit = 20 if language == "rust" else 4  # rust compiles inside the limit
    task = _task(tmp_path, language, LANGS[language]["hang"], timeout_s=limit)
    grade = grader.grade(task, task.workspace)
    assert grade.verdict == "timeout", grade.output
    assert grade.duration_ms < (limit + 2) * 1000


@pytest.mark.parametrize("language", LANGS)
def test_error_when_the_runner_cannot_start(tmp_path, language):
    task = _task(tmp_path, language, LANGS[language]["ok"], cmd="no-such-runner-xyz --test")
    grade = grader.grade(task, task.workspace)
    assert grade.verdict == "error"
    assert grade.environment and "no-such-runner-xyz" in grade.environment


def test_environment_fault_names_the_missing_module(tmp_path):
    task = _task(tmp_path, "python", "import numpy_not_installed_anywhere\n\ndef test_x():\n    pass\n")
    grade = grader.grade(task, task.workspace)
    assert grade.verdict == "fail"
    assert "numpy_not_installed_anywhere" in grade.environment


def test_hidden_files_never_touch_the_graded_workspace(tmp_path):
    task = _task(tmp_path, "python", LANGS["python"]["ok"])
    work = tmp_path / "final"
    shutil.copytree(task.workspace, work)
    grader.grade(task, work)
    assert sorted(p.name for p in work.iterdir()) == ["mod.py"]


def test_run_visible_uses_the_visible_command(tmp_path):
    task = _task(tmp_path, "python", LANGS["python"]["bad"])
    assert grader.run_visible(task, task.workspace).verdict == "pass"  # visible_cmd = "true"
