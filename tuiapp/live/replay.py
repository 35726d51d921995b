"""A stand-in for RunEngine that replays a recorded or synthetic event sequence.

`ReplayEngine` has the engine's interface the live view uses (`events`, `run()`, the
commands) and records the commands it receives, so the SVG snapshots and the benchmark drive
the real app without a live run. `synthetic_events` builds a deterministic paired run: fixed
ids, fixed times, per-task outcomes spelled as letters.
"""

from __future__ import annotations

import contextlib
import math
import random
import time
from collections.abc import Iterable, Sequence
from dataclasses import replace

import anyio

from agent import events as ev
from agent.states import ArmState, EndReason, EngineState, RunStatus
from agent.tool_names import TOOL_NAMES
from tuiapp.looks import CLASS_OF_LETTER

SNAPSHOT_RUN_ID = "01KSNAPSHOT0RUN00000000000"
SNAPSHOT_START = 1_764_460_800.0  # 2025-11-30 00:00:00 UTC
PROSE = (
    "Let me look at the workspace first. ",
    "The function ignores the empty case; ",
    "I will rewrite it to handle that and keep the signature. ",
    "Running the visible tests now. ",
    "All visible tests pass, finishing. ",
)


class ReplayEngine:
    """Plays `events` onto `self.events`, then (with `hold`) stays live until aborted.

    `rate` paces the replay in events per second; `restamp` gives every event the current
    time (for the benchmark's burn rates). Commands emit the events the real engine would.
    """

    def __init__(
        self,
        events: Iterable[ev.Event],
        *,
        run_id: str = SNAPSHOT_RUN_ID,
        hold: bool = True,
        rate: float | None = None,
        restamp: bool = False,
    ):
        self.recorded = list(events)
        self.run_id = run_id
        self.hold, self.rate, self.restamp = hold, rate, restamp
        self._send, self.events = anyio.create_memory_object_stream[ev.Event](math.inf)
        self.state = "running"
        self.commands: list[tuple[str | int, ...]] = []  # (command, its arguments)
        self.sent = 0
        self._ended: anyio.Event | None = None
        self._last_at = self.recorded[0].at if self.recorded else SNAPSHOT_START
        self._decision: ev.DecisionUpdated | None = None

    def emit(self, event: ev.Event) -> None:
        if self.restamp:
            event = replace(event, at=time.time())
        self._last_at = event.at
        self._decision = event if isinstance(event, ev.DecisionUpdated) else self._decision
        self.sent += 1
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._send.send_nowait(event)

    async def run(self) -> str:
        self._ended = anyio.Event()
        try:
            await self._play()
            if self.hold and self.state != "aborting":
                await self._ended.wait()
            status = RunStatus.ABORTED if self.state == "aborting" else RunStatus.FINISHED
            if not any(isinstance(e, ev.RunFinished) for e in self.recorded) or self.state == "aborting":
                self.emit(ev.RunFinished(self.run_id, status=status, at=self._last_at))
        finally:
            self._send.close()
        return self.run_id

    async def _play(self) -> None:
        started = time.perf_counter()
        for i, event in enumerate(self.recorded):
            if self.state == "aborting":
                return
            if self.rate:
                due = started + i / self.rate
                delay = due - time.perf_counter()
                if delay > 0.002:
                    await anyio.sleep(delay)
            while self.state == "paused" and not self.rate:
                await anyio.sleep(0.01)
            self.emit(event)

    # -- the engine's commands --------------------------------------------------------------
    def _state(self, state: str) -> None:
        self.state = state
        self.emit(ev.EngineStateChanged(self.run_id, state=EngineState(state), at=self._last_at))

    def pause(self, reason: str = "paused") -> None:
        self.commands.append(("pause",))
        if self.state == "running":
            self._state("paused")
            self.emit(ev.LogMessage(self.run_id, level="info", text=reason, at=self._last_at))

    def resume(self) -> None:
        self.commands.append(("resume",))
        if self.state == "paused":
            self._state("running")

    def abort(self) -> None:
        self.commands.append(("abort",))
        if self.state in ("running", "paused"):
            self._state("aborting")
            if self._ended is not None:
                self._ended.set()

    def stop_now(self) -> None:
        self.commands.append(("stop_now",))
        self.abort()

    def stop_arm(self, name: str) -> None:
        self.commands.append(("stop_arm", name))
        self.emit(
            ev.LogMessage(self.run_id, level="info", text=f"arm {name} stopped by the user", arm=name, at=self._last_at)
        )

    def raise_cap(self, name: str, new_cap: int) -> None:
        self.commands.append(("raise_cap", name, new_cap))

    def stop_decided(self) -> None:
        self.commands.append(("stop_decided",))
        decision = self._decision
        if decision is not None and decision.decided and not decision.stopped:
            self.emit(replace(decision, stopping=True, stopped=True, at=self._last_at))
            self.emit(
                ev.LogMessage(self.run_id, level="info", text=f"{decision.line}: stopping both arms", at=self._last_at)
            )


