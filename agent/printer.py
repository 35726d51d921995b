"""The headless line printer: one line per meaningful engine event, for pipes and CI logs.

Text that came from a model (a tool's path, an error) is printed with control characters and
lone surrogates replaced, so no reply can move the cursor, clear the terminal or fail the write.
"""

from __future__ import annotations

import re
import sys
from typing import TextIO

from anyio.streams.memory import MemoryObjectReceiveStream

from agent import events as ev
from agent.states import ArmState, EngineState

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    text = _CONTROL.sub("?", text.replace("\n", " "))
    return text.encode("utf-8", "replace").decode("utf-8")


def format_event(event: ev.Event) -> str | None:
    match event:
        case ev.RunStarted():
            caps = ", ".join(f"{k}={v:,}" for k, v in event.caps.items())
            iso = event.isolation
            line = (
                f"run {event.run_id} manifest={event.manifest_sha256[:12]} tasks={len(event.task_ids)} "
                f"arms={','.join(event.arms)} caps: {caps} sandbox: {iso.get('sandbox')}"
            )
            if iso.get("sandbox") != "bwrap":
                line += f"\nWARNING: grading without the full sandbox: {iso.get('missing')}"
            return line
        case ev.AttemptStarted():
            stage = "" if event.stage == "attempt" else f" ({event.stage})"
            return f"[{event.arm}] {event.task_id} attempt {event.attempt}{stage} started"
        case ev.Submitted():  # a strategy's answer to the task: the outcome that counts
            what = f"attempt {event.attempt} by {event.route}" if event.attempt else "nothing (no valid selection)"
            return (
                f"[{event.arm}] {event.task_id} submitted {what} ({event.covered} of "
                f"{event.candidates} candidates pass) -> {'ACCEPTED' if event.accepted else 'not accepted'}"
            )
        case ev.CallFinished() if event.status != "ok":
            return (
                f"[{event.arm}] {event.task_id} call try {event.retry_index}: {event.status} "
                f"({event.prompt_tokens}+{event.completion_tokens} tokens, {event.usage_source})"
            )
        case ev.AttemptFinished():
            return f"[{event.arm}] {event.task_id} attempt {event.attempt} ended: {event.end_reason} ({event.tokens:,} tokens)"
        case ev.TaskGraded():
            mark = "ACCEPTED" if event.accepted else event.failure_class
            return f"[{event.arm}] {event.task_id} attempt {event.attempt}: {event.verdict or '-'} -> {mark}"
        case ev.ArmStateChanged():
            what = "not run (the comparison was decided)" if event.state == ArmState.DECIDED else "never finished"
            tail = f"; {what}: {', '.join(event.unfinished)}" if event.unfinished else ""
            return f"[{event.arm}] arm {event.state}{tail}"
        case ev.AutoPaused():
            return " ".join(choice_point(event))
        case ev.ProviderQuotaSpent():
            then = (
                "the run is paused until it is topped up and resumed"
                if event.policy is None
                else f"auto_pause_policy = {event.policy}: "
                + ("aborting the run" if event.policy == "abort" else "the arm is censored, the other goes on")
            )
            return (
                f"[{event.arm}] PROVIDER QUOTA SPENT: {event.reason}; {then} — "
                "`quotabench resume` continues the arm once the account is topped up"
            )
        case ev.DecisionUpdated():
            return f"decision: {decision_text(event)}"
        case ev.EngineStateChanged() if event.state == EngineState.ABORTING:
            return f"engine {abort_line(event.waiting_for)}"
        case ev.EngineStateChanged() if event.state == EngineState.PREFLIGHT:
            return "engine preflight: checking each arm's endpoint before the first attempt"
        case ev.EngineStateChanged():
            return f"engine {event.state}"
        case ev.LogMessage():
            return f"{'[' + event.arm + '] ' if event.arm else ''}{event.level}: {event.text}"
        case ev.RunFinished():
            return f"run {event.run_id} {event.status}"
    return None


POLICY_DOES = {
    "continue": "continuing: the arm is censored if its cap runs out",
    "stop-arm": "stopping this arm: its remaining tasks are not run, the other arm goes on",
    "abort": "aborting the run: calls in flight finish, nothing new starts",
}


def choice_point(event: ev.AutoPaused) -> tuple[str, str]:
    """The auto-pause choice point as the live view's window states it, and what the headless
    policy (run.auto_pause_policy, --on-auto-pause) chose."""
    share = (event.used + event.reserved) / event.cap if event.cap else 1.0
    head = (
        f"[{event.arm}] AUTO-PAUSE: arm {event.arm} at {share:.0%} of its cap: {event.used:,} used + "
        f"{event.reserved:,} in flight / cap {event.cap:,}"
    )
    if event.next_call:
        after = (event.used + event.reserved + event.next_call) / event.cap if event.cap else float("inf")
        head += f"; its next call reserves {event.next_call:,} tokens -> {after:.0%}" + (
            ", past the cap" if after > 1 else ""
        )
    choices = (
        f"[{event.arm}]   choices: continue (censored if the cap runs out) | raise the cap | "
        f"stop arm {event.arm} | abort"
    )
    if event.policy is None:
        return head, f"{choices}; the run is paused until one is chosen"
    return head, f"{choices}; auto_pause_policy = {event.policy}: {POLICY_DOES.get(event.policy, event.policy)}"


def format_lines(event: ev.Event) -> list[str]:
    """The printed lines of an event: the choice point takes two (what happened, the choices)."""
    if isinstance(event, ev.AutoPaused):
        return list(choice_point(event))
    line = format_event(event)
    return [line] if line else []


async def print_events(events: MemoryObjectReceiveStream[ev.Event], out: TextIO = sys.stdout) -> None:
    async with events:
        async for event in events:
            for line in format_lines(event):  # printable() flattens any newline a model put in a line
                print(printable(line), file=out, flush=True)


def abort_line(waiting_for: tuple[str, ...], again: str = "Ctrl-C again") -> str:
    """What a graceful abort waits for, and how to stop at once."""
    if not waiting_for:
        return "aborting: nothing in flight, the run stops as soon as its rows are written"
    shown = ", ".join(waiting_for[:4]) + (f" and {len(waiting_for) - 4} more" if len(waiting_for) > 4 else "")
    return f"aborting: waiting for {shown}; {again} to stop now"


def decision_text(event: ev.DecisionUpdated) -> str:
    """The decision line with what stopping saves (the live view shows the same words)."""
    text = event.line
    if event.decided and event.saved:
        saved = " and ".join(f"~{n:,} tokens of {arm}" for arm, n in event.saved.items())
        text += f"; stopping now saves {saved}" if not event.stopping else f"; stopping both arms, saving {saved}"
    return text
