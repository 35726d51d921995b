"""What the reference's run proved of one canary candidate (kept with the reference's test
identities in the ledger, verifiers.verdict.Expected)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Proof:
    """What the reference did with one candidate: per id suffix ("" for a plain test, "[2-3-5]"
    for one case of a parametrized one), its outcome and how it failed."""

    outcomes: dict[str, tuple[str, str | None]]

    @property
    def proven(self) -> bool:
        return any(outcome == "failed" for outcome, _ in self.outcomes.values())

    def as_json(self) -> dict[str, Any]:
        return {suffix: [o, k] for suffix, (o, k) in self.outcomes.items()}

    @classmethod
    def from_json(cls, data: Any) -> Proof | None:
        if not isinstance(data, dict):
            return None
        outcomes = {}
        for suffix, value in data.items():
            if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str):
                outcomes[str(suffix)] = (value[0], value[1] if isinstance(value[1], str) else None)
        return cls(outcomes)
