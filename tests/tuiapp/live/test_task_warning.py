"""A task folder a run leaves out is said in the live view at 80 × 24: a notification that
stays long enough to be read (the event log, folded at this size, keeps it too)."""

import pytest

from agent import events as ev
from agent.config import load_config
from agent.ledger import Ledger
from agent.run.engine import RunEngine
from tests.agent.run.test_task_folders_in_a_run import mixed_suite
from tests.support.engine_helpers import arm_toml
from tests.tuiapp.live.conftest import wait_for
from tuiapp.live.state import RunState


def test_state_notifies_a_task_warning():
    state = RunState(["A"], {"A": 10})
    notice = state.apply(
        ev.LogMessage("", level="warning", text="skipping broken task: task x: y — z", kind="task_warning")
    )
    assert notice is not None and (notice.kind, notice.text) == ("task_warning", "skipping broken task: task x: y — z")
    assert state.forced_warning is None  # not the forced-preflight banner
    assert any("skipping broken task" in line for line in state.log)


@pytest.mark.anyio
async def test_the_live_view_shows_a_broken_task_at_80x24(tmp_path):
    from tuiapp.live.app import make_app

    suite = mixed_suite(tmp_path)
    cfg = tmp_path / "run.toml"
    cfg.write_text(
        f'[run]\nsuites = ["{suite}"]\nmax_attempts = 1\ntasks = ["py-word-count"]\n' + arm_toml("A", "solver")
    )
    config = load_config(cfg)
    ledger = Ledger(tmp_path / "l.sqlite")
    app = make_app(config, ledger, RunEngine(config, ledger, auto_pause=True))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:

        def toasts() -> list[str]:
            return [str(t.render()) for t in app.screen.query("Toast")]

        await wait_for(pilot, lambda: any("py-broken" in t for t in toasts()), timeout=60, what="the notification")
        (toast,) = [t for t in toasts() if "py-broken" in t]
        assert "Task" in toast and "hidden/ is missing" in toast
        await wait_for(pilot, lambda: app.state.status is not None, timeout=120, what="the run to end")
