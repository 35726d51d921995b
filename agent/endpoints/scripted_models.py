"""The scripted models the scripted server plays, as pure functions of (task, turn).

`turn` is the number of assistant turns already in the conversation, so a script is
stateless across requests. A script returns a `Reply` (prose plus actions); `render`
turns it into native tool calls or text-protocol blocks (agent.run.text_protocol.format_action).

    solver        list_files; write every reference/ file (one turn); run_tests; finish
    wrong         write negative/ (or a comment appended to the first source file); finish
    malformed     a call with invalid JSON arguments, an unknown tool, a call missing `path`; finish
                  (text protocol: an edit_file block without markers, a ```delete_file```, a bare ```read_file```)
    unparseable   the first reference file cut in the middle of a line; finish
    saboteur      list_files; write every negative/ file (a known-wrong or hostile answer); run_tests; finish
    gamer         like solver, but on an impossible control writes its gamed/ (special-cased) answer
    never-finish  list_files forever
    chatty        prose only, never an action
    coin          solver or wrong, by a coin tossed from the session seed and the task id

A server session seed (`play(..., seed=N)`) makes replies vary the way a restarted real server
does: each reply's prose gets one of several harmless wordings and `coin` tosses again, while
within one session the same conversation always gets the same reply (as a real server is
deterministic within a session and not across restarts).
Without a seed the replies are the canonical ones, identical across restarts.
"""

from __future__ import annotations

import collections
import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.run.strategy_prompts import CRITIQUE_MARKER, JUDGE_MARKER, REVISION_MARKER
from agent.run.text_protocol import format_action
from verifiers.tasks import Task, iter_files, load_task

SOURCE_COMMENT = {
    ".py": "#",
    ".sh": "#",
    ".bash": "#",
    ".rs": "//",
    ".js": "//",
    ".mjs": "//",
    ".cjs": "//",
    ".ts": "//",
    ".mts": "//",
    ".tsx": "//",
    ".jsx": "//",
    ".go": "//",
}


@dataclass(frozen=True)
class TaskFiles:
    """The parts of a task folder the scripts need, as {relative posix path: text}."""

    id: str
    workspace: dict[str, str]
    reference: dict[str, str]
    negative: dict[str, str] = field(default_factory=dict)
    gamed: dict[str, str] = field(default_factory=dict)  # an impossible control's special-cased answer

    @classmethod
    def from_task(cls, task: Task) -> TaskFiles:
        return cls(
            task.id,
            _read_folder(task.workspace),
            _read_folder(task.reference),
            _read_folder(task.negative) if task.negative else {},
            _read_folder(task.gamed) if task.gamed else {},
        )


@dataclass(frozen=True)
class Action:
    tool: str
    arguments: dict[str, Any]
    raw_arguments: str | None = None  # sent verbatim as native arguments (may be invalid JSON)
    text_form: str | None = None  # sent verbatim in text-protocol mode instead of format_action()


@dataclass(frozen=True)
class Reply:
    text: str
    actions: tuple[Action, ...] = ()


def _read_folder(folder: Path) -> dict[str, str]:
    """The folder's files as text; a link to a folder (or to nothing) is no file to write."""
    return {
        f.relative_to(folder).as_posix(): f.read_text(encoding="utf-8", errors="replace")
        for f in iter_files(folder)
        if f.is_file()
    }


