"""One replicate of a manifest: its number, how many there are and the set they belong to, as the
engine records them on the run's row (agent/run/schedule.py runs the set)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent.ledger.store import new_id


@dataclass(frozen=True)
class Replicate:
    """Run `number` of `of` runs of one manifest (`quotabench run --replicates N`), in set `set_id`."""

    set_id: str
    number: int
    of: int

    def columns(self) -> dict[str, Any]:
        """Its runs columns."""
        return {"replicate": self.number, "replicates": self.of, "replicate_set": self.set_id}


def replicate_plan(n: int) -> list[Replicate]:
    """Replicates 1..n of one new set."""
    set_id = new_id()
    return [Replicate(set_id, k, n) for k in range(1, n + 1)]
