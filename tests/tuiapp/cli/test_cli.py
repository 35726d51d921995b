"""The command line as users meet it: help with examples for every subcommand and option,
`browse` without a terminal, every missing key in one message, the line printer saying once
why it is not the live view, a run remembering its ledger for the bare `report` / `export`
after it, the after-run report fitted to the terminal, and a crashed live view exiting 1."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agent.config import ArmConfig, RunConfig
from agent.ledger import Ledger
from tests.conftest import ROOT
from tuiapp.cli import build_parser, main
from tuiapp.live.app import LiveApp
from tuiapp.live.replay import ReplayEngine
from tuiapp.live.run import LiveViewCrashed, run_app
from tuiapp.report_fit import fit_text

COMMANDS = ("validate", "run", "resume", "report", "export", "browse", "import", "demo")


def cli(*args: str, cwd: Path, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """`quotabench ARGS` in a child process with pipes (no terminal), state kept under cwd."""
    env = {**os.environ, "XDG_STATE_HOME": str(cwd / "state"), "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def help_of(*args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        main([*args, "--help"])
    assert done.value.code == 0
    return out.getvalue()


def entries(help_text: str) -> dict[str, str]:
    """Each argument of a --help text -> its help (argparse puts it beside or under the name)."""
    out: dict[str, str] = {}
    current = None
    for line in help_text.splitlines():
        if re.match(r"^ {2}\S", line):
            name, _, rest = line.strip().partition("  ")
            current = name
            out[current] = rest.strip()
        elif current and re.match(r"^ {4,}\S", line):
            out[current] = (out[current] + " " + line.strip()).strip()
        else:
            current = None
    return out


def test_the_top_level_help_says_what_the_tool_does_with_examples():
    text = help_of()
    assert "thin function" not in text and "Compare two LLM endpoints" in text
    assert "examples:" in text and "quotabench demo" in text and "exit codes:" in text
    for command in COMMANDS:
        assert re.search(rf"^    {command} +\S", text, re.M), f"{command} has no help line"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_subcommand_and_option_has_help_with_an_example(command):
    text = help_of(command)
    assert "examples:" in text and f"quotabench {command}" in text.split("examples:")[1]
    for name, helptext in entries(text.split("examples:")[0]).items():
        if name.startswith("-h"):
            continue
        assert helptext, f"{command} {name}: no help text"
        takes_value = bool(re.search(r"^-\S+ [A-Z{]", name))
        if takes_value:
            assert "e.g." in helptext, f"{command} {name}: no example in {helptext!r}"


def test_the_parser_builds():
    assert build_parser().prog == "quotabench"


def test_browse_without_a_terminal_says_so_and_exits_2(tmp_path):
    done = cli("browse", cwd=tmp_path, timeout=30)
    assert done.returncode == 2
    assert "needs a terminal" in done.stderr and "quotabench report" in done.stderr
    assert "\x1b[" not in done.stdout  # no escape codes written into the pipe


def test_every_missing_key_is_named_in_one_message(tmp_path):
    config = tmp_path / "keys.toml"
    config.write_text(f"""
