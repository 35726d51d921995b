"""Each task's first request, sized without sending it: the system prompt, the task's prompt and
its file list (plus the tool schemas for `tools`), estimated the way a call reserves its quota
(agent/endpoints/tokens.py). Conversations only grow from there, so a first request + max_tokens
that passes an arm's cap censors the arm at that task's first call — preflight refuses such a
run before any probe is sent, and `run` and `validate` warn about each task that would.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agent.endpoints.tokens import estimate_messages_tokens
from agent.run.loop import initial_messages
from agent.run.tools import TOOL_SCHEMAS, ToolError, Workspace
from verifiers.tasks import Task


@dataclass(frozen=True)
class FirstRequest:
    task_id: str
    tokens: int  # estimated prompt tokens, before max_tokens


def first_request(task: Task, protocol: str) -> FirstRequest:
    try:
        files = Workspace(task.workspace).list_files()
    except ToolError:  # the attempt will say so; the estimate goes without the list
        files = ""
    tools = TOOL_SCHEMAS if protocol == "tools" else None
    return FirstRequest(task.id, estimate_messages_tokens(initial_messages(task, protocol, files), tools))


def largest(tasks: Iterable[Task], protocol: str) -> FirstRequest:
    """The largest first request of `tasks` (task id "" and 0 tokens for none)."""
    return max((first_request(t, protocol) for t in tasks), key=lambda r: r.tokens, default=FirstRequest("", 0))


def over_cap(tasks: Iterable[Task], protocol: str, max_tokens: int, cap: int) -> list[FirstRequest]:
    """The tasks whose first request + max_tokens passes `cap`: an arm at that cap is censored there."""
    return [r for r in (first_request(t, protocol) for t in tasks) if r.tokens + max_tokens > cap]


def over_cap_line(request: FirstRequest, arm: str, max_tokens: int, cap: int) -> str:
    """One warning line for a task whose first request an arm cannot afford."""
    return (
        f"task {request.task_id}: its first request alone is ~{request.tokens:,} tokens (+ max_tokens {max_tokens:,}), "
        f"past {arm}'s cap_tokens {cap:,}: the arm is censored at that task's first call "
        "— shorten the prompt, leave the task out (run.tasks) or raise cap_tokens"
    )