def synthetic_events(
    outcomes: dict[str, Sequence[str]],
    *,
    task_ids: Sequence[str] | None = None,
    caps: dict[str, int] | None = None,
    run_id: str = SNAPSHOT_RUN_ID,
    start: float = SNAPSHOT_START,
    running: int = 0,
    seed: int = 7,
    turns: int = 3,
    text_pieces: int = 4,
    finish: bool = False,
) -> list[ev.Event]:
    """A deterministic paired run: `outcomes[arm][i]` spells task i's attempts on that arm
    ("P", "RP", "MM", "C", ...: tuiapp/looks.py's letters; "" = not reached). The first `running` tasks after the spelled
    ones are left mid-attempt. A "C" censors its arm: the remaining tasks become unfinished.
    """
    arms = list(outcomes)
    n_spelled = max(len(v) for v in outcomes.values())
    ids = list(task_ids) if task_ids else [f"task-{i + 1:02d}" for i in range(n_spelled + running)]
    caps = caps or {arm: 100_000 for arm in arms}
    rng = random.Random(seed)
    out: list[ev.Event] = []
    clock = [start]
    used = {arm: 0 for arm in arms}
    censored: set[str] = set()

    def at(step: float = 0.7) -> float:
        clock[0] += step
        return round(clock[0], 3)

    def quota(arm: str, reserved: int = 0) -> None:
        out.append(ev.QuotaChanged(run_id, arm=arm, used=used[arm], reserved=reserved, cap=caps[arm], at=at(0.05)))

    def attempt(arm: str, task: str, no: int, letter: str | None) -> None:
        out.append(
            ev.AttemptStarted(run_id, arm=arm, task_id=task, attempt=no, attempt_id=f"{arm}-{task}-{no}", at=at())
        )
        spent = 0
        for turn in range(1, turns + 1):
            reserve = 1_400 + 300 * turn
            if letter == "C" and turn == turns:  # the reservation does not fit: the arm is censored
                out.append(
                    ev.LogMessage(
                        run_id,
                        level="warning",
                        arm=arm,
                        at=at(),
                        text=f"arm {arm} censored: cap {caps[arm]} tokens: the next call exceeds it",
                    )
                )
                break
            quota(arm, reserve)
            for piece in range(text_pieces):
                out.append(
                    ev.ModelText(run_id, arm=arm, task_id=task, text=PROSE[(turn + piece) % len(PROSE)], at=at(0.1))
                )
            if letter is None and turn == turns:
                return  # left mid-call: the model is still streaming
            prompt, completion = 900 + 350 * turn + rng.randrange(200), 120 + rng.randrange(160)
            used[arm] += prompt + completion
            spent += prompt + completion
            out.append(
                ev.CallFinished(
                    run_id,
                    arm=arm,
                    task_id=task,
                    attempt=no,
                    status="ok",
                    retry_index=0,
                    prompt_tokens=prompt,
                    completion_tokens=completion,
                    usage_source="reported",
                    latency_ms=800 + rng.randrange(900),
                    at=at(),
                )
            )
            quota(arm)
            tool = TOOL_NAMES[min(turn, len(TOOL_NAMES) - 1)] if turn < turns else "finish"
            path = "src/lib.py" if tool in ("read_file", "write_file") else None
            out.append(
                ev.ToolCalled(
                    run_id,
                    arm=arm,
                    task_id=task,
                    attempt=no,
                    tool=tool,
                    ok=True,
                    summary=f"{tool}({path})" if path else tool,
                    at=at(0.2),
                )
            )
        if letter is None:  # no turns at all: nothing was finished
            return
        cls = CLASS_OF_LETTER[letter]
        end = EndReason.CENSORED if letter == "C" else EndReason.FINISHED
        out.append(ev.AttemptFinished(run_id, arm=arm, task_id=task, attempt=no, end_reason=end, tokens=spent, at=at()))
        verdict = {"accepted": "pass", "timeout": "timeout", "environment": "error", "tampering": "tampering"}.get(
            cls, "fail"
        )
        out.append(
            ev.TaskGraded(
                run_id,
                arm=arm,
                task_id=task,
                attempt=no,
                verdict="" if letter in "CH" else verdict,
                failure_class=cls,
                accepted=cls == "accepted",
                tokens=spent,
                at=at(1.5),
            )
        )

    out.append(
        ev.RunStarted(
            run_id,
            manifest_sha256="9d90c2d2655ca4e7a35992c1c9aab8e64bbc2a7f19997a7fcef4a37e3311f6ce",
            arms=tuple(arms),
            task_ids=tuple(ids),
            caps=dict(caps),
            isolation={"network": "none", "pids": "limited"},
            at=at(0),
        )
    )
    for i, task in enumerate(ids):
        for arm in arms:
            if arm in censored:
                continue
            spelled = outcomes[arm][i] if i < len(outcomes[arm]) else None
            if spelled:
                for no, letter in enumerate(spelled, 1):
                    attempt(arm, task, no, letter)
                if "C" in spelled:
                    censored.add(arm)
                    out.append(
                        ev.ArmStateChanged(run_id, arm=arm, state=ArmState.CENSORED, unfinished=tuple(ids[i:]), at=at())
                    )
            elif i < n_spelled + running and spelled is None:
                attempt(arm, task, 1, None)
    if finish:
        for arm in arms:
            if arm not in censored:
                out.append(ev.ArmStateChanged(run_id, arm=arm, state=ArmState.FINISHED, at=at()))
        out.append(ev.RunFinished(run_id, status=RunStatus.FINISHED, at=at()))
    return out
