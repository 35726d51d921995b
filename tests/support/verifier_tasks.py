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


# A task for mutation scoring: its hidden tests either check one case (weak) or the boundaries.
CLAMP = """
def clamp(value, lo, hi):
    if lo > hi:
        raise ValueError("empty range")
    if value < lo:
        return lo
    if value > hi:
        return hi
    return value


def scale(values, factor):
    total = []
    for v in values:
        total.append(v * factor + 0)
    return total
"""
ALTERNATE = """
def clamp(value, lo, hi):
    if hi < lo:
        raise ValueError("lo above hi")
    return min(max(value, lo), hi)


def scale(values, factor):
    return [v * factor for v in values]
"""
ONE_CASE = """
from mod import clamp

def test_inside():
    assert clamp(5, 0, 10) == 5
"""
THOROUGH = """
import pytest
from mod import clamp, scale

@pytest.mark.parametrize("value, want", [(-3, 0), (0, 0), (1, 1), (5, 5), (9, 9), (10, 10), (11, 10)])
def test_clamp(value, want):
    assert clamp(value, 0, 10) == want

def test_clamp_single_point_and_negative_range():
    assert clamp(7, 3, 3) == 3
    assert clamp(-5, -4, -2) == -4
    assert clamp(-1, -4, -2) == -2

def test_empty_range():
    with pytest.raises(ValueError):
        clamp(1, 2, 1)

def test_scale():
    assert scale([], 3) == []
    assert scale([1, -2, 3], 3) == [3, -6, 9]
    assert scale([4, 5], 1) == [4, 5]
"""


def planted_clamp_task(root: Path, hidden: str, id: str) -> Path:
    """A python task (clamp and scale) with an alternate/, graded by `hidden` (ONE_CASE or THOROUGH)."""
    return make_task(
        root,
        id=id,
        workspace={
            "mod.py": "def clamp(value, lo, hi):\n    return value\n\n\ndef scale(values, factor):\n    return values\n",
            "test_visible.py": "from mod import clamp\n\ndef test_v():\n    assert clamp(1, 0, 2) == 1\n",
        },
        hidden={"test_hidden.py": hidden},
        reference={"mod.py": CLAMP},
        alternate={"mod.py": ALTERNATE},
        visible_cmd=f"{PYTEST} test_visible.py",
        hidden_cmd=f"{PYTEST} test_hidden.py",
    )


# A Rust task whose reference tree-sitter-rust cannot parse (a lifetime bound before the trait of
# a trait object) but rustc builds: a grammar gap (verifiers/grammar_gaps.py).
LAZY_CARGO = '[package]\nname = "lazy"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
LAZY_STUB = """pub struct Lazy<F: Fn() -> i32> {
    f: F,
}

impl<F: Fn() -> i32> Lazy<F> {
    pub fn new(f: F) -> Self {
        Lazy { f }
    }

    pub fn get(&self) -> i32 {
        let _ = &self.f;
        0
    }
}
"""
LAZY_DYN = """pub struct Lazy<'a> {
    f: Box<dyn 'a + Fn() -> i32>,
}

impl<'a> Lazy<'a> {
    pub fn new(f: impl Fn() -> i32 + 'a) -> Self {
        Lazy { f: Box::new(f) }
    }

    pub fn get(&self) -> i32 {
        (self.f)()
    }
}
"""


def rust_dyn_lifetime_task(root: Path, reference: str = LAZY_DYN, id: str = "rs-dyn-lifetime") -> Path:
    """The Rust task above; its negative/ is the same valid syntax returning a wrong value."""
    return make_task(
        root,
        id=id,
        language="rust",
        workspace={
            "Cargo.toml": LAZY_CARGO,
            "src/lib.rs": LAZY_STUB,
            "tests/visible.rs": "use lazy::Lazy;\n\n#[test]\nfn builds() {\n    let _ = Lazy::new(|| 1);\n}\n",
        },
        hidden={
            "tests/hidden.rs": "use lazy::Lazy;\n\n#[test]\nfn gets() {\n    let n = 41;\n"
            "    assert_eq!(Lazy::new(|| n + 1).get(), 42);\n}\n"
        },
        reference={"src/lib.rs": reference},
        negative={"src/lib.rs": LAZY_DYN.replace("(self.f)()", "(self.f)() - 1")},
        visible_cmd="cargo test --offline -q --test visible",
        hidden_cmd="cargo test --offline -q --test hidden",
        timeout_s=120,
    )


def final_workspace(tmp_path: Path, task, files: dict[str, str]) -> Path:
    """A model's final workspace: the task's workspace with `files` written over it (made anew
    at each call)."""
    import shutil

    final = tmp_path / "final"
    if final.exists():
        shutil.rmtree(final)
    shutil.copytree(task.workspace, final)
    write(final, files)
    return final
