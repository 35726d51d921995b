"""Write run configs and drive the engine in-process for tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

import anyio

from agent.config import load_config
from agent.ledger import Ledger
from agent.run.engine import RunEngine
from tests.conftest import FIXTURES


def arm_toml(
    name: str,
    model: str,
    *,
    base_url: str | None = None,
    protocol: str = "tools",
    cap: int = 500_000,
    max_retries: int = 2,
    extra: str = "",
) -> str:
    kind = "openai" if base_url else "scripted"
    url = f'base_url = "{base_url}"\n' if base_url else ""
    return (
        textwrap.dedent(f"""
        [[arms]]
        name = "{name}"
        kind = "{kind}"
        model = "{model}"
        protocol = "{protocol}"
        cap_tokens = {cap}
        max_retries = {max_retries}
        backoff_base_s = 0.01
        backoff_cap_s = 0.05
        price = {{ input_per_mtok = 1.0, output_per_mtok = 2.0 }}
        """)
        + url
        + extra
    )


def write_config(
    tmp_path: Path,
    arms: list[str],
    *,
    suites=("smoke",),
    tasks: list[str] | None = None,
    max_attempts: int = 2,
    max_turns: int = 8,
    run_extra: str = "",
) -> Path:
    suite_list = ", ".join(f'"{FIXTURES / s}"' for s in suites)
    task_line = f"tasks = {tasks!r}\n".replace("'", '"') if tasks else ""
    text = (
        f"[run]\nsuites = [{suite_list}]\nmax_attempts = {max_attempts}\n{task_line}{run_extra}\n"
        f"[run.limits]\nmax_turns = {max_turns}\nmax_tokens_per_attempt = 60000\nattempt_timeout_s = 120\n"
        + "".join(arms)
    )
    path = tmp_path / "run.toml"
    path.write_text(text)
    return path


async def drive(config_path: Path, db: Path, on_event=None, **engine_kwargs):
    engine = RunEngine(load_config(config_path), Ledger(db), **engine_kwargs)
    events = []

    async def drain():
        async for event in engine.events:
            events.append(event)
            if on_event:
                on_event(engine, event)

    async with anyio.create_task_group() as tg:
        tg.start_soon(drain)
        run_id = await engine.run()
    return engine, run_id, events


def run_sync(config_path: Path, db: Path, **kw):
    return anyio.run(lambda: drive(config_path, db, **kw))
