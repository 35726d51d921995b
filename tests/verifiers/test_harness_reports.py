"""The pytest harness's failure reports (verifiers/harness/pytest_sources.py, `parse_once`):
each source parsed once per run, and every report the same, line for line, as pytest's own."""

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SOURCES = Path(__file__).resolve().parents[2] / "verifiers" / "harness" / "pytest_sources.py"

TESTS = """
import functools

import pytest


def add(a, b):
    return a - b


def checked(fn):
    @functools.wraps(fn)
    def inner(*args):
        return fn(*args)
    return inner


@pytest.mark.parametrize("a, b, total", [(2, 3, 5), (9, 4, 13)])
def test_parametrized(a, b, total):
    assert add(a, b) == total


@checked
def test_decorated():
    assert add(1, 1) == 2


def test_multiline():
    assert add(
        10,
        5,
    ) == {"a": [1, 2]}


def test_in_try_finally():
    try:
        value = add(2, 2)
    finally:
        assert value == 4, "the finally block"


def test_nested_helper():
    def helper(x):
        if x:
            raise ValueError(f"bad {x}")
        return x

    for i in range(3):
        helper(i)


class TestGroup:
    def test_method(self):
        data = [add(i, 1) for i in range(4)]
        assert data == [1, 2, 3, 4]

    def test_passes(self):
        assert add(2, 1) == 1
"""

DRIVER = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("qb_sources", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
import pytest
if sys.argv[2] == "once":
    module.parse_once()
import ast
parsed = []
real_parse = ast.parse
whole = open(sys.argv[4]).read().rstrip(chr(10))
def counting_parse(text, filename="<unknown>", *args, **kwargs):
    if filename == "source" and text.rstrip(chr(10)) == whole:
        parsed.append(1)
    return real_parse(text, filename, *args, **kwargs)
ast.parse = counting_parse
code = pytest.main(["-p", "no:cacheprovider", "--tb=" + sys.argv[3], sys.argv[4]])
print("PARSES", len(parsed))
"""


def _report(tmp_path: Path, mode: str, style: str) -> tuple[str, int]:
    test_file = tmp_path / "test_reports.py"
    test_file.write_text(textwrap.dedent(TESTS))
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    done = subprocess.run(
        [sys.executable, str(driver), str(SOURCES), mode, style, str(test_file)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PATH": "/usr/bin:/bin", "NO_COLOR": "1", "TERM": "dumb"},
    )
    lines = [
        re.sub(r" in [0-9.]+s|0x[0-9a-f]+", "", line) for line in done.stdout.splitlines()
    ]  # no timing, no address
    parses = int(next(line for line in lines if line.startswith("PARSES")).split()[1])
    return "\n".join(line for line in lines if not line.startswith("PARSES")), parses


@pytest.mark.parametrize("style", ["long", "short", "auto"])
def test_reports_are_pytests_own_and_each_source_is_parsed_once(tmp_path, style):
    as_pytest, parsed_by_pytest = _report(tmp_path, "pytest", style)
    once, parsed_once = _report(tmp_path, "once", style)
    assert "7 failed, 1 passed" in as_pytest
    assert once == as_pytest
    assert "assert value == 4" in once and "bad 1" in once and "add(" in once
    assert parsed_by_pytest >= 7  # the whole file, once or twice per failure
    assert parsed_once == 1
