"""A ledger of fixed rows written through agent.ledger.Ledger, for SVG snapshots and for a
crashed run: same ids, times and numbers every time.

RUN (finished; A = solver over tools, B = malformed over text):
    py-add    A accepted on 1            B harness_error, then mechanics (3 malformed calls, no edit)
    py-greet  A reasoning, accepted on 2 B mechanics twice (greet.py:5 does not parse)
    js-clamp  A timeout twice            B harness_error twice
CRASHED (status 'running', never finished): A and B each have one attempt still 'running'
with a call 'in_flight'; no grades; js-clamp never started.
"""

from __future__ import annotations

import json
from pathlib import Path

from agent.ledger import Ledger

RUN = "01JFIXRUN1" + "0" * 16
CRASHED = "01JFIXRUN2" + "0" * 16
ARM_IDS = {
    (RUN, "A"): "01JFIXED000000000000ARMA1",
    (RUN, "B"): "01JFIXED000000000000ARMB1",
    (CRASHED, "A"): "01JFIXED000000000000ARMA2",
    (CRASHED, "B"): "01JFIXED000000000000ARMB2",
}
CONFIG = {"path": "demo.toml", "toml": '[run]\nsuites = ["demo"]\nmax_attempts = 2\n\n[run.limits]\nmax_turns = 12\n'}

ADD_FIXTURE = "def add(a, b):\n    raise NotImplementedError\n"
ADD_SOLVED = "def add(a, b):\n    return a + b\n"
GREET_FIXTURE = "def greet(name):\n    return 'Hi ' + name\n\n\nWORLD = 'world'\n"
GREET_BROKEN = "def greet(name):\n    return f'Hello, {name}!'\n\n\nWORLD = ('world'\n"
GREET_WRONG = "def greet(name):\n    return f'Hello {name}'\n\n\nWORLD = 'world'\n"
GREET_SOLVED = "def greet(name):\n    return f'Hello, {name}!'\n\n\nWORLD = 'world'\n"
GREET_FINDING = {
    "file": "greet.py",
    "flag": "syntax_error",
    "line": 5,
    "column": 9,
    "node_kind": "ERROR",
    "message": "unparseable python near \"WORLD = ('world'\\n\"",
    "context": "    3  \n    4  \n    5> WORLD = ('world'",
}
MECHANICS_LINE = "greet.py:5:9"
FAILING_TEST = "test_hidden.py::test_greet_punctuation"


def _diff(path: str, old: str, new: str) -> str:
    import difflib

    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), fromfile=f"a/{path}", tofile=f"b/{path}"
        )
    )


def _time(minute: int, second: int = 0) -> str:
    return f"2026-11-30T08:{minute:02d}:{second:02d}.000+00:00"


