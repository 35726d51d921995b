"""House rules: the engine is reachable without the TUI (STYLE.md, after Harlequin's import-linter contract)."""

import subprocess
import sys

from tests.conftest import ROOT

MAX_LINES = 450
PACKAGES = ("agent", "verifiers", "tuiapp")


def test_import_contracts_hold():
    """The layering is declared once, as import-linter contracts in pyproject.toml; this runs them."""
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_import_graph_has_no_cycles():
    """A circle means a word lives on the wrong floor (STYLE.md). Every import counts: at module
    level, inside functions and under TYPE_CHECKING."""
    import grimp

    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    cycles: set[frozenset[str]] = set()
    for module in graph.modules:
        reaches = graph.find_downstream_modules(module) & graph.find_upstream_modules(module)
        if reaches:
            cycles.add(frozenset({module, *reaches}))
    found = sorted(sorted(c) for c in cycles)
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_headless_engine_loads_without_textual():
    code = (
        "import sys; import agent.run.engine, agent.run.resume, agent.metrics.report, agent.printer, verifiers.gate; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'tuiapp')]; print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_modules_stay_small():
    """STYLE.md: small modules with one job, at most MAX_LINES physical lines each (the code is
    ruff-formatted, so a line count is stable)."""
    big = []
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            name = path.relative_to(ROOT).as_posix()
            n = len(path.read_text(encoding="utf-8").splitlines())
            if n > MAX_LINES:
                big.append(f"{name}: {n} lines")
    assert not big, big


def test_the_implementations_and_fakes_fill_their_seams():
    """The seams are Protocols (runtime-checkable): the real implementation and each stand-in used
    by tests and benchmarks have every member the seam names."""
    from agent.endpoints.endpoint import ChatClient, ChatEndpoint, EndpointSettings
    from agent.events import RunControls
    from agent.run.engine import RunEngine
    from benchmarks.whole_run import NoGrader
    from tuiapp.live.replay import ReplayEngine
    from verifiers.grading import Grader, SandboxGrader

    assert isinstance(ChatClient(EndpointSettings("http://x/v1", "m")), ChatEndpoint)
    assert issubclass(SandboxGrader, Grader) and issubclass(NoGrader, Grader)
    missing = [
        name
        for cls in (RunEngine, ReplayEngine)
        for name in ("run", "pause", "resume", "abort", "stop_now", "stop_arm", "raise_cap", "stop_decided")
        if not callable(getattr(cls, name, None))
    ]
    assert not missing, missing
    assert isinstance(ReplayEngine([]), RunControls)


def test_the_wheel_lists_every_package():
    """setuptools' package list is explicit: a new subpackage missing from it installs from a
    checkout and breaks only in the wheel (agent.config did, in .ci/wheel-check)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        init.parent.relative_to(ROOT).as_posix().replace("/", ".")
        for pkg in PACKAGES
        for init in (ROOT / pkg).rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found - listed == set(), sorted(found - listed)
