"""A run grading without the full sandbox says so in the live view: header, notification, log."""

import pytest

from agent import events as ev
from agent.config import load_config
from agent.ledger import Ledger
from agent.run.engine import RunEngine
from tests.tuiapp.live.conftest import SIZE, wait_for, write_config
from tuiapp.live.state import RunState
from verifiers.grading import SandboxGrader
from verifiers.sandboxes import make_sandbox


def test_state_flags_a_fallback_run():
    state = RunState(["A", "B"], {"A": 10, "B": 10})
    notice = state.apply(
        ev.RunStarted(
            "r1",
            manifest_sha256="m" * 64,
            arms=("A", "B"),
            task_ids=("t",),
            caps={"A": 10, "B": 10},
            isolation={"sandbox": "fallback", "missing": "bwrap is not on PATH"},
        )
    )
    assert notice.kind == "sandbox" and "bwrap is not on PATH" in notice.text
    assert state.sandbox_warning == "no full sandbox (fallback)"
    assert any("WARNING: grading without the full sandbox: bwrap is not on PATH" in line for line in state.log)


def test_state_is_quiet_with_bwrap():
    state = RunState(["A"], {"A": 10})
    assert (
        state.apply(
            ev.RunStarted(
                "r1",
                manifest_sha256="m" * 64,
                arms=("A",),
                task_ids=("t",),
                caps={"A": 10},
                isolation={"sandbox": "bwrap"},
            )
        )
        is None
    )
    assert state.sandbox_warning is None


@pytest.mark.anyio
async def test_the_header_shows_it(tmp_path):
    from tuiapp.live.app import make_app
    from tuiapp.live.widgets import RunHeader

    config = load_config(write_config(tmp_path, b="wrong"))
    ledger = Ledger(tmp_path / "ledger.sqlite")
    engine = RunEngine(config, ledger, grader=SandboxGrader(make_sandbox("fallback")))
    app = make_app(config, ledger, engine)
    async with app.run_test(size=SIZE) as pilot:
        header = app.query_one(RunHeader)
        await wait_for(pilot, lambda: "no full sandbox" in str(header.render()), what="the sandbox warning")
        await wait_for(pilot, lambda: app.state.status is not None, timeout=60, what="the run to end")
