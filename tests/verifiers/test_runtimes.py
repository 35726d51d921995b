"""The per-language runtime check, `validate` on a machine without tsx, and the environment
class: what the machine lacks is `environment`, what the model broke is not."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent.classify import classify
from tests.conftest import FIXTURES
from tests.support.verifier_tasks import python_task
from verifiers.grading import SandboxGrader
from verifiers.mechanics import check_workspace
from verifiers.runners import environment_fault
from verifiers.runtimes import MissingRuntime, Probe, missing_runtimes, tools_of
from verifiers.tasks import load_suite, load_task

ROOT = Path(__file__).resolve().parents[2]
HIDDEN = "import mod\n\ndef test_add():\n    assert mod.add(2, 3) == 5\n"


def path_with(tmp_path: Path, *tools: str, fake: dict[str, str] | None = None) -> str:
    """A PATH folder holding only `tools` (links to the real ones) and `fake` scripts."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    for tool in tools:
        real = sys.executable if tool == "python" else shutil.which(tool)
        assert real, f"this test needs {tool} on the machine"
        (folder / tool).symlink_to(real)
    for name, script in (fake or {}).items():
        (folder / name).write_text(f"#!/bin/sh\n{script}\n")
        (folder / name).chmod(0o755)
    return str(folder)


def core_tasks():
    return load_suite(FIXTURES / "core").tasks + load_suite(FIXTURES / "smoke").tasks


def test_tools_come_from_the_commands_and_the_language():
    by_id = {t.id: t for t in core_tasks()}
    assert tools_of(by_id["ts-add-months"]) == ["tsx", "node"]
    assert tools_of(by_id["rs-saturating-sum"]) == ["cargo"]
    assert tools_of(by_id["js-clamp-range"]) == ["node"]
    assert tools_of(by_id["py-word-count"]) == ["python", "pytest"]
    assert tools_of(by_id["sh-line-count"]) == ["python", "pytest", "bash"]


def test_what_is_missing_is_said_once_per_tool(tmp_path):
    missing, per_task = missing_runtimes(core_tasks(), Probe(path_with(tmp_path, "bash", "node", "python")))
    lines = sorted(map(str, missing))
    assert lines == [
        "3 go tasks need `go` on PATH: apt-get install golang-go (or Go from go.dev/dl)",
        "6 typescript tasks need `tsx` on PATH: npm install -g tsx",
        "9 rust tasks need `cargo` on PATH: install Rust (rustup, or apt-get install cargo)",
    ]
    assert per_task["go-top-tags"] == "`go` is not on PATH — apt-get install golang-go (or Go from go.dev/dl)"
    assert per_task["ts-add-months"] == "`tsx` is not on PATH — npm install -g tsx"
    assert "py-word-count" not in per_task and "js-clamp-range" not in per_task


def test_a_node_too_old_for_node_test_is_named(tmp_path):
    path = path_with(tmp_path, "bash", "python", fake={"node": "echo v16.20.0"})
    missing, _ = missing_runtimes([t for t in core_tasks() if t.language == "javascript"], Probe(path))
    (m,) = missing
    assert str(m) == (
        "9 javascript tasks need a newer `node` (node v16.20.0 is older than 18): "
        "install Node.js 18 or newer (apt-get install nodejs, or nvm install --lts)"
    )


def test_nothing_missing_on_this_machine():
    assert missing_runtimes(core_tasks()) == ([], {})


def test_one_task_reads_in_the_singular():
    assert (
        str(MissingRuntime("tsx", "typescript", ("ts-a",)))
        == "1 typescript task needs `tsx` on PATH: npm install -g tsx"
    )


