"""The prompts of a strategy's model stages (critique, revision, judge) and the strict parsers
of their replies. Each prompt's first user message keeps the agent's `Task id:` line,
and the system prompt names the stage (CRITIQUE_MARKER, JUDGE_MARKER), so a server that plays
scripted models can tell the stages apart (agent/endpoints/scripted_models.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from verifiers.tasks import Task

CRITIQUE_MARKER = "quotabench critique stage"
JUDGE_MARKER = "quotabench judge stage"
REVISION_MARKER = "quotabench revision stage"
DIFF_CHARS = 12_000  # of each diff shown to a critique or a judge
OUTPUT_CHARS = 3_000  # of each visible-test output shown
_VERDICT = re.compile(r"^VERDICT:\s*(PASS|REVISE)\s*$", re.IGNORECASE)
_ANSWER = re.compile(r"^ANSWER:\s*(\d{1,3})\s*$", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\{\s*(\d{1,3})\s*\}")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more characters]"


def critique_messages(task: Task, diff: str, visible: str) -> list[dict[str, Any]]:
    system = (
        f"You review a colleague's change ({CRITIQUE_MARKER}). Read the task, the diff and the output of "
        "the visible tests. Point out what is wrong or missing. End with exactly one line: "
        "`VERDICT: PASS` if the change is correct and complete, else `VERDICT: REVISE`."
    )
    user = (
        f"Task id: {task.id}\nLanguage: {task.language}\n\n{task.prompt}\n\n"
        f"The change (unified diff against the original files):\n{_cut(diff or '(no change)', DIFF_CHARS)}\n\n"
        f"Visible tests:\n{_cut(visible, OUTPUT_CHARS)}"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def revision_message(critique: str) -> dict[str, Any]:
    """Appended to the agent's first prompt for a revision; the workspace holds the attempt's files."""
    return {
        "role": "user",
        "content": (
            f"({REVISION_MARKER}) The workspace already holds your previous attempt at this task. A reviewer "
            f"wrote:\n{_cut(critique, OUTPUT_CHARS)}\n\nRevise the code where the review is right, run the "
            "visible tests, and call finish."
        ),
    }


def judge_messages(task: Task, candidates: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """`candidates`: (diff, visible-test summary) per candidate, numbered from 1 in the prompt."""
    system = (
        f"You choose the best of several candidate changes for one task ({JUDGE_MARKER}). Check each "
        "against the task. End with exactly one line `ANSWER: N`, N the number of the candidate to submit."
    )
    parts = [f"Task id: {task.id}\nLanguage: {task.language}\n\n{task.prompt}"]
    share = max(1000, DIFF_CHARS // max(1, len(candidates)))
    for i, (diff, visible) in enumerate(candidates, 1):
        parts.append(f"### Candidate {i}\n{_cut(diff or '(no change)', share)}\nVisible tests: {visible}")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


@dataclass(frozen=True)
class Parsed:
    value: str | int | None  # "PASS"/"REVISE", a 1-based candidate number, or None
    route: str  # strict | boxed | unparseable | empty | out_of_range


def _last_line(text: str) -> str:
    lines = [line.strip().strip("`*").strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def parse_verdict(text: str | None) -> Parsed:
    """The critique's verdict: its last non-empty line must be `VERDICT: PASS|REVISE`."""
    if not text or not text.strip():
        return Parsed(None, "empty")
    match = _VERDICT.match(_last_line(text))
    return Parsed(match.group(1).upper(), "strict") if match else Parsed(None, "unparseable")


def parse_choice(text: str | None, n: int) -> Parsed:
    """The judge's choice: strictly the last line `ANSWER: N`; else, recorded as its own route,
    a number in the last `\\boxed{N}`; N must be a candidate's number (1..n)."""
    if not text or not text.strip():
        return Parsed(None, "empty")
    match = _ANSWER.match(_last_line(text))
    route = "strict"
    if match is None:
        boxed = _BOXED.findall(text)
        if not boxed:
            return Parsed(None, "unparseable")
        number, route = int(boxed[-1]), "boxed"
    else:
        number = int(match.group(1))
    return Parsed(number, route) if 1 <= number <= n else Parsed(None, "out_of_range")
