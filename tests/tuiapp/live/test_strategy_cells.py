"""A strategy arm's task in the live view (issue 16): the cell shows `covered/candidates ✓ → ✓`
— candidates passing the hidden tests, then the SUBMITTED one's result — and the outcome the
live figures use is the submission's, the report's own function; at 80x24 and 120x40."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent import events as ev
from agent.config import ArmConfig, RunConfig
from agent.ledger import Ledger
from tuiapp.live.app import make_app
from tuiapp.live.grid import cell_words
from tuiapp.live.replay import SNAPSHOT_START, ReplayEngine
from tuiapp.live.state import RunState

from .conftest import wait_for

RUN = "01STRATEGYRUN0000000000000"
TASKS = ["py-word-count", "py-tail-lines"]


def staged_events() -> list[ev.Event]:
    t = SNAPSHOT_START
    out: list[ev.Event] = [
        ev.RunStarted(
            RUN,
            manifest_sha256="m",
            arms=("D", "P"),
            task_ids=tuple(TASKS),
            caps={"D": 100_000, "P": 200_000},
            isolation={"sandbox": "bwrap"},
            at=t,
        )
    ]
    # D: Direct, one attempt per task
    out += [
        ev.AttemptStarted(RUN, arm="D", task_id=TASKS[0], attempt=1, attempt_id="d1", at=t + 1),
        ev.TaskGraded(
            RUN,
            arm="D",
            task_id=TASKS[0],
            attempt=1,
            verdict="fail",
            failure_class="reasoning",
            accepted=False,
            tokens=900,
            at=t + 2,
        ),
    ]
    # P: parallel@2 on task 1 — candidate 1 fails, candidate 2 passes and is submitted
    for no, ok in ((1, False), (2, True)):
        out += [
            ev.AttemptStarted(
                RUN, arm="P", task_id=TASKS[0], attempt=no, attempt_id=f"p{no}", stage="candidate", at=t + 2 + no
            ),
            ev.CallFinished(
                RUN,
                arm="P",
                task_id=TASKS[0],
                attempt=no,
                status="ok",
                retry_index=0,
                prompt_tokens=400,
                completion_tokens=100,
                usage_source="reported",
                latency_ms=5,
                at=t + 2.5 + no,
            ),
            ev.TaskGraded(
                RUN,
                arm="P",
                task_id=TASKS[0],
                attempt=no,
                verdict="pass" if ok else "fail",
                failure_class="accepted" if ok else "reasoning",
                accepted=ok,
                tokens=500,
                at=t + 2.8 + no,
            ),
        ]
    out.append(
        ev.Submitted(
            RUN, arm="P", task_id=TASKS[0], attempt=2, accepted=True, candidates=2, covered=1, route="visible", at=t + 6
        )
    )
    # P on task 2: candidate 1 graded, candidate 2 still running
    out += [
        ev.AttemptStarted(RUN, arm="P", task_id=TASKS[1], attempt=1, attempt_id="p3", stage="candidate", at=t + 7),
        ev.TaskGraded(
            RUN,
            arm="P",
            task_id=TASKS[1],
            attempt=1,
            verdict="pass",
            failure_class="accepted",
            accepted=True,
            tokens=700,
            at=t + 8,
        ),
        ev.AttemptStarted(RUN, arm="P", task_id=TASKS[1], attempt=2, attempt_id="p4", stage="candidate", at=t + 9),
    ]
    return out


def test_a_staged_cell_shows_its_pool_and_the_submission():
    state = RunState(["D", "P"], {"D": 100_000, "P": 200_000}, max_attempts=1)
    for e in staged_events():
        state.apply(e)
    done, running = state.arms["P"].cells[TASKS[0]], state.arms["P"].cells[TASKS[1]]
    assert cell_words(done)[1] == "1/2 ✓ → ✓" and cell_words(done, compact=True)[1] == "1/2 ✓→✓"
    assert cell_words(running)[1] == "▶ 1/1"  # a passing candidate does not decide the task
    assert state.outcome("P", TASKS[0]).accepted and state.outcome("P", TASKS[0]).decided
    assert state.outcome("P", TASKS[1]).failure_class == "pending"
    assert state.outcome("D", TASKS[0]).decided and not state.outcome("D", TASKS[0]).accepted


def test_nothing_submitted_reads_as_such():
    state = RunState(["P"], {"P": 1000}, max_attempts=1)
    state.apply(ev.AttemptStarted(RUN, arm="P", task_id="t", attempt=1, attempt_id="x", stage="candidate"))
    state.apply(
        ev.TaskGraded(
            RUN, arm="P", task_id="t", attempt=1, verdict="pass", failure_class="accepted", accepted=True, tokens=10
        )
    )
    state.apply(
        ev.Submitted(RUN, arm="P", task_id="t", attempt=None, accepted=False, candidates=1, covered=1, route="none")
    )
    cell = state.arms["P"].cells["t"]
    assert cell_words(cell)[1] == "1/1 ✓ → ∅"
    outcome = state.outcome("P", "t")
    assert outcome.decided and not outcome.accepted and outcome.failure_class == "no_submission"


@pytest.mark.anyio
@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_grid_shows_candidates_at_80x24_and_up(tmp_path, size):
    events = staged_events()
    config = RunConfig(
        path=Path("s.toml"),
        suites=(Path("fixtures/smoke"),),
        max_attempts=1,
        arms=(
            ArmConfig(name="D", kind="openai", model="m", base_url="http://d", strategy="direct"),
            ArmConfig(name="P", kind="openai", model="m", base_url="http://p", strategy="parallel@2"),
        ),
    )
    app = make_app(config, Ledger(tmp_path / "l.sqlite"), ReplayEngine(events), clock=lambda: events[-1].at)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.state.events_seen >= len(events), what="the events")
        await pilot.pause(0.05)
        grid = app.grid
        rows = [grid.render_line(y).text for y in range(1, 3)]
        assert "1/2 ✓" in rows[0] and "✓" in rows[0].split("1/2 ✓")[1], rows
        assert "▶ 1/1" in rows[1], rows
        assert all(len(grid.render_line(y).text) <= grid.size.width for y in range(grid.size.height))