def test_validate_without_tsx_says_so_once_and_skips_those_tasks(tmp_path):
    suite = tmp_path / "suite"
    python_task(suite, HIDDEN, id="py-fine")
    shutil.copytree(FIXTURES / "core" / "ts-add-months", suite / "ts-add-months")
    tools = ["bash", "node", "python"] + (["unshare"] if shutil.which("unshare") else [])
    env = dict(os.environ, PATH=path_with(tmp_path, *tools))
    done = subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", "validate", str(suite)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 1
    assert done.stderr.count("MISSING") == 1
    assert "MISSING 1 typescript task needs `tsx` on PATH: npm install -g tsx" in done.stderr
    assert "FAILED" not in done.stderr and "untouched workspace" not in done.stderr
    rows = done.stdout.splitlines()
    header = rows[0]
    assert header.split() == [
        "task",
        "language",
        "untouched",
        "ref",
        "visible",
        "parses",
        "alt",
        "neg",
        "canaries",
        "time",
    ]
    py_row = next(r for r in rows if r.startswith("py-fine"))
    for word in ("untouched", "ref", "visible", "parses", "alt", "neg"):  # every mark under its heading
        assert py_row[header.index(word)] in "of-", (word, header, py_row)
    assert py_row.index("s", header.index("time")) == len(header) - 1  # "1.2s" ends under "time"
    assert next(r for r in rows if r.startswith("ts-add-months")).endswith("skipped: runtime missing")
    assert "1 of 2 tasks gate cleanly; 0 failed; 1 not gated (runtime missing, see MISSING above)" in done.stdout


# -- environment: what the machine lacks, by the runner's words (outputs captured on this machine)
RENAMED_EXPORT = """error[E0432]: unresolved import `saturating_sum::saturating_sum`
 --> tests/hidden.rs:1:5
  |
1 | use saturating_sum::saturating_sum;
  |     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ no `saturating_sum` in the root

error: could not compile `saturating_sum` (test "hidden") due to 1 previous error
"""
MISSING_CRATE = """error[E0432]: unresolved import `rand`
 --> src/lib.rs:1:5
  |
1 | use rand::Rng;
  |     ^^^^ use of unresolved module or unlinked crate `rand`
error: could not compile `saturating_sum` (lib) due to 1 previous error
"""
OWN_MODULE = """error[E0432]: unresolved import `crate::helpers`
 --> src/lib.rs:1:12
  |            ^^^^^^^ could not find `helpers` in the crate root
error: could not compile `saturating_sum` (lib) due to 1 previous error
"""


@pytest.mark.parametrize(
    "output, expected",
    [
        (RENAMED_EXPORT, None),
        (OWN_MODULE, None),
        (MISSING_CRATE, "use of unresolved module or unlinked crate `rand`"),
        ("error[E0463]: can't find crate for `serde`", "can't find crate for `serde`"),
        (
            '# TypeError [ERR_UNKNOWN_FILE_EXTENSION]: Unknown file extension ".ts" for /tmp/w/dates.ts',
            'Unknown file extension ".ts"',
        ),
        ("# Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/tmp/w/clamp.mjs' imported from /tmp/w/h.test.mjs", None),
        ("Error: Cannot find module './gone.js'", None),
        (
            "# Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'lodash' imported from /tmp/w/h.test.mjs",
            "Cannot find package 'lodash'",
        ),
        ("Error: Cannot find module 'left-pad'", "Cannot find module 'left-pad'"),
        ("E   ModuleNotFoundError: No module named 'numpy'", "ModuleNotFoundError: No module named 'numpy'"),
        ("E   ImportError: cannot import name 'top_words' from 'words'", None),
        ("bash: line 1: tsx: command not found", "tsx: command not found"),
        ("sh: 1: tsx: not found", "sh: 1: tsx: not found"),
        ("config.yaml: not found", None),
        ("FileNotFoundError: [Errno 2] No such file or directory: b'/tmp/w/data.bin'", None),  # the model's own bug
    ],
)
def test_environment_fault(output, expected):
    assert environment_fault(output) == expected


def rust_task(tmp_path: Path, lib: str) -> Path:
    root = tmp_path / "rs"
    shutil.copytree(FIXTURES / "smoke" / "rs-saturating-sum", root)
    (root / "reference" / "src" / "lib.rs").write_text(lib)
    return root


def classify_reference(task_root: Path) -> tuple[str, object]:
    """Grade workspace + reference for real and classify it as the engine does."""
    task = load_task(task_root)
    grade = SandboxGrader().grade_overlay(task, task.reference)
    work = task_root.parent / "final"
    shutil.copytree(task.workspace, work)
    shutil.copytree(task.reference, work, dirs_exist_ok=True)
    findings = check_workspace(task.workspace, work, ["src/lib.rs"] if task.language == "rust" else None)
    return classify("finished", grade.verdict, findings=len(findings), environment=grade.environment), grade