class _Writer:
    def __init__(self, ledger: Ledger):
        self.ledger, self.n = ledger, 0

    def next_id(self, prefix: str) -> str:
        self.n += 1
        return f"01JFIXED{prefix}{self.n:0{18 - len(prefix)}d}"

    def attempt(
        self,
        run: str,
        arm: str,
        task: str,
        no: int,
        *,
        cls: str | None,
        verdict: str | None,
        tokens: tuple[int, int],
        status: str = "done",
        end: str | None = "finished",
        edited: int = 1,
        files: dict | None = None,
        diff: str = "",
        malformed: int = 0,
        retries: int = 0,
        minute: int = 1,
    ) -> str:
        attempt_id = self.next_id("AT")
        self.ledger.insert(
            "attempts",
            {
                "id": attempt_id,
                "run_id": run,
                "arm_id": ARM_IDS[(run, arm)],
                "arm": arm,
                "task_id": task,
                "attempt_no": no,
                "started_utc": _time(minute),
                "ended_utc": None if status == "running" else _time(minute, 30),
                "end_reason": end,
                "status": status,
                "verdict": verdict,
                "failure_class": cls,
                "accepted": int(cls == "accepted"),
                "prompt_tokens": tokens[0],
                "completion_tokens": tokens[1],
                "total_tokens": sum(tokens),
                "calls": 2 + retries,
                "transport_retries": retries,
                "malformed_tool_calls": malformed,
                "turns": 2,
                "duration_ms": None if status == "running" else 30_000,
                "visible_passed": None,
                "edited": edited,
                "diff": diff,
                "files_json": json.dumps(files or {}),
            },
        )
        return attempt_id

    def call(
        self,
        attempt_id: str,
        run: str,
        arm: str,
        turn: int,
        *,
        status: str = "ok",
        http: int | None = 200,
        retry: int = 0,
        text: str = "",
        error: str | None = None,
        tokens: tuple[int, int] = (300, 40),
    ) -> None:
        self.ledger.insert(
            "calls",
            {
                "id": self.next_id("CA"),
                "attempt_id": attempt_id,
                "run_id": run,
                "arm": arm,
                "turn": turn,
                "retry_index": retry,
                "started_utc": _time(1, turn * 5 + retry),
                "latency_ms": 800 if status == "ok" else 40,
                "status": status,
                "http_status": http,
                "prompt_tokens": tokens[0] if status == "ok" else 0,
                "completion_tokens": tokens[1] if status == "ok" else 0,
                "usage_source": "reported" if status == "ok" else "none",
                "reserved_tokens": 1325,
                "model_reported": arm,
                "finish_reason": "stop" if status == "ok" else None,
                "error": error,
                "response_text": text,
                "tool_calls_json": "[]",
            },
        )

    def tool(
        self,
        attempt_id: str,
        turn: int,
        tool: str,
        args: str,
        *,
        ok: bool = True,
        result: str = "",
        path: str | None = None,
    ) -> None:
        self.ledger.insert(
            "tool_calls",
            {
                "id": self.next_id("TC"),
                "attempt_id": attempt_id,
                "call_id": f"call_{turn}",
                "turn": turn,
                "tool": tool,
                "arguments_json": args,
                "ok": int(ok),
                "error": None if ok else result,
                "path": path,
                "result": result,
            },
        )

    def grade(
        self,
        attempt_id: str,
        verdict: str,
        *,
        passed: int | None = None,
        failed: int | None = None,
        output: str = "",
        failing: list[str] | None = None,
        findings: list[dict] | None = None,
        timeout_s: float = 20.0,
        exit_status: int = 1,
    ) -> None:
        self.ledger.insert(
            "grades",
            {
                "id": self.next_id("GR"),
                "attempt_id": attempt_id,
                "created_utc": _time(50),
                "verdict": verdict,
                "exit_status": exit_status,
                "duration_ms": int(timeout_s * 1000) if verdict == "timeout" else 900,
                "passed": passed,
                "failed": failed,
                "output": output,
                "isolation_json": "{}",
                "sandbox": "bwrap",
                "failing_tests_json": json.dumps(failing or []),
                "environment": None,
                "timeout_s": timeout_s,
                "mechanics_json": json.dumps(findings or []),
            },
        )


def _run_rows(ledger: Ledger, run: str, status: str, created: str, finished: str | None, tasks: list[tuple]) -> None:
    ledger.insert(
        "runs",
        {
            "id": run,
            "created_utc": created,
            "finished_utc": finished,
            "status": status,
            "manifest_sha256": "9d90c2d2655c" + "0" * 52,
            "config_path": "demo.toml",
            "config_json": json.dumps(CONFIG),
            "suites_json": '["demo"]',
            "session_id": "fixed",
            "isolation_sandbox": "bwrap",
        },
    )
    for name, model, protocol in (("A", "solver", "tools"), ("B", "malformed", "text")):
        ledger.insert(
            "arms",
            {
                "id": ARM_IDS[(run, name)],
                "run_id": run,
                "name": name,
                "kind": "scripted",
                "protocol": protocol,
                "endpoint_url": "http://127.0.0.1:9/v1",
                "model": model,
                "cap_tokens": 200_000,
                "max_attempts": 2,
                "state": "finished" if finished else "running",
                "censored": 0,
                "busy_ms": 60_000,
                "unfinished_json": "[]" if finished else None,
                "tokens_used": 0,
                "price_json": json.dumps({"input_per_mtok": 0.15, "output_per_mtok": 0.60}),
            },
        )
    ledger.insert_many(
        "tasks",
        [
            {
                "run_id": run,
                "task_id": t,
                "position": i,
                "suite": "demo",
                "path": f"/nonexistent/demo/{t}",
                "language": lang,
                "kind": kind,
                "prompt": prompt,
            }
            for i, (t, lang, kind, prompt) in enumerate(tasks)
        ],
    )


