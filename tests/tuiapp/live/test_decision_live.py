"""The always-valid decision in the live view (issue 20): the gap line carries it, and once it
has decided the user can stop both arms with `d` (run.stop_when_decided = false)."""

import pytest

from agent.config import load_config
from agent.ledger import Ledger
from agent.run.engine import RunEngine
from tests.support.engine_helpers import arm_toml, write_config
from tests.tuiapp.live.conftest import SIZE, wait_for

pytestmark = pytest.mark.slow
TASKS = [
    "py-free-slots",
    "py-tail-lines",
    "py-json-path-get",
    "py-duration-millis",
    "py-inventory-tags",
    "py-config-layering",
    "py-semver-precedence",
    "py-env-settings",
    "py-http-byte-range",
    "py-slug-refactor",
    "py-retry-decorator",
    "py-ledger-transfers",
]


@pytest.mark.anyio
async def test_d_stops_both_arms_once_decided(tmp_path):
    from tuiapp.live.app import make_app

    path = write_config(
        tmp_path,
        [arm_toml("A", "solver"), arm_toml("B", "unparseable", protocol="text")],
        suites=("core",),
        tasks=TASKS,
        max_attempts=1,
    )
    config = load_config(path)
    ledger = Ledger(tmp_path / "l.sqlite")
    engine = RunEngine(config, ledger)
    app = make_app(config, ledger, engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.state.decision is not None, timeout=120, what="a decision line")
        await wait_for(pilot, lambda: "e = " in app.gap.text or "decided" in app.gap.text, what="the line on screen")
        await wait_for(pilot, lambda: app.state.decision.decided, timeout=180, what="the decision")
        await wait_for(pilot, lambda: app.check_action("stop_decided", ()) is True, what="the d key")
        await pilot.press("d")
        await wait_for(pilot, lambda: app.state.status is not None, timeout=180, what="the run to end")
    arms = {a["name"]: a for a in ledger.arms(engine.run_id)}
    assert {a["state"] for a in arms.values()} == {"decided"}