@pytest.mark.slow
def test_a_renamed_export_of_the_tasks_own_crate_is_reasoning(tmp_path):
    reference = (FIXTURES / "smoke" / "rs-saturating-sum" / "reference" / "src" / "lib.rs").read_text()
    cls, grade = classify_reference(rust_task(tmp_path, reference.replace("fn saturating_sum", "fn sat_sum")))
    assert "no `saturating_sum` in the root" in grade.output
    assert (cls, grade.environment) == ("reasoning", None)


@pytest.mark.slow
def test_a_truncated_rust_file_is_mechanics_at_the_line_it_breaks(tmp_path):
    reference = (FIXTURES / "smoke" / "rs-saturating-sum" / "reference" / "src" / "lib.rs").read_text()
    cut = reference[: reference.index("acc.saturating_add")]
    cls, grade = classify_reference(rust_task(tmp_path, cut))
    assert cls == "mechanics" and grade.environment is None


def node_loads_typescript() -> bool:
    major = subprocess.run(["node", "-p", "process.versions.node.split('.')[0]"], capture_output=True, text=True)
    return int(major.stdout.strip() or 0) >= 23


@pytest.mark.skipif(node_loads_typescript(), reason="this node strips TypeScript types by itself")
def test_node_without_a_typescript_loader_is_environment(tmp_path):
    # a TypeScript module tested with plain `node --test`, as on a machine without tsx
    root = tmp_path / "ts-node"
    shutil.copytree(FIXTURES / "core" / "ts-add-months", root)
    (root / "hidden" / "hidden.test.ts").unlink()
    (root / "hidden" / "hidden.test.mjs").write_text(
        "import test from 'node:test';\nimport assert from 'node:assert/strict';\n"
        "import { addMonths } from './dates.ts';\n\n"
        "test('adds a month', () => assert.equal(addMonths('2024-01-31', 1), '2024-02-29'));\n"
    )
    toml = (
        (root / "task.toml")
        .read_text()
        .replace('hidden_cmd = "tsx --test hidden.test.ts"', 'hidden_cmd = "node --test hidden.test.mjs"')
    )
    (root / "task.toml").write_text(toml)
    cls, grade = classify_reference(root)
    assert grade.environment == 'Unknown file extension ".ts"'
    assert cls == "environment"


def _jest_task(tmp_path: Path, command: str, language: str = "javascript"):
    from tests.support.verifier_tasks import make_task

    root = make_task(
        tmp_path / "suite",
        id=f"{language[:2]}-jest",
        language=language,
        workspace={"a.js": "export const a = 1;\n"},
        hidden={"a.spec.js": "test('a', () => {});\n"},
        reference={"a.js": "export const a = 1;\n"},
        visible_cmd="true",
        hidden_cmd=command,
    )
    return load_task(root)


def test_a_jest_command_needs_node_not_jest(tmp_path):
    assert tools_of(_jest_task(tmp_path / "1", "jest a.spec.js")) == ["node"]
    assert tools_of(_jest_task(tmp_path / "2", "npx jest --ci a.spec.js")) == ["node"]
    assert tools_of(_jest_task(tmp_path / "3", "jest a.spec.ts", "typescript")) == ["tsx", "node"]
    assert tools_of(_jest_task(tmp_path / "4", "jest -t a a.spec.js")) == ["jest", "node"]  # not ours
    here = missing_runtimes([_jest_task(tmp_path / "5", "jest a.spec.js")])
    assert here == ([], {})


def test_a_node_too_old_for_jest_style_specs_is_named(tmp_path):
    task = _jest_task(tmp_path, "jest a.spec.js")
    path = path_with(tmp_path, "python", fake={"node": "echo v20.5.0"})
    missing, per_task = missing_runtimes([task], Probe(path))
    assert [str(m) for m in missing] == [
        "1 javascript task needs a newer `node` (node v20.5.0 is older than 20.19 or 22.12, which jest-style "
        "specs need): install Node.js 18 or newer (apt-get install nodejs, or nvm install --lts)"
    ]
    plain = missing_runtimes([t for t in core_tasks() if t.id == "js-clamp-range"], Probe(path))  # node:test runs
    assert not any(m.tool == "node" for m in plain[0])