TASKS = [
    ("py-add", "python", "implement-spec", "Implement add(a, b) in calc.py."),
    ("py-greet", "python", "bugfix", "Make greet(name) return 'Hello, <name>!'."),
    ("js-clamp", "javascript", "boundary", "Implement clamp(value, lo, hi) in clamp.mjs."),
]


def _finished_run(w: _Writer) -> None:
    _run_rows(w.ledger, RUN, "finished", _time(0), _time(59), TASKS)
    a = w.attempt(
        RUN,
        "A",
        "py-add",
        1,
        cls="accepted",
        verdict="pass",
        tokens=(2015, 64),
        files={"calc.py": ADD_SOLVED},
        diff=_diff("calc.py", ADD_FIXTURE, ADD_SOLVED),
    )
    w.call(a, RUN, "A", 1, text="I will write the solution.")
    w.tool(
        a,
        1,
        "write_file",
        json.dumps({"path": "calc.py", "content": ADD_SOLVED}),
        result="wrote calc.py (32 characters)",
        path="calc.py",
    )
    w.call(a, RUN, "A", 2, text="The tests pass.")
    w.tool(a, 2, "finish", json.dumps({"summary": "Wrote the solution."}), result="finished")
    w.grade(a, "pass", passed=2, failed=0, exit_status=0, output="2 passed in 0.05s")

    b = w.attempt(
        RUN,
        "B",
        "py-add",
        1,
        cls="harness_error",
        verdict=None,
        tokens=(0, 0),
        end="harness_error",
        edited=0,
        retries=1,
    )
    w.call(
        b, RUN, "B", 1, status="http_5xx", http=500, error="HTTP 500: The server had an error processing your request."
    )
    w.call(
        b,
        RUN,
        "B",
        1,
        status="http_5xx",
        http=500,
        retry=1,
        error="HTTP 500: The server had an error processing your request.",
    )
    b = w.attempt(RUN, "B", "py-add", 2, cls="mechanics", verdict="fail", tokens=(700, 90), edited=0, malformed=3)
    w.call(b, RUN, "B", 1, text="Working on it.\n\n```edit_file path=notes.txt\nreplace everything\n```")
    w.tool(
        b,
        1,
        "edit_file",
        '{"path": "notes.txt", "content": "unterminated',
        ok=False,
        path="notes.txt",
        result="error: edit_file block needs <<<<<<< OLD / ======= / >>>>>>> NEW markers",
    )
    w.tool(
        b,
        1,
        "delete_file",
        '{"path": "notes.txt"}',
        ok=False,
        path="notes.txt",
        result="error: unknown tool 'delete_file' — valid tools: list_files, read_file, write_file, edit_file, run_tests, finish",
    )
    w.tool(b, 1, "read_file", "{}", ok=False, result="error: read_file needs a path")
    w.call(b, RUN, "B", 2, text="Finished.\n\n```finish```")
    w.tool(b, 2, "finish", "{}", result="finished")
    w.grade(
        b,
        "fail",
        passed=0,
        failed=2,
        output="FAILED test_hidden.py::test_add_small\n2 failed in 0.05s",
        failing=["test_hidden.py::test_add_small", "test_hidden.py::test_add_zero"],
    )

    a = w.attempt(
        RUN,
        "A",
        "py-greet",
        1,
        cls="reasoning",
        verdict="fail",
        tokens=(1900, 80),
        minute=3,
        files={"greet.py": GREET_WRONG},
        diff=_diff("greet.py", GREET_FIXTURE, GREET_WRONG),
    )
    w.call(a, RUN, "A", 1, text="Fixing the greeting.")
    w.tool(
        a,
        1,
        "write_file",
        json.dumps({"path": "greet.py", "content": GREET_WRONG}),
        result="wrote greet.py",
        path="greet.py",
    )
    w.grade(
        a,
        "fail",
        passed=1,
        failed=1,
        failing=[FAILING_TEST],
        output=f"F.\n    assert greet('Ann') == 'Hello, Ann!'\nE   AssertionError: 'Hello Ann' != 'Hello, Ann!'\n"
        f"FAILED {FAILING_TEST} - AssertionError\n1 failed, 1 passed in 0.04s",
    )
    a = w.attempt(
        RUN,
        "A",
        "py-greet",
        2,
        cls="accepted",
        verdict="pass",
        tokens=(1950, 70),
        minute=4,
        files={"greet.py": GREET_SOLVED},
        diff=_diff("greet.py", GREET_FIXTURE, GREET_SOLVED),
    )
    w.grade(a, "pass", passed=2, failed=0, exit_status=0, output="2 passed in 0.04s")
    for no in (1, 2):
        b = w.attempt(
            RUN,
            "B",
            "py-greet",
            no,
            cls="mechanics",
            verdict="fail",
            tokens=(650, 60),
            minute=3 + no,
            files={"greet.py": GREET_BROKEN},
            diff=_diff("greet.py", GREET_FIXTURE, GREET_BROKEN),
        )
        w.call(b, RUN, "B", 1, text=f"Writing the file.\n\n```write_file path=greet.py\n{GREET_BROKEN}```")
        w.tool(
            b,
            1,
            "write_file",
            json.dumps({"path": "greet.py", "content": GREET_BROKEN}),
            result="wrote greet.py",
            path="greet.py",
        )
        w.grade(
            b,
            "fail",
            passed=None,
            failed=None,
            findings=[GREET_FINDING],
            output="  File \"greet.py\", line 5\n    WORLD = ('world'\n            ^\nSyntaxError: '(' was never closed",
        )

    for no in (1, 2):
        a = w.attempt(
            RUN,
            "A",
            "js-clamp",
            no,
            cls="timeout",
            verdict="timeout",
            tokens=(2400, 150),
            minute=5 + no,
            files={"clamp.mjs": "export function clamp(v, lo, hi) {\n  while (true) {}\n}\n"},
            diff=_diff(
                "clamp.mjs",
                "export function clamp(v, lo, hi) {\n  throw new Error('todo');\n}\n",
                "export function clamp(v, lo, hi) {\n  while (true) {}\n}\n",
            ),
        )
        w.grade(
            a,
            "timeout",
            exit_status=-9,
            timeout_s=20.0,
            output="TAP version 13\n# Subtest: clamps values inside the range\n",
        )
        b = w.attempt(
            RUN,
            "B",
            "js-clamp",
            no,
            cls="harness_error",
            verdict=None,
            tokens=(0, 0),
            end="harness_error",
            edited=0,
            retries=1,
            minute=5 + no,
        )
        w.call(b, RUN, "B", 1, status="http_429", http=429, error="HTTP 429: rate limited (Retry-After 1)")
        w.call(
            b,
            RUN,
            "B",
            1,
            status="http_5xx",
            http=500,
            retry=1,
            error="HTTP 500: The server had an error processing your request.",
        )


def _crashed_run(w: _Writer) -> None:
    _run_rows(w.ledger, CRASHED, "running", "2026-11-30T10:00:00.000+00:00", None, TASKS)
    for arm in ("A", "B"):
        attempt = w.attempt(
            CRASHED, arm, "py-add", 1, cls=None, verdict=None, tokens=(300, 40), status="running", end=None, edited=0
        )
        w.call(attempt, CRASHED, arm, 1, text="Let me look at the workspace first.")
        w.call(attempt, CRASHED, arm, 2, status="in_flight", http=None, tokens=(0, 0))


def build_fixed_ledger(path: Path) -> Ledger:
    ledger = Ledger(path)
    w = _Writer(ledger)
    _finished_run(w)
    _crashed_run(w)
    return ledger
