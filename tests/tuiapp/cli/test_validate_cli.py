"""`quotabench validate` as a user runs it on a foreign corpus: a folder of suites is gated as
its tasks, a task kind outside the shipped list is kept, a hidden command that starts with a shell
function runs (only plain command words are looked up on PATH), a prompt past the default cap (or
a config's arm caps) is warned about; zero tasks and --jobs 0 are refused with one line."""

from __future__ import annotations

import shutil
import subprocess
import sys

from tests.conftest import FIXTURES, ROOT
from tests.support.engine_helpers import arm_toml, write_config
from verifiers.runtimes import tools_of
from verifiers.tasks import Task, load_suite


def cli(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def foreign_corpus(root):
    """corpus/js/js-clamp-range (kind concurrency, hidden command behind a shell function) and
    corpus/py/py-huge (py-word-count with a 1 MB prompt): a folder of two suites."""
    corpus = root / "corpus"
    js = shutil.copytree(FIXTURES / "smoke" / "js-clamp-range", corpus / "js" / "js-clamp-range")
    toml = (js / "task.toml").read_text().replace('kind = "boundary"', 'kind = "concurrency"')
    toml = toml.replace('hidden_cmd = "node --test', 'hidden_cmd = "node() { command node \\"$@\\"; }; node --test')
    (js / "task.toml").write_text(toml)
    py = shutil.copytree(FIXTURES / "smoke" / "py-word-count", corpus / "py" / "py-huge")
    text = (py / "task.toml").read_text().replace('id = "py-word-count"', 'id = "py-huge"')
    head, _, rest = text.partition('prompt = """')
    (py / "task.toml").write_text(head + rest.partition('"""\n')[2])
    (py / "prompt.md").write_text("Count the words. " + "x" * 1_000_000)
    return corpus


def test_a_folder_of_suites_with_foreign_kinds_and_shell_functions_gates(tmp_path):
    corpus = foreign_corpus(tmp_path)
    (suite,) = [load_suite(corpus)]
    assert sorted(t.id for t in suite.tasks) == ["js-clamp-range", "py-huge"] and not suite.problems
    assert {t.id: t.kind for t in suite.tasks}["js-clamp-range"] == "concurrency"

    done = cli("validate", corpus, "--jobs", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("2 of 2 tasks gate cleanly; 0 failed; 0 broken task folders")
    assert "MISSING" not in done.stderr and "BROKEN" not in done.stderr and "node()" not in done.stderr
    (warning,) = [line for line in done.stderr.splitlines() if line.startswith("WARNING task")]
    assert warning.startswith("WARNING task py-huge: its first request alone is ~250,")
    assert "past the default arm's cap_tokens 200,000" in warning

    cfg = write_config(tmp_path, [arm_toml("A", "solver", cap=100_000), arm_toml("B", "solver", cap=900_000)])
    with_config = cli("validate", corpus / "py", "--config", cfg)
    assert with_config.returncode == 0, with_config.stderr
    warned = [line for line in with_config.stderr.splitlines() if line.startswith("WARNING task")]
    assert len(warned) == 1 and "past arm A's cap_tokens 100,000" in warned[0]


def test_zero_tasks_and_no_jobs_are_refused_with_one_line(tmp_path):
    empty = cli("validate", tmp_path)
    assert empty.returncode == 2 and empty.stderr.count("\n") == 1
    assert f"suite {tmp_path}: holds no task folder" in empty.stderr and "0 of 0" not in empty.stdout
    jobs = cli("validate", FIXTURES / "smoke", "--jobs", "0")
    assert jobs.returncode == 2 and jobs.stderr.rstrip().splitlines()[-1].endswith("--jobs/-j: 0 is not at least 1")
    assert "Traceback" not in empty.stderr + jobs.stderr


def _task(hidden: str, language: str = "python") -> Task:
    return Task("t", ROOT, language, "k", "p", "python -m pytest -q", hidden)


def test_only_plain_command_words_are_looked_up():
    assert tools_of(_task('node() { command node "$@"; }; node --test x.mjs', "typescript")) == [
        "python",
        "pytest",
        "node",
    ]
    assert "cd" not in tools_of(_task("cd sub && python -m pytest"))
    assert tools_of(_task("FOO=1 cargo test", "rust")) == ["python", "pytest", "cargo"]
    assert tools_of(_task("$RUNNER test")) == ["python", "pytest"]
    assert tools_of(_task("./run.sh")) == ["python", "pytest"]
    assert tools_of(_task("cargo test", "rust")) == ["python", "pytest", "cargo"]
