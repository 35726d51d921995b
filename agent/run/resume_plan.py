"""What a resumed run starts from: per arm its recorded row and cap, per (arm, task) how far it got.

Built by agent.run.resume from the ledger after recovery; the engine reads it to skip work that is
done and to continue attempt numbering (agent/run/engine.py, agent/run/runtime_gate.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class TaskProgress:
    """One arm's recorded attempts on one task."""

    accepted: bool = False
    counted: int = 0  # attempts that used up the retry budget (agent.classify.counts_toward_budget)
    next_no: int = 1  # the attempt number the next attempt gets: after the counted ones (a lost one's is reused)


@dataclass(frozen=True)
class ResumePlan:
    arms: dict[str, dict[str, Any]]  # arm name -> its arms row, tokens_used recounted from attempts
    progress: dict[tuple[str, str], TaskProgress] = field(default_factory=dict)  # (arm, task id) -> progress
    caps: dict[str, int] = field(default_factory=dict)  # arm name -> cap_tokens as recorded
