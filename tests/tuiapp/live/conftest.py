"""Shared pieces of the live-view tests: a scripted server on 127.0.0.1, a run config written
into tmp_path, a real RunEngine over it, and a helper that waits for a condition under Pilot."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agent.config import load_config
from agent.endpoints.scripted_server import ScriptedServer
from agent.ledger import Ledger
from agent.run.engine import RunEngine

ROOT = Path(__file__).resolve().parents[3]
SMOKE = ROOT / "fixtures" / "smoke"
SIZE = (120, 40)


@pytest.fixture
def slow_server():
    """The scripted models, each reply 0.15 s late: slow enough for keys to land mid-run."""
    with ScriptedServer([SMOKE], delay_s=0.15) as server:
        yield server


def write_config(
    tmp_path: Path,
    *,
    base_url: str | None = None,
    a: str = "solver",
    b: str = "never-finish",
    cap_a: int = 200_000,
    cap_b: int = 200_000,
    share: float = 0.9,
    max_turns: int = 8,
    tasks: tuple[str, ...] = ("py-word-count",),
    max_attempts: int = 1,
    preflight: str = "on",
) -> Path:
    url = f'base_url = "{base_url}"\n' if base_url else ""
    task_list = ", ".join(f'"{t}"' for t in tasks)
    text = f"""
[run]
suites = ["{SMOKE}"]
tasks = [{task_list}]
max_attempts = {max_attempts}
auto_pause_share = {share}
preflight = "{preflight}"

[run.limits]
max_turns = {max_turns}
attempt_timeout_s = 60

[[arms]]
name = "A"
kind = "scripted"
model = "{a}"
protocol = "tools"
cap_tokens = {cap_a}
{url}
[[arms]]
name = "B"
kind = "scripted"
model = "{b}"
protocol = "text"
cap_tokens = {cap_b}
{url}"""
    path = tmp_path / "run.toml"
    path.write_text(text)
    return path


def real_app(tmp_path: Path, **config):
    """make_app over a real RunEngine (auto-pause on), as the CLI builds it."""
    from tuiapp.live.app import make_app

    config_obj = load_config(write_config(tmp_path, **config))
    ledger = Ledger(tmp_path / "ledger.sqlite")
    engine = RunEngine(config_obj, ledger, auto_pause=True)
    return make_app(config_obj, ledger, engine), engine, ledger


async def wait_for(pilot, condition: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await pilot.pause(0.02)
