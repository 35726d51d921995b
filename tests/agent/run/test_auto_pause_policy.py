"""The auto-pause choice point of a headless run (no live view to ask): it comes before the call
whose reservation would reach auto_pause_share or not fit — before anything is censored — the
line printer states it, and run.auto_pause_policy decides: continue (censored at the cap, as
before), stop-arm, or abort. Real engine, the in-package scripted server, a real ledger."""

from __future__ import annotations

import pytest

from agent import events as ev
from agent.printer import format_lines
from tests.support.engine_helpers import arm_toml, run_sync, write_config

CAP = 3_000  # the solver's third call on py-word-count reserves more than is left under it


def config(tmp_path, policy: str | None, share: float = 1.0):
    extra = f"auto_pause_share = {share}\n" + (f'auto_pause_policy = "{policy}"\n' if policy else "")
    return write_config(
        tmp_path,
        [arm_toml("A", "solver", cap=CAP), arm_toml("B", "solver", protocol="text")],
        tasks=["py-word-count", "js-clamp-range"],
        max_attempts=1,
        run_extra=extra,
    )


def choice_points(events) -> list[ev.AutoPaused]:
    return [e for e in events if isinstance(e, ev.AutoPaused)]


def test_default_policy_continues_and_the_cap_then_censors(tmp_path):
    engine, run_id, events = run_sync(config(tmp_path, None), tmp_path / "l.sqlite")
    (point,) = choice_points(events)
    assert point.arm == "A" and point.policy == "continue"
    assert point.used + point.reserved + point.next_call > point.cap  # this call's reservation does not fit
    censored = next(i for i, e in enumerate(events) if isinstance(e, ev.ArmStateChanged) and e.state == "censored")
    assert events.index(point) < censored
    lines = format_lines(point)
    assert lines[0].startswith("[A] AUTO-PAUSE: arm A at") and "past the cap" in lines[0]
    assert "choices: continue" in lines[1] and "auto_pause_policy = continue" in lines[1]
    arms = {a["name"]: a for a in engine.ledger_sync.arms(run_id)}
    assert arms["A"]["censored"] == 1 and arms["B"]["state"] == "finished"


def test_stop_arm_policy_stops_the_arm_before_its_cap(tmp_path):
    engine, run_id, events = run_sync(config(tmp_path, "stop-arm"), tmp_path / "l.sqlite")
    (point,) = choice_points(events)
    assert point.policy == "stop-arm"
    arms = {a["name"]: a for a in engine.ledger_sync.arms(run_id)}
    assert arms["A"]["state"] == "stopped" and arms["A"]["censored"] == 0
    assert arms["B"]["state"] == "finished"
    assert engine.ledger_sync.run(run_id)["status"] == "finished"
    assert any(isinstance(e, ev.LogMessage) and "stopped by auto_pause_policy = stop-arm" in e.text for e in events)


def test_abort_policy_aborts_the_run(tmp_path):
    engine, run_id, events = run_sync(config(tmp_path, "abort"), tmp_path / "l.sqlite")
    assert [p.policy for p in choice_points(events)] == ["abort"]
    assert engine.ledger_sync.run(run_id)["status"] == "aborted"
    assert all(a["censored"] == 0 for a in engine.ledger_sync.arms(run_id))


@pytest.mark.parametrize("share", [0.5])
def test_the_share_is_a_choice_point_too(tmp_path, share):
    engine, run_id, events = run_sync(config(tmp_path, "stop-arm", share=share), tmp_path / "l.sqlite")
    (point,) = choice_points(events)
    assert (point.used + point.reserved + point.next_call) / point.cap >= share
    assert (point.used + point.reserved + point.next_call) <= point.cap  # it would still fit: paused early
