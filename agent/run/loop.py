"""The agent loop: query the model, execute its actions, repeat until it finishes or a limit hits.

`run` calls `step`; `step` is "query the model, execute its actions". Stop conditions are
exceptions carrying the reason (after mini-swe-agent). The loop knows nothing about ledgers,
quotas or HTTP: the engine hands it a `query` function and callbacks.

Two kinds of errors, as in mini-swe-agent: whatever is wrong with a tool call (bad JSON, a bad
path, an OS error on the file) is shown to the model as a refused call and the loop goes on;
`AttemptEnded` ends the attempt. The attempt's time limit holds inside a turn too: the model
call and run_tests get only the time that is left, and tool calls after it has passed are refused.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agent.config import Limits
from agent.endpoints.chat import Completion
from agent.run.text_protocol import INSTRUCTIONS, parse_actions
from agent.run.tools import MAX_ARGUMENT_CHARS, TOOL_SCHEMAS, ToolError, ToolOutcome, Workspace, parse_arguments
from agent.states import EndReason
from agent.tool_names import Tool
from verifiers.tasks import Task

SYSTEM_PROMPT = """You are a careful software engineer working alone in a small repository (the workspace).
Read the relevant files, make the change the task asks for, run the visible tests, and call finish
when you are done. The visible tests cover only the happy path: reviewers will run stricter tests,
so handle edge cases and errors the way a demanding reviewer expects. Paths are relative to the workspace."""
NUDGE = "You did not call any tool. Use the tools to inspect and edit files, run_tests to check, and finish when done."
MAX_CALLS_PER_TURN = 32
# A file tool that fails in a way the Workspace did not foresee is still the model's bad call.
_TOOL_FAULTS = (ToolError, OSError, ValueError, RuntimeError, RecursionError, OverflowError, MemoryError)


class AttemptEnded(Exception):
    """Raised to stop the loop; `reason` is recorded as the attempt's end_reason."""

    def __init__(self, reason: EndReason, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


QueryFn = Callable[
    [list[dict[str, Any]], list[dict[str, Any]] | None, int, float], Awaitable[Completion]
]  # ..., turn, deadline
RunTestsFn = Callable[[float], Awaitable[tuple[bool, str]]]  # seconds left
ToolHook = Callable[[int, str, str, ToolOutcome, str | None], Awaitable[None]]  # turn, tool, raw args, outcome, call id


@dataclass
class LoopState:
    turns: int = 0
    tokens: int = 0
    malformed: int = 0
    visible_passed: bool | None = None
    started: float = field(default_factory=time.monotonic)
    deadline: float = float("inf")  # time.monotonic() at which the attempt's time is up

    def time_left(self) -> float:
        return self.deadline - time.monotonic()


def initial_messages(task: Task, protocol: str, files: str) -> list[dict[str, Any]]:
    system = SYSTEM_PROMPT + ("\n\n" + INSTRUCTIONS if protocol == "text" else "")
    user = f"Task id: {task.id}\nLanguage: {task.language}\n\n{task.prompt}\n\nFiles in the workspace:\n{files}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


class AgentLoop:
    def __init__(
        self,
        task: Task,
        workspace: Workspace,
        protocol: str,
        limits: Limits,
        *,
        query: QueryFn,
        run_tests: RunTestsFn,
        on_tool: ToolHook,
    ):
        self.task, self.workspace, self.protocol, self.limits = task, workspace, protocol, limits
        self.query, self.run_tests, self.on_tool = query, run_tests, on_tool
        self.state = LoopState()
        self.state.deadline = self.state.started + limits.attempt_timeout_s
        self.messages = initial_messages(task, protocol, workspace.list_files())

    async def run(self) -> tuple[EndReason, str]:
        """Run to the end; returns (end_reason, detail)."""
        try:
            while True:
                await self.step()
        except AttemptEnded as ended:
            return ended.reason, ended.detail

    async def step(self) -> None:
        self._check_limits()
        self.state.turns += 1
        tools = TOOL_SCHEMAS if self.protocol == "tools" else None
        completion = await self.query(self.messages, tools, self.state.turns, self.state.deadline)
        self.state.tokens += completion.prompt_tokens + completion.completion_tokens
        if self.protocol == "tools":
            await self._execute_tool_calls(completion)
        else:
            await self._execute_text_actions(completion)
        self._check_time()

    def _check_limits(self) -> None:
        if self.state.turns >= self.limits.max_turns:
            raise AttemptEnded(EndReason.TURN_LIMIT, f"{self.state.turns} turns")
        if self.state.tokens >= self.limits.max_tokens_per_attempt:
            raise AttemptEnded(EndReason.TOKEN_LIMIT, f"{self.state.tokens} tokens")
        self._check_time()

    def _check_time(self) -> None:
        if self.state.time_left() <= 0:
            raise AttemptEnded(EndReason.TIME_LIMIT, f"{self.limits.attempt_timeout_s:g} s")

    def _refusal(self, index: int) -> str | None:
        """Why the index-th call of a turn is not run, or None."""
        if index >= MAX_CALLS_PER_TURN:
            return f"skipped: at most {MAX_CALLS_PER_TURN} tool calls run per turn"
        if self.state.time_left() <= 0:
            return f"refused: the attempt's time limit ({self.limits.attempt_timeout_s:g} s) has passed"
        return None

    async def _execute_tool_calls(self, completion: Completion) -> None:
        calls = completion.tool_calls
        self.messages.append(
            {
                "role": "assistant",
                "content": completion.text or "",  # llama-cpp-python rejects null content
                **(
                    {
                        "tool_calls": [
                            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                            for c in calls
                        ]
                    }
                    if calls
                    else {}
                ),
            }
        )
        if not calls:
            self.messages.append({"role": "user", "content": NUDGE})
            return
        finished = False
        for index, call in enumerate(calls):
            refusal = self._refusal(index)
            if finished:
                result = "skipped: finish was already called"
            elif refusal:
                result = refusal
            else:
                outcome = await self._execute(call.name, call.arguments, call_id=call.id)
                finished = outcome.tool == Tool.FINISH and outcome.ok
                result = outcome.output
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        if finished:
            raise AttemptEnded(EndReason.FINISHED)

    async def _execute_text_actions(self, completion: Completion) -> None:
        self.messages.append({"role": "assistant", "content": completion.text})
        actions = parse_actions(completion.text)
        if not actions:
            self.messages.append({"role": "user", "content": NUDGE.replace("call any tool", "write any action block")})
            return
        results = []
        for i, action in enumerate(actions, 1):
            refusal = self._refusal(i - 1)
            if refusal:
                results.append(f"[{i}] {action.tool}: {refusal}")
                continue
            outcome = await self._execute(action.tool, action.arguments, preset_error=action.error)
            results.append(f"[{i}] {action.tool}: {outcome.output}")
            if outcome.tool == Tool.FINISH and outcome.ok:
                raise AttemptEnded(EndReason.FINISHED)
        self.messages.append({"role": "user", "content": "Results:\n" + "\n\n".join(results)})

    async def _execute(
        self, tool: str, raw_args: str | dict[str, Any], preset_error: str | None = None, call_id: str | None = None
    ) -> ToolOutcome:
        raw_text = raw_args if isinstance(raw_args, str) else json.dumps(raw_args)
        try:
            if preset_error:
                raise ToolError(preset_error)
            args = parse_arguments(tool, raw_args)
            outcome = None if tool == Tool.RUN_TESTS else self._file_tool(tool, args)
        except _TOOL_FAULTS as exc:
            self.state.malformed += 1
            message = str(exc) if isinstance(exc, ToolError) else f"{tool} failed: {type(exc).__name__}: {exc}"
            outcome = ToolOutcome(tool, False, f"error: {message}", _path_of(raw_args), malformed=True)
        if outcome is None:  # outside the try: a failure of the test runner is the harness's, not the model's
            outcome = await self._run_tests()
        await self.on_tool(self.state.turns, tool, raw_text, outcome, call_id)
        return outcome

    def _file_tool(self, tool: str, args: dict[str, Any]) -> ToolOutcome:
        ws = self.workspace
        if tool == Tool.LIST_FILES:
            return ToolOutcome(tool, True, ws.list_files())
        if tool == Tool.READ_FILE:
            return ToolOutcome(tool, True, ws.read_file(args["path"]), args["path"])
        if tool == Tool.WRITE_FILE:
            out = ws.write_file(args["path"], args["content"])
            return ToolOutcome(tool, True, out, args["path"])
        if tool == Tool.EDIT_FILE:
            out = ws.edit_file(args["path"], args["old"], args["new"])
            return ToolOutcome(tool, True, out, args["path"])
        return ToolOutcome(Tool.FINISH, True, "finished")

    async def _run_tests(self) -> ToolOutcome:
        passed, output = await self.run_tests(max(0.0, self.state.time_left()))
        self.state.visible_passed = passed
        cap = self.limits.tool_output_chars
        text = output if len(output) <= cap else output[: cap // 3] + "\n[...]\n" + output[-(2 * cap) // 3 :]
        return ToolOutcome(Tool.RUN_TESTS, True, ("PASSED\n" if passed else "FAILED\n") + text)


def _path_of(raw_args: str | dict[str, Any]) -> str | None:
    if isinstance(raw_args, dict):
        value = raw_args.get("path")
    else:
        if not raw_args or len(raw_args) > MAX_ARGUMENT_CHARS:
            return None
        try:
            value = json.loads(raw_args).get("path")
        except (ValueError, AttributeError, RecursionError):
            return None
    return value[:1024] if isinstance(value, str) else None
