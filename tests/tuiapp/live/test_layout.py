"""The live view at the terminal sizes people use (80x24, 120x40, 160x50), by Pilot over a
replayed run: each meter shows its cap and share, the grid shows both arms' cells, the header
keeps state / elapsed / ETA / done (and the sandbox warning), the log and legend fold behind
l and ? on a small screen, and the modals fit with their keys on screen.

"On screen" is checked as the user would see it: the widget's region lies inside the screen
with a non-zero size, and what it renders at that width holds the text."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.geometry import Region
from textual.widgets import Button, Input

from agent import events as ev
from agent.config import ArmConfig, LlamaCppSettings, RunConfig
from agent.ledger import Ledger
from tuiapp.live.app import make_app
from tuiapp.live.modals import AutoPauseModal, ConfirmModal
from tuiapp.live.replay import ReplayEngine, synthetic_events
from tuiapp.live.widgets import Legend

from .conftest import wait_for

pytestmark = pytest.mark.anyio
SIZES = [(80, 24), (120, 40), (160, 50)]
TASKS = [
    "py-config-layering",
    "py-free-slots",
    "py-http-byte-range",
    "py-json-path-get",
    "py-ledger-transfers",
    "py-lru-cache-perf",
    "py-retry-decorator",
    "py-sliding-window-limit",
]
CAPS = {"A": 120_000, "B": 100_000}


def config() -> RunConfig:
    gguf = LlamaCppSettings(model_path="/models/cache/gemma-3-270m-it-qat-Q4_K_M.gguf")
    return RunConfig(
        path=Path("layout.toml"),
        suites=(Path("fixtures/core"),),
        max_attempts=2,
        arms=(
            ArmConfig(name="A", kind="openai", model="gpt-4.1-mini", base_url="http://a", cap_tokens=CAPS["A"]),
            ArmConfig(name="B", kind="llamacpp", protocol="text", cap_tokens=CAPS["B"], llamacpp=gguf),
        ),
    )


def replay(tmp_path, events, **kwargs):
    clock = (lambda: events[-1].at) if events else None
    return make_app(
        config(),
        Ledger(tmp_path / "layout.sqlite"),
        ReplayEngine(events, **kwargs),
        **({"clock": clock} if clock else {}),
    )


def mid_run_events(sandbox: str = "bwrap"):
    events = synthetic_events(
        {"A": ["P", "RP", "P", "MM"], "B": ["RR", "P", "MM", "P"]}, task_ids=TASKS, caps=CAPS, running=1
    )
    start = events[0]
    events[0] = ev.RunStarted(
        start.run_id,
        manifest_sha256=start.manifest_sha256,
        arms=start.arms,
        task_ids=start.task_ids,
        caps=start.caps,
        isolation={"sandbox": sandbox, "missing": "bwrap not found"},
        at=start.at,
    )
    return events


def on_screen(app, widget) -> bool:
    screen = Region(0, 0, *app.size)
    region = widget.region
    return widget.display and region.width > 0 and region.height > 0 and screen.contains_region(region)


async def settled(pilot, app, n_events: int) -> None:
    await wait_for(pilot, lambda: app.state.events_seen >= n_events, what="the replay")
    app.refresh_figures()
    await wait_for(pilot, lambda: app.figures_seen >= n_events, what="the figures")
    await pilot.pause(0.05)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_meters_grid_and_header_are_on_screen(tmp_path, size):
    events = mid_run_events(sandbox="fallback")
    app = replay(tmp_path, events)
    async with app.run_test(size=size) as pilot:
        await settled(pilot, app, len(events))
        for name, cap in CAPS.items():
            meter = app.panels[name].meter
            assert on_screen(app, meter), name
            numbers = meter.numbers
            share = (app.state.arms[name].used + app.state.arms[name].reserved) / cap
            assert f"{int(share * 100)}%" in numbers, numbers
            assert f"cap {cap:,}" in numbers or f"cap {cap // 1000}k" in numbers, numbers
            assert "…" not in numbers
        header = app.header
        assert on_screen(app, header)
        text = header.text
        for part in ("▶ running", "ETA ~", f"{app.figures.done_units}/16", "⚠ no full sandbox (fallback)"):
            assert part in text, text
        grid = app.grid
        assert on_screen(app, grid)
        first = grid.render_line(1).text
        assert "✓" in first and "✗" in first, first  # task 1: A accepted, B failed on reasoning
        header_row = grid.render_line(0).text
        assert " A" in header_row and " B" in header_row
        assert all(len(grid.render_line(y).text) <= grid.size.width for y in range(grid.size.height))
        panel_b = app.panels["B"]
        assert "gemma-3-270m-it-qat-Q4_K_M" in panel_b.border_title and "/models" not in panel_b.border_title


async def test_80x24_folds_the_log_and_the_legend_behind_keys(tmp_path):
    events = mid_run_events()
    app = replay(tmp_path, events)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot, app, len(events))
        legend = app.query_one(Legend)
        assert not app.log_view.display and not legend.display
        assert on_screen(app, app.grid)
        await pilot.press("l")
        assert app.log_view.display and on_screen(app, app.log_view) and not app.grid.display
        assert any("[A] py-json-path-get" in line for line in app.log_view.lines)
        await pilot.press("l")
        assert app.grid.display and not app.log_view.display
        await pilot.press("question_mark")
        await pilot.pause(0.05)
        assert legend.display and on_screen(app, legend)


async def test_120x40_keeps_todays_layout(tmp_path):
    events = mid_run_events()
    app = replay(tmp_path, events)
    async with app.run_test(size=(120, 40)) as pilot:
        await settled(pilot, app, len(events))
        assert on_screen(app, app.log_view) and on_screen(app, app.query_one(Legend))
        assert app.panels["A"].burn.display and app.panels["A"].stream.display
        assert app.header.text.startswith("quotabench live · run 01KSNAPSHOT0 · manifest 9d90c2d2655c")


async def test_meters_show_the_configured_caps_on_the_first_frame(tmp_path):
    app = replay(tmp_path, [])  # nothing from the engine yet
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.05)
        assert "cap 120k (0%)" in app.panels["A"].meter.numbers or "cap 120,000 (0%)" in app.panels["A"].meter.numbers
        assert "cap 100" in app.panels["B"].meter.numbers and "cap 0 " not in app.panels["B"].meter.numbers


def _buttons_on_screen(app, modal) -> list[str]:
    return [b.label.plain for b in modal.query(Button) if on_screen(app, b)]


@pytest.mark.parametrize("size", SIZES[:2], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_auto_pause_window_fits_with_its_keys(tmp_path, size):
    events = mid_run_events()
    used = max(e.used for e in events if isinstance(e, ev.QuotaChanged) and e.arm == "B")
    events.append(
        ev.AutoPaused(
            events[0].run_id,
            arm="B",
            used=used,
            reserved=0,
            cap=CAPS["B"],
            share=0.9,
            next_call=4_000,
            at=events[-1].at,
        )
    )
    app = replay(tmp_path, events)
    async with app.run_test(size=size) as pilot:
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, AutoPauseModal) and app.screen.query(Button),
            what="the auto-pause window",
        )
        await pilot.pause(0.05)
        modal = app.screen
        assert _buttons_on_screen(app, modal) == ["Raise cap (r)", "Continue (c)", "Stop arm B (s)", "Abort run (a)"]
        assert on_screen(app, modal.query_one(Input))
        # the window's share is the meter's share
        assert f"({modal.share_text})" in app.panels["B"].meter.numbers
        assert f"at {modal.share_text} of its cap" in str(modal.query_one(".title").render())


@pytest.mark.parametrize("size", SIZES[:2], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_confirmation_fits_with_its_keys(tmp_path, size):
    events = mid_run_events()
    app = replay(tmp_path, events)
    async with app.run_test(size=size) as pilot:
        await settled(pilot, app, len(events))
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal) and app.screen.query(Button))
        await pilot.pause(0.05)
        assert _buttons_on_screen(app, app.screen) == ["Abort (y)", "No (n)"]


async def test_the_end_of_the_run_leaves_the_grid_uncovered(tmp_path):
    events = synthetic_events({"A": ["P", "P"], "B": ["R", "P"]}, task_ids=TASKS[:2], caps=CAPS, finish=True)
    app = replay(tmp_path, events, hold=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: not app.state.live, what="the end of the run")
        await pilot.pause(0.1)
        assert not app.screen.query("Toast"), "no window over the grid at the end of the run"
        assert "b browse" in app.header.text and "q quit + report" in app.header.text


async def test_the_footer_names_the_stop_keys_after_the_arms(tmp_path):
    app = replay(tmp_path, mid_run_events(), hold=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: "1" in app.active_bindings, what="the run's keys")
        assert [app.active_bindings[k].binding.description for k in ("1", "2")] == ["stop A", "stop B"]
        await pilot.press("2")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal), what="stop_arm(1) to ask")
        await pilot.press("escape")
