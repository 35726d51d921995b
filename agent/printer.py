"""The headless line printer: one line per meaningful engine event, for pipes and CI logs.

Text that came from a model (a tool's path, an error) is printed with control characters and
lone surrogates replaced, so no reply can move the cursor, clear the terminal or fail the write.
"""
from __future__ import annotations

import re
import sys
from typing import TextIO

from agent import events as ev

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    text = _CONTROL.sub("?", text.replace("\n", " "))
    return text.encode("utf-8", "replace").decode("utf-8")


def format_event(event: ev.Event) -> str | None:
    match event:
        case ev.RunStarted():
            caps = ", ".join(f"{k}={v:,}" for k, v in event.caps.items())
            iso = event.isolation
            line = (f"run {event.run_id} manifest={event.manifest_sha256[:12]} tasks={len(event.task_ids)} "
                    f"arms={','.join(event.arms)} caps: {caps} sandbox: {iso.get('sandbox')}")
            if iso.get("sandbox") != "bwrap":
                line += f"\nWARNING: grading without the full sandbox: {iso.get('missing')}"
            return line
        case ev.AttemptStarted():
            return f"[{event.arm}] {event.task_id} attempt {event.attempt} started"
        case ev.CallFinished() if event.status != "ok":
            return (f"[{event.arm}] {event.task_id} call try {event.retry_index}: {event.status} "
                    f"({event.prompt_tokens}+{event.completion_tokens} tokens, {event.usage_source})")
        case ev.AttemptFinished():
            return f"[{event.arm}] {event.task_id} attempt {event.attempt} ended: {event.end_reason} ({event.tokens:,} tokens)"
        case ev.TaskGraded():
            mark = "ACCEPTED" if event.accepted else event.failure_class
            return f"[{event.arm}] {event.task_id} attempt {event.attempt}: {event.verdict or '-'} -> {mark}"
        case ev.ArmStateChanged():
            tail = f"; never finished: {', '.join(event.unfinished)}" if event.unfinished else ""
            return f"[{event.arm}] arm {event.state}{tail}"
        case ev.EngineStateChanged():
            return f"engine {event.state}"
        case ev.LogMessage():
            return f"{'[' + event.arm + '] ' if event.arm else ''}{event.level}: {event.text}"
        case ev.RunFinished():
            return f"run {event.run_id} {event.status}"
    return None


async def print_events(events, out: TextIO = sys.stdout) -> None:
    async with events:
        async for event in events:
            line = format_event(event)
            if line:
                print(printable(line), file=out, flush=True)
