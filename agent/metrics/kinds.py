"""Acceptance by task kind, and the task folders a run left out: the report's view of what the
suite was made of. A kind is whatever the task says (a foreign suite's `concurrency` included)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agent.metrics.outcome import TaskOutcome


def by_kind(tasks: Sequence[dict[str, Any]], outcomes: dict[str, list[TaskOutcome]]) -> list[dict[str, Any]]:
    """Per kind (in first-seen task order): its task count and, per arm, accepted / decided tasks."""
    kinds: dict[str, list[str]] = {}
    for t in tasks:
        kinds.setdefault(t.get("kind") or "—", []).append(t["task_id"])
    out = []
    for kind, ids in kinds.items():
        members = set(ids)
        arms = {}
        for arm, arm_outcomes in outcomes.items():
            mine = [o for o in arm_outcomes if o.task_id in members]
            arms[arm] = {"accepted": sum(o.accepted for o in mine), "decided": sum(o.decided for o in mine)}
        out.append({"kind": kind, "tasks": len(ids), "arms": arms})
    return out


def kind_lines(kinds: list[dict[str, Any]]) -> list[str]:
    return [
        f"{k['kind']} ({k['tasks']} task{'s' if k['tasks'] != 1 else ''}): "
        + ", ".join(f"{arm} {a['accepted']}/{a['decided']}" for arm, a in k["arms"].items())
        for k in kinds
    ]


def broken_tasks(run: dict[str, Any]) -> list[dict[str, str]]:
    """The task folders the run left out because they would not load (runs.broken_tasks_json)."""
    try:
        rows = json.loads(run.get("broken_tasks_json") or "[]")
    except ValueError:
        return []
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def broken_lines(rows: list[dict[str, str]]) -> list[str]:
    return [f"{r.get('path')}: {r.get('problem')} — {r.get('fix')}" for r in rows]
