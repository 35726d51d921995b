"""The README's two commands are what CI runs: `.ci/run` installs exactly the packages the
README's set-up line installs (so CI fails where a new user's machine would), and its last step
is the README's test command."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> tuple[str, str]:
    blocks = re.findall(r"```bash\n(.*?)\n```", (ROOT / "README.md").read_text(), re.S)
    return blocks[0].strip(), blocks[1].strip()


def test_ci_installs_what_the_readme_set_up_line_installs():
    setup, _ = _readme_commands()
    ci = (ROOT / ".ci" / "run").read_text()
    readme_pip = re.search(r"pip install (-e '[^']+')", setup)
    ci_pip = re.findall(r"^pip install -q (-e '[^']+')$", ci, re.M)
    assert readme_pip and ci_pip == [readme_pip.group(1)], (readme_pip, ci_pip)
    assert "CMAKE_ARGS=-DGGML_NATIVE=OFF" in setup and 'CMAKE_ARGS="-DGGML_NATIVE=OFF"' in ci
    assert "npm install -g tsx" in setup and "npm install -g tsx" in ci


def test_ci_ends_with_the_readme_test_command():
    _, tests = _readme_commands()
    lines = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert lines[-1] == tests == "python -m pytest"