[run]
suites = ["{ROOT / "fixtures" / "smoke"}"]
[[arms]]
name = "A"
base_url = "http://127.0.0.1:9/v1"
model = "m"
api_key_env = "QB_TEST_UNSET_ONE"
[[arms]]
name = "B"
base_url = "http://127.0.0.1:9/v1"
model = "m"
api_key_env = "QB_TEST_UNSET_TWO"
""")
    env = {k: v for k, v in os.environ.items() if not k.startswith("QB_TEST_UNSET")}
    done = subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", "run", str(config), "--headless", "--db", str(tmp_path / "l.sqlite")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "QB_TEST_UNSET_ONE (arm A)" in lines[0] and "QB_TEST_UNSET_TWO (arm B)" in lines[0]
    assert "export QB_TEST_UNSET_ONE=... QB_TEST_UNSET_TWO=..." in lines[0]


@pytest.mark.slow
def test_a_run_remembers_its_ledger_for_report_and_export(tmp_path):
    here, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    config = here / "run.toml"
    config.write_text(
        (ROOT / "examples" / "smoke-scripted.toml")
        .read_text()
        .replace('"../fixtures/smoke"', f'"{ROOT / "fixtures" / "smoke"}"')
        .replace("max_attempts = 2", 'max_attempts = 1\ntasks = ["py-word-count"]')
    )
    done = cli("run", str(config), "--db", "mine.sqlite", cwd=here, timeout=300)  # stdout is a pipe: no live view
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if "instead of the live view" in line]
    assert len(notes) == 1 and "not a terminal" in notes[0]  # said once, with the reason
    assert "Next: quotabench browse" in done.stdout
    report = cli("report", cwd=here, env={"XDG_STATE_HOME": str(here / "state")})
    assert report.returncode == 0, report.stderr
    assert "reading mine.sqlite" in report.stderr and "paired comparison" in report.stdout
    export = cli("export", cwd=here, env={"XDG_STATE_HOME": str(here / "state")})
    assert export.returncode == 0 and export.stdout.count("\n") == 3  # a header and one attempt per arm
    lost = cli("report", cwd=elsewhere, env={"XDG_STATE_HOME": str(here / "state")})
    assert lost.returncode == 2 and "quotabench.sqlite: no such file" in lost.stderr


def test_a_configs_db_is_beside_it_and_report_finds_it_with_config(tmp_path):
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    config = project / "run.toml"
    config.write_text(
        (ROOT / "examples" / "smoke-scripted.toml")
        .read_text()
        .replace('"../fixtures/smoke"', f'"{ROOT / "fixtures" / "smoke"}"')
        .replace("max_attempts = 2", 'max_attempts = 1\ntasks = ["py-word-count"]\ndb = "runs.sqlite"')
    )
    done = cli("run", str(config), "--no-preflight", cwd=elsewhere, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (project / "runs.sqlite").is_file() and not (elsewhere / "runs.sqlite").exists()
    report = cli("report", "--config", str(config), cwd=elsewhere, env={"XDG_STATE_HOME": str(elsewhere / "fresh")})
    assert report.returncode == 0, report.stderr
    assert "paired comparison" in report.stdout
    both = cli("report", "--config", str(config), "--db", "x.sqlite", cwd=elsewhere)
    assert both.returncode == 2 and "pass one of them" in both.stderr


def test_the_shipped_examples_and_fixtures_are_found_from_any_folder(tmp_path):
    done = cli("validate", "fixtures/smoke/js-clamp-range", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "js-clamp-range" in done.stdout


def test_the_after_run_report_fits_the_terminal(tmp_path):
    from agent.metrics.report import build_report, render_report
    from tests.support.fixed_ledger import build_fixed_ledger  # a finished two-arm run

    ledger = build_fixed_ledger(tmp_path / "fixed.sqlite")
    runs = [r["id"] for r in ledger.runs() if r["status"] == "finished"]
    text = render_report(build_report(ledger, runs[:1], with_cost=False), "text")
    assert max(map(len, text.splitlines())) > 160  # the decision table alone
    words = set(text.split())
    for width in (60, 80, 120, 160):
        fitted = fit_text(text, width)
        assert max(map(len, fitted.splitlines())) <= width, width
        joined = "".join(fitted.split())  # a word longer than the line (the manifest hash) is broken, not dropped
        dropped = {w for w in words if w not in joined and set(w) != {"-"}}
        assert not dropped, (width, dropped)


def test_a_crashed_live_view_exits_1_with_its_log(tmp_path):
    class Broken(LiveApp):
        def on_mount(self) -> None:
            raise RuntimeError("a bug in the view")

    config = RunConfig(
        path=Path("x.toml"),
        suites=(Path("."),),
        arms=(ArmConfig(name="A", kind="openai", base_url="http://a", model="a"),),
    )
    logs: list[str] = []

    def crash_log(text: str) -> Path:
        logs.append(text)
        return tmp_path / "crash.log"

    ledger = Ledger(tmp_path / "l.sqlite")
    app = Broken(config, ledger, ReplayEngine([]))
    with pytest.raises(LiveViewCrashed) as crashed:
        run_app(app, crash_log, headless=True)
    assert crashed.value.exit_code == 1 and str(tmp_path / "crash.log") in str(crashed.value)
    assert logs and "a bug in the view" in logs[0]
    assert "resume" not in str(crashed.value)  # the engine has a run id, but no run row was written
    ledger.insert("runs", {"id": app.run_id, "status": "running"})
    with pytest.raises(LiveViewCrashed) as crashed:
        run_app(Broken(config, ledger, ReplayEngine([])), crash_log, headless=True)
    assert str(crashed.value).endswith(f"; `quotabench resume {app.run_id[:10]}` finishes the run")


@pytest.mark.anyio
async def test_bad_input_found_while_the_view_starts_closes_it_with_the_error(tmp_path):
    from agent import QuotabenchError
    from tuiapp.live.app import make_app

    def opener():
        raise QuotabenchError(
            "config run.toml: require_sandbox: bubblewrap is not installed — apt-get install bubblewrap"
        )

    config = RunConfig(
        path=Path("x.toml"),
        suites=(Path("."),),
        arms=(ArmConfig(name="A", kind="openai", base_url="http://a", model="a", cap_tokens=5_000),),
    )
    app = make_app(config, None, opener=opener)
    async with app.run_test(size=(80, 24)) as pilot:
        numbers = app.panels["A"].meter.numbers
        assert "cap 5,000 (0%)" in numbers or "cap 5k (0%)" in numbers  # on screen before the opener ran
        for _ in range(200):
            if not app.is_running:
                break
            await pilot.pause(0.02)
    assert isinstance(app.startup_error, QuotabenchError) and "bubblewrap" in str(app.startup_error)