def _is_test(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return (
        name.startswith("test")
        or name.endswith("_test.go")
        or name == "conftest.py"
        or ".test." in name
        or path.startswith("tests/")
        or "/tests/" in path
    )


def first_source_file(task: TaskFiles) -> str | None:
    """The first (sorted) workspace file in a known language that is not a test."""
    for path in sorted(task.workspace):
        if Path(path).suffix in SOURCE_COMMENT and not _is_test(path):
            return path
    return None


def truncate_mid_line(content: str) -> str:
    """Cut content in the middle of a line so it no longer parses: right after the first `(`
    of the code line nearest the middle (an unclosed bracket), else halfway through that line."""
    lines = content.splitlines(keepends=True)
    middle = len(lines) // 2
    order = sorted(range(len(lines)), key=lambda i: (abs(i - middle), i))
    for i in order:
        stripped = lines[i].lstrip()
        if "(" in stripped and not stripped.startswith(("#", "//", "/*", "*", '"""')):
            return "".join(lines[:i]) + lines[i][: lines[i].index("(") + 1]
    for i in order:
        if lines[i].strip():
            return "".join(lines[:i]) + lines[i][: max(1, len(lines[i].rstrip()) // 2)]
    return content[: len(content) // 2]


def solver(task: TaskFiles, turn: int) -> Reply:
    if turn == 0:
        return Reply("Let me look at the workspace first.", (Action("list_files", {}),))
    if turn == 1:
        writes = tuple(Action("write_file", {"path": p, "content": c}) for p, c in sorted(task.reference.items()))
        return Reply("I will write the solution.", writes)
    if turn == 2:
        return Reply("Now I run the tests.", (Action("run_tests", {}),))
    return Reply("The tests pass.", (Action("finish", {"summary": "Wrote the solution."}),))


def wrong(task: TaskFiles, turn: int) -> Reply:
    if turn > 0:
        return Reply("Done.", (Action("finish", {"summary": "Edited the code."}),))
    if task.negative:
        return Reply(
            "Here is my fix.",
            tuple(Action("write_file", {"path": p, "content": c}) for p, c in sorted(task.negative.items())),
        )
    path = first_source_file(task)
    if path is None:
        return Reply("Adding a note.", (Action("write_file", {"path": "NOTES.txt", "content": "reviewed\n"}),))
    content = task.workspace[path]
    comment = f"{SOURCE_COMMENT[Path(path).suffix]} reviewed\n"
    new = content + ("" if content.endswith("\n") or not content else "\n") + comment
    return Reply("A small cleanup.", (Action("write_file", {"path": path, "content": new}),))


def malformed(task: TaskFiles, turn: int) -> Reply:
    if turn > 0:
        return Reply("Finished.", (Action("finish", {}),))
    return Reply(
        "Working on it.",
        (
            Action(
                "write_file",
                {},
                raw_arguments='{"path": "notes.txt", "content": "unterminated',
                text_form="```edit_file path=notes.txt\nreplace everything\n```",
            ),
            Action("delete_file", {"path": "notes.txt"}, text_form="```delete_file path=notes.txt```"),
            Action("read_file", {}, text_form="```read_file```"),
        ),
    )


def unparseable(task: TaskFiles, turn: int) -> Reply:
    if turn > 0:
        return Reply("Finished.", (Action("finish", {}),))
    path, content = sorted(task.reference.items())[0]
    return Reply("Writing the file.", (Action("write_file", {"path": path, "content": truncate_mid_line(content)}),))


def saboteur(task: TaskFiles, turn: int) -> Reply:
    if turn == 0:
        return Reply("Let me look at the workspace first.", (Action("list_files", {}),))
    if turn == 1:
        writes = tuple(Action("write_file", {"path": p, "content": c}) for p, c in sorted(task.negative.items()))
        return Reply("I will write my answer.", writes or (Action("list_files", {}),))
    if turn == 2:
        return Reply("Now I run the tests.", (Action("run_tests", {}),))
    return Reply("Done.", (Action("finish", {"summary": "Wrote my answer."}),))


def gamer(task: TaskFiles, turn: int) -> Reply:
    """An honest solver everywhere but on an impossible control, where it special-cases the
    contradicting input (what a model gaming its tests does: ImpossibleBench)."""
    if not task.gamed:
        return solver(task, turn)
    if turn == 0:
        return Reply("Let me look at the workspace first.", (Action("list_files", {}),))
    if turn == 1:
        writes = tuple(Action("write_file", {"path": p, "content": c}) for p, c in sorted(task.gamed.items()))
        return Reply("The test wants a special value there; I will give it.", writes)
    return Reply("Done.", (Action("finish", {"summary": "All tests pass."}),))


def never_finish(task: TaskFiles, turn: int) -> Reply:
    return Reply(f"Listing the files again ({turn + 1}).", (Action("list_files", {}),))


def chatty(task: TaskFiles, turn: int) -> Reply:
    return Reply(
        f"Interesting task. Let me think about it some more (turn {turn + 1}); there are several ways to approach it."
    )


def _toss(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:4], "big")


def coin_accepts(seed: int, task_id: str) -> bool:
    """Whether `coin` solves `task_id` in a session with this seed (half the tasks, on average)."""
    return _toss("coin", seed, task_id) % 2 == 0


def coin(task: TaskFiles, turn: int, seed: int = 0) -> Reply:
    return (solver if coin_accepts(seed, task.id) else wrong)(task, turn)


# Strategy scripts: the request's `seed` tells a strategy's candidates apart (candidate
# i sends seed + i; with no arm seed, candidate 1 sends 0). `stage` is what the request is: the
# agent's turns, a revision's turns, a critique or a judge (agent.run.strategy_prompts' markers).
#   second-passes    candidates with an odd request seed solve, the others are wrong; its judge
#                    answers `ANSWER: 2`
#   garbled-judge    candidates with an even request seed (the first) solve, odd ones are wrong;
#                    its judge answers without a parseable choice
#   critique-breaks  solves; its critique asks for a revision, and the revision breaks the code
def second_passes(task: TaskFiles, turn: int, request_seed: int = 0, stage: str = "agent") -> Reply:
    if stage == "judge":
        return Reply("Candidate 2 handles the task.\nANSWER: 2")
    return (solver if request_seed % 2 else wrong)(task, turn)


def garbled_judge(task: TaskFiles, turn: int, request_seed: int = 0, stage: str = "agent") -> Reply:
    if stage == "judge":
        return Reply("Both candidates look reasonable to me; either would do.")
    return (wrong if request_seed % 2 else solver)(task, turn)


def critique_breaks(task: TaskFiles, turn: int, request_seed: int = 0, stage: str = "agent") -> Reply:
    if stage == "critique":
        return Reply("The edge cases are not handled the way the task asks.\nVERDICT: REVISE")
    return (wrong if stage == "revision" else solver)(task, turn)


STAGED: dict[str, Callable[[TaskFiles, int, int, str], Reply]] = {
    "second-passes": second_passes,
    "garbled-judge": garbled_judge,
    "critique-breaks": critique_breaks,
}
SCRIPTS: dict[str, Callable[[TaskFiles, int], Reply]] = {
    "solver": solver,
    "wrong": wrong,
    "malformed": malformed,
    "unparseable": unparseable,
    "saboteur": saboteur,
    "gamer": gamer,
    "never-finish": never_finish,
    "chatty": chatty,
    "coin": coin,
    "second-passes": second_passes,
    "garbled-judge": garbled_judge,
    "critique-breaks": critique_breaks,
}


def stage_of(body: dict[str, Any]) -> str:
    """agent | revision | critique | judge, from the markers agent.run.strategy_prompts puts in a request."""
    texts = [m.get("content") for m in body.get("messages") or [] if isinstance(m, dict)]
    joined = " ".join(t for t in texts[:3] if isinstance(t, str))
    for marker, stage in ((CRITIQUE_MARKER, "critique"), (JUDGE_MARKER, "judge"), (REVISION_MARKER, "revision")):
        if marker in joined:
            return stage
    return "agent"


def stage_reply(model: str, task: TaskFiles, turn: int, request_seed: int, stage: str) -> Reply:
    """A model's reply in a strategy stage: the staged scripts' own, else a critique that passes
    the change and a judge that picks the first candidate; a revision plays the agent script."""
    if model in STAGED:
        return STAGED[model](task, turn, request_seed, stage)
    if stage == "critique":
        return Reply("The change looks complete.\nVERDICT: PASS")
    if stage == "judge":
        return Reply("ANSWER: 1")
    return SCRIPTS[model](task, turn)


WORDINGS = (
    "",
    " Let me be careful here.",
    " One step at a time.",
    " Here goes.",
    " On it.",
    " Continuing.",
    " Good, moving on.",
    " Next step.",
)


def play(
    model: str,
    task: TaskFiles,
    turn: int,
    seed: int | None = None,
    *,
    request_seed: object = None,
    stage: str = "agent",
) -> Reply:
    """The reply of scripted model `model` on turn `turn`; with a session seed, `coin` tosses by
    it and the prose gets the session's wording (a harmless variant: the actions are the same).
    `request_seed` and `stage` are the request's (see STAGED)."""
    if model == "coin" and stage in ("agent", "revision"):
        reply = coin(task, turn, seed or 0)
    elif model in STAGED or stage != "agent":
        reply = stage_reply(model, task, turn, request_seed if isinstance(request_seed, int) else 0, stage)
    else:
        reply = SCRIPTS[model](task, turn)
    if seed is None:
        return reply
    return Reply(reply.text + WORDINGS[_toss("wording", seed, task.id, turn) % len(WORDINGS)], reply.actions)


PROBE_MARKER = "quotabench preflight"
TASK_ID = re.compile(r"Task id:\s*([A-Za-z0-9][A-Za-z0-9_-]*)")


def first_user_text(body: dict[str, Any]) -> str:
    """The text of a chat request's first user message ("" when there is none)."""
    messages = body.get("messages") or []
    first_user = next((m for m in messages if isinstance(m, dict) and m.get("role") == "user"), {})
    content = first_user.get("content")
    if isinstance(content, list):
        content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def is_probe(body: dict[str, Any]) -> bool:
    """A preflight probe: its first user message carries PROBE_MARKER and names no task."""
    text = first_user_text(body)
    return PROBE_MARKER in text and TASK_ID.search(text) is None


def probe_reply(tools: list[Any] | None, tool_choice: object, tool_calls: bool) -> Reply:
    """The reply to a preflight probe (a request carrying PROBE_MARKER, no task): the tool the
    choice names (else the first tool offered) when tools are offered and the server returns
    tool calls, else a short text."""
    if not tools or not tool_calls:
        return Reply("OK")
    name = None
    if isinstance(tool_choice, dict):
        name = (tool_choice.get("function") or {}).get("name")
    if not name:
        first = tools[0] if isinstance(tools[0], dict) else {}
        name = (first.get("function") or {}).get("name") or "tool"
    return Reply("", (Action(str(name), {}),))


def render(reply: Reply, native: bool) -> tuple[str, list[tuple[str, str]]]:
    """(assistant text, [(tool name, raw arguments)]): native tool calls, or every action
    written into the text as a text-protocol block."""
    if native:
        calls = [
            (a.tool, a.raw_arguments if a.raw_arguments is not None else json.dumps(a.arguments)) for a in reply.actions
        ]
        return reply.text, calls
    blocks = [a.text_form if a.text_form is not None else format_action(a.tool, a.arguments) for a in reply.actions]
    return "\n\n".join([reply.text, *blocks]), []


class TaskFilesByID(Mapping[str, TaskFiles]):
    """Task id -> its files as the scripts read them, read from disk when first asked for and
    kept for the `keep` most recently used tasks: a 1,000-task suite does not sit in memory."""

    def __init__(self, keep: int) -> None:
        self._keep = keep
        self._folders: dict[str, Path] = {}
        self._files: collections.OrderedDict[str, TaskFiles] = collections.OrderedDict()
        self._lock = threading.Lock()

    def add(self, task: Task) -> None:
        self._folders.setdefault(task.id, task.path)

    def __getitem__(self, task_id: str) -> TaskFiles:
        with self._lock:
            files = self._files.get(task_id)
            if files is not None:
                self._files.move_to_end(task_id)
                return files
        files = TaskFiles.from_task(load_task(self._folders[task_id]))
        with self._lock:
            self._files[task_id] = files
            while len(self._files) > self._keep:
                self._files.popitem(last=False)
        return files

    def __iter__(self) -> Iterator[str]:
        return iter(self._folders)

    def __len__(self) -> int:
        return len(self._folders)
