"""The decision watch through its RunHost seam: the engine stops both arms on a decision once,
whether run.stop_when_decided or the user asks, and every update after says they are stopped
(how the live view knows to take its `d` key away)."""

from __future__ import annotations

from types import SimpleNamespace

from agent import events as ev
from agent.run.decision import DecisionWatch
from agent.run.quota import Quota

TASKS = [f"t{i:02}" for i in range(60)]


class Host:
    """A RunHost stand-in with what the watch uses: two arms' quotas, emit, stop_decided."""

    run_id = "run"

    def __init__(self) -> None:
        self.arms = {name: SimpleNamespace(quota=Quota(10**6)) for name in ("A", "B")}
        self.events: list[ev.DecisionUpdated] = []
        self.stopped_on: list[tuple] = []
        self.watch: DecisionWatch | None = None

    def emit(self, event: ev.Event) -> None:
        assert isinstance(event, ev.DecisionUpdated)
        self.events.append(event)

    def stop_decided(self) -> None:  # as RunEngine does: the watch says whether and on what
        taken = self.watch.take_stop()
        if taken is not None:
            self.stopped_on.append(taken)


def _decide(host: Host, watch: DecisionWatch) -> int:
    """A always passes, B never does: tasks until the test decides."""
    for n, task in enumerate(TASKS, 1):
        for arm, outcome in (("A", "accepted"), ("B", "failed")):
            host.arms[arm].quota.used += 1000
            watch.record(arm, task, outcome)
        if watch.last is not None and watch.last.decided:
            return n
    raise AssertionError("the test never decided")


def _watch(stop: bool) -> tuple[Host, DecisionWatch]:
    host = Host()
    host.watch = DecisionWatch(host, TASKS, 0.05, stop)
    return host, host.watch


def test_the_user_stops_once_and_the_updates_say_so_from_then_on():
    host, watch = _watch(stop=False)
    n = _decide(host, watch)
    assert n < len(TASKS) and host.events[-1].decided
    assert not host.events[-1].stopping and not host.events[-1].stopped and not host.stopped_on

    before = len(host.events)
    host.stop_decided()  # the user's d
    assert len(host.stopped_on) == 1
    decision, saved = host.stopped_on[0]
    assert decision is watch.last and saved == host.events[-1].saved and set(saved) == {"A", "B"}
    assert len(host.events) == before + 1 and host.events[-1].stopping and host.events[-1].stopped

    host.stop_decided()  # a second d does nothing
    assert len(host.stopped_on) == 1 and len(host.events) == before + 1
    watch.record("A", TASKS[n], "unfinished")  # the task in flight ends unfinished
    assert host.events[-1].stopped and not host.events[-1].stopping


def test_stop_when_decided_stops_on_the_deciding_update_without_a_second_one():
    host, watch = _watch(stop=True)
    _decide(host, watch)
    deciding = [e for e in host.events if e.decided]
    assert len(deciding) == 1 and deciding[0].stopping and deciding[0].stopped
    assert len(host.stopped_on) == 1 and host.stopped_on[0][0] is watch.last
    host.stop_decided()
    assert len(host.stopped_on) == 1 and host.events[-1] is deciding[0]


def test_nothing_to_stop_before_the_test_decides():
    host, watch = _watch(stop=False)
    watch.record("A", TASKS[0], "accepted")
    host.stop_decided()
    assert not host.stopped_on and not any(e.stopped for e in host.events)
