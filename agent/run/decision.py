"""Deciding early while the run goes: the engine's side of the always-valid sequential test.

After every task an arm finishes, the watch updates its per-task statuses, and when the prefix
decided on both arms grows it recomputes the always-valid decision (agent/metrics/decision.py,
the same pairing rule the report uses) and emits `DecisionUpdated` with what stopping now
would save. With `run.stop_when_decided` the engine stops both arms the first time the test
decides; otherwise the user is offered the stop (RunControls.stop_decided), and the engine
takes it from the watch. Either way an update with `stopped` set says so. Only a run with two
arms is watched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent import events as ev
from agent.metrics.decision import LEFT_OUT, Status, paired_prefix
from agent.metrics.sequential import Decision, decision, tokens_saved

if TYPE_CHECKING:
    from agent.run.host import RunHost

STATUSES: dict[str, Status] = {"accepted": True, "failed": False, "unfinished": LEFT_OUT}


class DecisionWatch:
    def __init__(self, host: RunHost, task_ids: list[str], alpha: float, stop: bool):
        self.host, self.order, self.alpha, self.stop = host, task_ids, alpha, stop
        first, second = list(host.arms)[:2]
        self.labels = (first, second)
        self.status: dict[str, dict[str, Status]] = {first: {}, second: {}}
        self.last: Decision | None = None
        self.stopped = False  # both arms were stopped on the decision
        self._told_stopped = False  # the last update said so

    def record(self, arm: str, task_id: str, outcome: str) -> None:
        """`outcome` of `task_id` on `arm`: accepted, failed (budget spent) or unfinished."""
        if arm not in self.status:
            return
        self.status[arm][task_id] = STATUSES[outcome]
        pairs = paired_prefix(*([self.status[a].get(t) for t in self.order] for a in self.labels))
        if self.last is not None and len(pairs) == self.last.n_pairs and outcome != "unfinished":
            return  # the decided prefix did not move
        self.last = decision(pairs, self.alpha, labels=self.labels, remaining=self._remaining(len(pairs)))
        stopping = self.stop and self.last.decided and not self.stopped
        self._publish(self.last, self.savings() if self.last.decided else {}, stopping)
        if stopping:
            self.host.stop_decided()

    def _publish(self, last: Decision, saved: dict[str, int], stopping: bool) -> None:
        self._told_stopped = stopping or self.stopped
        self.host.emit(
            ev.DecisionUpdated(
                self.host.run_id,
                decided=last.decided,
                winner=last.winner,
                e_value=last.e_value,
                threshold=last.threshold,
                after_tasks=last.after_tasks,
                n_pairs=last.n_pairs,
                gap_lo=last.gap_lo,
                gap_hi=last.gap_hi,
                futile=bool(last.futile),
                line=last.line,
                saved=saved,
                stopping=stopping,
                stopped=self._told_stopped,
            )
        )

    def take_stop(self) -> tuple[Decision, dict[str, int]] | None:
        """The decision to stop both arms on and the tokens stopping saves, once; None when the
        test has not decided or the arms were stopped on it already. An update says the arms are
        stopping when the last one did not."""
        if self.last is None or not self.last.decided or self.stopped:
            return None
        self.stopped = True
        saved = self.savings()
        if not self._told_stopped:
            self._publish(self.last, saved, stopping=True)
        return self.last, saved

    def _left(self, arm: str) -> int:
        return sum(1 for t in self.order if t not in self.status[arm])

    def _per_task(self, arm: str) -> float | None:
        done = len(self.status[arm])
        used = self.host.arms[arm].quota.used
        return used / done if done else None

    def _remaining(self, paired: int) -> int:
        """Pairs still to come within the caps (an estimate for the futility read): the tasks
        left, bounded per arm by what it has already decided ahead of the prefix plus what its
        quota left affords at its pace so far."""
        excluded = sum(1 for t in self.order if LEFT_OUT in (self.status[a].get(t) for a in self.labels))
        left = len(self.order) - excluded - paired
        for arm in self.labels:
            per_task, quota = self._per_task(arm), self.host.arms[arm].quota
            if per_task:
                ahead = max(0, len(self.status[arm]) - paired)
                left = min(left, ahead + int(max(0, quota.cap - quota.used) / per_task))
        return max(0, left)

    def savings(self) -> dict[str, int]:
        """Tokens each arm would still spend on its remaining tasks at its pace so far."""
        used = {a: self.host.arms[a].quota.used for a in self.labels}
        projected = {a: used[a] + (self._per_task(a) or 0.0) * self._left(a) for a in self.labels}
        caps = {a: self.host.arms[a].quota.cap for a in self.labels}
        return tokens_saved(used, projected, caps)
