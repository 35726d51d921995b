"""The browser on a strategy run (issue 16): the grid's cell is the SUBMITTED candidate's, the task
screen lists every stage (candidate number, ★ on the submitted one) with the reason it was
submitted, and every candidate opens to its diff."""

from __future__ import annotations

import anyio
import pytest
from textual.widgets import DataTable

from agent.endpoints.scripted_server import ScriptedServer
from agent.ledger import Ledger
from tests.conftest import FIXTURES
from tests.support.engine_helpers import arm_toml, drive, write_config
from tuiapp.browse.app import make_app
from tuiapp.browse.data import load_run

from .helpers import open_attempt, open_task, plain, settle

SIZE = (120, 40)


@pytest.fixture(scope="module")
def strategy_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("strategy")
    with ScriptedServer([FIXTURES / "smoke"]) as server:
        cfg = write_config(
            folder,
            [
                arm_toml("D", "second-passes", base_url=server.base_url, extra='strategy = "direct"\n'),
                arm_toml("P", "second-passes", base_url=server.base_url, extra='strategy = "parallel@2"\n'),
                arm_toml("R", "critique-breaks", base_url=server.base_url, extra='strategy = "revise"\n'),
            ],
            tasks=["py-word-count"],
            max_attempts=1,
        )
        _, run_id, _ = anyio.run(lambda: drive(cfg, folder / "l.sqlite"))
    return Ledger(folder / "l.sqlite"), run_id


def test_the_grid_cell_is_the_submitted_candidates(strategy_run):
    ledger, run_id = strategy_run
    cells = {c.arm: c for c in load_run(ledger, run_id).rows[0].cells}
    assert (cells["D"].failure_class, cells["D"].accepted_on) == ("reasoning", None)
    assert (cells["P"].failure_class, cells["P"].accepted_on, cells["P"].attempts) == ("accepted", 2, 2)


@pytest.mark.anyio
async def test_the_task_screen_shows_every_candidate_and_why_one_was_submitted(strategy_run):
    ledger, run_id = strategy_run
    app = make_app(ledger, run_id)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_task(pilot, "py-word-count")
        p = screen.query_one("#arm-P", DataTable)
        assert [str(p.get_row_at(i)[0]) for i in range(p.row_count)] == ["1 cand 1", "2 cand 2 ★"]
        outcome = plain(list(screen.query(".arm-outcome"))[1].content)
        assert "parallel@2" in outcome and "submitted (visible): candidate 2" in outcome
        r = screen.query_one("#arm-R", DataTable)
        assert [str(r.get_row_at(i)[0]) for i in range(r.row_count)] == ["1 initial", "2 critique", "3 revision ★"]
        assert "submitted (revision)" in plain(list(screen.query(".arm-outcome"))[2].content)
        attempt = await open_attempt(pilot, "P", 1)
        assert "word" in attempt.view.attempt["diff"]  # the unsubmitted candidate's diff is there too
        await pilot.press("b")
        await settle(pilot)
        critique = await open_attempt(pilot, "R", 2)  # a model stage: its reply, no grade
        assert critique.view.attempt["stage"] == "critique"
