"""The live view over a run that preflight refuses: the tables reach its event log, the run ends
`refused` without a fatal modal, and q quits (issue 17). The live view itself is unchanged: the
engine speaks through its usual events."""

from __future__ import annotations

import pytest

from agent.config import load_config
from agent.ledger import Ledger
from agent.run.engine import RunEngine
from tests.support.engine_helpers import arm_toml, write_config
from tests.tuiapp.live.conftest import SIZE, wait_for
from tuiapp.live.app import make_app
from tuiapp.live.modals import FatalModal

pytestmark = pytest.mark.anyio


async def test_a_refused_run_shows_the_preflight_and_ends_refused(tmp_path):
    cfg = write_config(
        tmp_path,
        [arm_toml("A", "solver", extra='[arms.scripted]\nreport_model = "gpt-4o"\n'), arm_toml("B", "solver")],
        tasks=["py-word-count"],
    )
    config, ledger = load_config(cfg), Ledger(tmp_path / "l.sqlite")
    engine = RunEngine(config, ledger, auto_pause=True)
    app = make_app(config, ledger, engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.state.status is not None, what="the run to end")
        assert app.state.status == "refused" and not app.fatal
        assert not isinstance(app.screen, FatalModal)
        log = "\n".join(app.state.log)
        assert "preflight arm A" in log and "preflight refused the run" in log
        await pilot.press("q")
    assert ledger.run(engine.run_id)["status"] == "refused" and not ledger.attempts(engine.run_id)
