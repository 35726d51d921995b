"""House rules: the engine is reachable without the TUI (STYLE.md, after Harlequin's import-linter contract)."""
import ast
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

CORE = ("agent", "verifiers")
FORBIDDEN = ("textual", "tuiapp")


def _imports(path: Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


def test_core_packages_never_import_the_tui():
    offenders = [f"{path.relative_to(ROOT)} imports {name}"
                 for package in CORE for path in (ROOT / package).rglob("*.py")
                 for name in _imports(path) if name.split(".")[0] in FORBIDDEN]
    assert not offenders, offenders


def test_verifiers_never_import_the_agent():
    offenders = [str(p) for p in (ROOT / "verifiers").rglob("*.py") if any(n.split(".")[0] == "agent" for n in _imports(p))]
    assert not offenders


def test_headless_engine_loads_without_textual():
    code = ("import sys; import agent.engine, agent.resume, agent.metrics.report, agent.printer, verifiers.gate; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'tuiapp')]; print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_modules_stay_small():
    big = [f"{p.relative_to(ROOT)}: {n} lines" for pkg in ("agent", "verifiers", "tuiapp") for p in (ROOT / pkg).rglob("*.py")
           if (n := len(p.read_text().splitlines())) > 450]
    assert not big, big
