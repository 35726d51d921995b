"""SVG snapshots of the live view, driven by a synthetic event sequence with fixed ids and
times (ReplayEngine) and a frozen clock, so they are the same on every machine.
Update them with `pytest tests/tuiapp/live/test_snapshots.py --snapshot-update`."""

from __future__ import annotations

from pathlib import Path

from agent.config import ArmConfig, RunConfig
from agent.ledger import Ledger
from tuiapp.live.app import make_app
from tuiapp.live.replay import ReplayEngine, synthetic_events

from .conftest import wait_for

TASKS = [
    "py-config-layering",
    "py-free-slots",
    "py-http-byte-range",
    "py-json-path-get",
    "py-ledger-transfers",
    "py-lru-cache-perf",
    "py-retry-decorator",
    "py-semver-precedence",
    "py-sliding-window-limit",
    "py-tail-lines",
    "js-clamp-range",
    "py-word-count",
    "rs-saturating-sum",
    "py-floor-off-by-one",
]


def config(cap_b: int) -> RunConfig:
    return RunConfig(
        path=Path("snapshot.toml"),
        suites=(Path("fixtures/core"),),
        max_attempts=2,
        arms=(
            ArmConfig(name="A", kind="openai", model="gpt-4.1-mini", base_url="http://a", cap_tokens=120_000),
            ArmConfig(
                name="B", kind="openai", model="free-coder", protocol="text", base_url="http://b", cap_tokens=cap_b
            ),
        ),
    )


def replay_app(tmp_path, outcomes: dict, cap_b: int):
    events = synthetic_events(outcomes, task_ids=TASKS, caps={"A": 120_000, "B": cap_b}, running=1)
    app = make_app(config(cap_b), Ledger(tmp_path / "snap.sqlite"), ReplayEngine(events), clock=lambda: events[-1].at)
    return app, len(events)


def settled(n_events: int):
    async def run_before(pilot) -> None:
        app = pilot.app
        await wait_for(pilot, lambda: app.state.events_seen >= n_events, what="the replay")
        await wait_for(pilot, lambda: app._figures_worker is None or not app._figures_worker.is_running)
        app.refresh_figures()
        await wait_for(pilot, lambda: app.figures_seen >= n_events, what="the figures")
        await pilot.pause(0.1)

    return run_before


def test_mid_run(snap_compare, tmp_path):
    app, n = replay_app(
        tmp_path, {"A": ["P", "RP", "P", "MM", "P", "P"], "B": ["RR", "P", "MM", "P", "TP", "P"]}, cap_b=100_000
    )
    assert snap_compare(app, terminal_size=(120, 40), run_before=settled(n))


def test_after_a_censored_arm(snap_compare, tmp_path):
    app, n = replay_app(
        tmp_path, {"A": ["P", "RP", "P", "M", "P", "P", "RR", "P"], "B": ["R", "P", "MM", "P", "TP", "C"]}, cap_b=60_000
    )
    assert snap_compare(app, terminal_size=(200, 50), run_before=settled(n))


def test_mid_run_at_80x24(snap_compare, tmp_path):
    """The default terminal: compact meters and cells, log and legend folded behind l and ?."""
    app, n = replay_app(
        tmp_path, {"A": ["P", "RP", "P", "MM", "P", "P"], "B": ["RR", "P", "MM", "P", "TP", "P"]}, cap_b=100_000
    )
    assert snap_compare(app, terminal_size=(80, 24), run_before=settled(n))
