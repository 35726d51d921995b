"""What a Go exercise needs to run here: a module of its own that downloads nothing, and code
that imports only the standard library and the module's own packages. A Go test file is not
split (unused imports do not compile, and Exercism shows its Go tests whole): the model sees
every test, and the hidden run puts the shipped test files back as they were."""

from __future__ import annotations

import re

_MODULE = re.compile(r"^\s*module\s+(\S+)", re.MULTILINE)
_REQUIRE = re.compile(r"^\s*require\b", re.MULTILINE)
_IMPORTS = re.compile(r"^\s*import\s*(?:\(([^)]*)\)|([^\n]*))", re.MULTILINE)
_PATH = re.compile(r'"([^"]+)"')
_TEST_FUNC = re.compile(r"^func (Test\w*)\(\s*\w+\s+\*testing\.T\s*\)", re.MULTILINE)


def module_of(go_mod: str) -> str | None:
    found = _MODULE.search(go_mod)
    return found.group(1).strip('"') if found else None


def offline_problem(go_mod: str | None, texts: list[tuple[str, str]]) -> str | None:
    """Why the exercise cannot build offline (None: it can): no go.mod, a `require`, or an
    import that is neither the standard library nor the module's own."""
    if go_mod is None:
        return "no go.mod"
    module = module_of(go_mod)
    if module is None:
        return "go.mod names no module"
    if _REQUIRE.search(go_mod):
        return "go.mod requires other modules (offline: nothing is downloaded)"
    for rel, text in texts:
        for block, line in _IMPORTS.findall(text):
            for path in _PATH.findall(block or line):
                own = path == module or path.startswith(module + "/")
                standard = "." not in path.split("/")[0]
                if not own and not standard:
                    return f"needs the Go module {path!r} ({rel} imports it), not downloaded offline"
    return None


def test_count(texts: list[str]) -> int:
    """Top-level test functions (`func TestX(t *testing.T)`) in the test files."""
    return sum(len(_TEST_FUNC.findall(text)) for text in texts)


__all__ = ["module_of", "offline_problem", "test_count"]
