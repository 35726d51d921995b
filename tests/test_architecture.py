"""House rules: the engine is reachable without the TUI (STYLE.md, after Harlequin's import-linter contract)."""
import subprocess
import sys

from tests.conftest import ROOT


def test_import_contracts_hold():
    """The layering is declared once, as import-linter contracts in pyproject.toml; this runs them."""
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_headless_engine_loads_without_textual():
    code = ("import sys; import agent.engine, agent.resume, agent.metrics.report, agent.printer, verifiers.gate; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'tuiapp')]; print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_modules_stay_small():
    big = [f"{p.relative_to(ROOT)}: {n} lines" for pkg in ("agent", "verifiers", "tuiapp") for p in (ROOT / pkg).rglob("*.py")
           if (n := len(p.read_text().splitlines())) > 450]
    assert not big, big
