"""Small real ledgers for the metrics tests: rows inserted directly through agent.ledger.Ledger.

An arm's tasks are written as attempt strings, one letter per attempt (tuiapp/looks.py's, as the
live view's replay spells them): P accepted, R reasoning, M mechanics, T timeout, E environment,
H harness_error, C censored, A aborted (or lost), "" no attempts at all. Calls and grades are
written per attempt when asked for.
"""

from __future__ import annotations

import json

import pytest

from agent.ledger import Ledger, new_id
from tuiapp.looks import CLASS_OF_LETTER as CLASSES

VERDICTS = {"P": "pass", "R": "fail", "M": "fail", "T": "timeout", "E": "error", "H": None, "C": None, "A": None}
END_REASONS = {"C": "censored", "A": "aborted"}
TOKEN_PRICE = {"input_per_mtok": 1.0, "output_per_mtok": 2.0}


class LedgerBuilder:
    """Writes runs, arms, tasks and attempts with defaults a test can override."""

    def __init__(self, ledger: Ledger):
        self.ledger = ledger

    def run(
        self,
        task_ids: list[str],
        *,
        manifest: str = "a" * 64,
        created: str = "2026-11-30T10:00:00.000+00:00",
        finished: str | None = "2026-11-30T11:00:00.000+00:00",
        session: str = "s1",
        config: dict | None = None,
        run_id: str | None = None,
    ) -> str:
        run_id = run_id or new_id()
        self.ledger.insert(
            "runs",
            {
                "id": run_id,
                "created_utc": created,
                "finished_utc": finished,
                "status": "finished",
                "manifest_sha256": manifest,
                "config_json": json.dumps(config or {"max_attempts": 3}),
                "harness_version": "0.1.0",
                "session_id": session,
                "isolation_sandbox": "bwrap",
            },
        )
        self.ledger.insert_many(
            "tasks",
            [
                {
                    "run_id": run_id,
                    "task_id": t,
                    "position": i,
                    "language": "python",
                    "kind": "bugfix",
                    "files_sha256": f"sha-{t}",
                }
                for i, t in enumerate(task_ids)
            ],
        )
        return run_id

    def arm(
        self,
        run_id: str,
        name: str,
        plan: list[str],
        *,
        price: dict | None = TOKEN_PRICE,
        censored: bool = False,
        unfinished: list[str] | None = None,
        busy_ms: int | None = None,
        tokens: int = 1000,
        prompt_share: float = 0.8,
        duration_ms: int = 1000,
        visible: dict[tuple[str, int], int] | None = None,
        state: str | None = None,
        endpoint_url: str | None = None,
        max_attempts: int = 3,
        lost_keep_number: bool = False,
    ) -> str:
        """Insert an arm and its attempts; `plan[i]` is task i's attempt string. With
        `lost_keep_number`, the attempt after a lost one (C, A) takes its number, as the engine
        numbers them now; without, every attempt gets the next number (older ledgers)."""
        arm_id = new_id()
        tasks = [t["task_id"] for t in self.ledger.tasks(run_id)]
        self.ledger.insert(
            "arms",
            {
                "id": arm_id,
                "run_id": run_id,
                "name": name,
                "cap_tokens": 10**9,
                "max_attempts": max_attempts,
                "censored": int(censored),
                "unfinished_json": json.dumps(unfinished or []),
                "busy_ms": busy_ms,
                "price_json": json.dumps(price) if price is not None else None,
                "state": state or ("censored" if censored else "finished"),
                "endpoint_url": endpoint_url,
            },
        )
        rows = []
        for task_id, attempts in zip(tasks, plan, strict=True):
            no = 0
            for letter in attempts:
                no += 1
                if (
                    lost_keep_number
                    and rows
                    and rows[-1]["task_id"] == task_id
                    and rows[-1]["failure_class"]
                    in (
                        "censored",
                        "aborted",
                    )
                ):
                    no -= 1
                prompt = int(tokens * prompt_share)
                rows.append(
                    {
                        "id": new_id(),
                        "run_id": run_id,
                        "arm_id": arm_id,
                        "arm": name,
                        "task_id": task_id,
                        "attempt_no": no,
                        "status": "done",
                        "end_reason": END_REASONS.get(letter, "finished"),
                        "verdict": VERDICTS[letter],
                        "failure_class": CLASSES[letter],
                        "accepted": int(letter == "P"),
                        "prompt_tokens": prompt,
                        "completion_tokens": tokens - prompt,
                        "total_tokens": tokens,
                        "calls": 2,
                        "transport_retries": 0,
                        "malformed_tool_calls": int(letter == "M"),
                        "duration_ms": duration_ms,
                        "ended_utc": "2026-11-30T10:30:00.000+00:00",
                        "visible_passed": (visible or {}).get((task_id, no)),
                    }
                )
        if rows:
            self.ledger.insert_many("attempts", rows)
        return arm_id

    def calls(
        self,
        run_id: str,
        arm: str,
        spans: list[tuple[str, int]],
        *,
        usage_source: str = "reported",
        tokens: tuple[int, int] = (800, 200),
    ) -> None:
        """One calls row per (started_utc, latency_ms), on the arm's first attempt."""
        attempt = self.ledger.query(
            "select id from attempts where run_id = ? and arm = ? order by task_id, attempt_no limit 1", [run_id, arm]
        )[0]["id"]
        self.ledger.insert_many(
            "calls",
            [
                {
                    "id": new_id(),
                    "attempt_id": attempt,
                    "run_id": run_id,
                    "arm": arm,
                    "turn": i + 1,
                    "retry_index": 0,
                    "started_utc": start,
                    "latency_ms": latency,
                    "status": "ok",
                    "prompt_tokens": tokens[0],
                    "completion_tokens": tokens[1],
                    "usage_source": usage_source,
                }
                for i, (start, latency) in enumerate(spans)
            ],
        )

    def grades(self, run_id: str, arm: str, duration_ms: int) -> None:
        """A grades row of `duration_ms` for every attempt of the arm that has a verdict."""
        rows = self.ledger.query(
            "select id, verdict from attempts where run_id = ? and arm = ? and verdict is not null", [run_id, arm]
        )
        self.ledger.insert_many(
            "grades",
            [
                {"id": new_id(), "attempt_id": r["id"], "verdict": r["verdict"], "duration_ms": duration_ms}
                for r in rows
            ],
        )


@pytest.fixture
def ledger(tmp_path):
    led = Ledger(tmp_path / "ledger.db")
    yield led
    led.close()


@pytest.fixture
def build(ledger) -> LedgerBuilder:
    return LedgerBuilder(ledger)
