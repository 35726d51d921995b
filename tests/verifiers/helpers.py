"""Build throwaway tasks in tmp_path for verifier tests."""

from __future__ import annotations

import textwrap
from pathlib import Path


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


def make_task(
    root: Path,
    *,
    id: str = "t-one",
    language: str = "python",
    workspace: dict,
    hidden: dict,
    reference: dict,
    visible_cmd: str,
    hidden_cmd: str,
    timeout_s: float = 30,
    alternate: dict | None = None,
    negative: dict | None = None,
    kind: str = "bugfix",
) -> Path:
    task = root / id
    write(
        task,
        {
            "task.toml": f'''
        id = "{id}"
        language = "{language}"
        kind = "{kind}"
        prompt = "Make the tests pass."
        visible_cmd = "{visible_cmd}"
        hidden_cmd = "{hidden_cmd}"
        timeout_s = {timeout_s}
        '''
        },
    )
    write(task / "workspace", workspace)
    write(task / "hidden", hidden)
    write(task / "reference", reference)
    if alternate is not None:
        write(task / "alternate", alternate)
    if negative is not None:
        write(task / "negative", negative)
    return task


PYTEST = "python -m pytest -q -p no:cacheprovider"


def python_task(root: Path, hidden_body: str, **kw) -> Path:
    """A python task whose hidden test is `hidden_body` (a test function source)."""
    return make_task(
        root,
        workspace={
            "mod.py": "def add(a, b):\n    return a - b\n",
            "test_visible.py": "import mod\n\ndef test_v():\n    assert mod.add(0, 0) == 0\n",
        },
        hidden={"test_hidden.py": hidden_body},
        reference={"mod.py": "def add(a, b):\n    return a + b\n"},
        visible_cmd=f"{PYTEST} test_visible.py",
        hidden_cmd=f"{PYTEST} test_hidden.py",
        **kw,
    )
