"""What a runner says happened in one run (its tests, each with its outcome, place and how it
failed) and what the reference solution's run established for a task version (its test ids,
what it proved of the canaries): the values verifiers/verdict.py judges with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from verifiers.canaries.proof import Proof
from verifiers.findings import TamperFinding
from verifiers.test_outcomes import FAILED, PASSED


@dataclass(frozen=True)
class TestResult:
    __test__ = False  # a record, not a test class for pytest to collect

    outcome: str  # passed | failed | skipped
    location: str | None = None
    code: str | None = None  # the print of the test function's code the harness saw return (pytest)
    failure: str | None = None  # how it failed: "assertion", or the exception or panic it failed by


@dataclass(frozen=True)
class RunnerReport:
    """What the runner itself says happened (None fields: it did not say)."""

    runner: str
    started: bool = False
    finished: bool = False
    exit_code: int | None = None  # the exit status the runner meant to leave with
    tests: dict[str, TestResult] = field(default_factory=dict)
    passed: int | None = None  # the runner's way of counting (pytest: call phases; node: tests)
    failed: int | None = None  # failures + errors
    evidence: tuple[TamperFinding, ...] = ()  # acts seen at run time and contradictions in the record
    broken: tuple[str, ...] = ()  # files that did not even collect (an import error): no test ids
    suspects: tuple[TamperFinding, ...] = ()  # runtime observations that are no act by themselves
    text: str | None = None  # what people read of the run, when the runner's output is not it (go's events)

    @property
    def failing(self) -> tuple[str, ...]:
        return self.broken + tuple(i for i, t in self.tests.items() if t.outcome == FAILED)


@dataclass(frozen=True)
class Expected:
    """The reference solution's hidden run: every test id with its location and outcome, and
    what that run proved of each canary candidate (verifiers/canaries)."""

    tests: dict[str, TestResult]
    canaries: dict[str, Proof] = field(default_factory=dict)
    pool_seed: int = 0  # what drew the canaries' changes: their keys are the pool's

    @property
    def passed(self) -> int:
        return sum(1 for t in self.tests.values() if t.outcome == PASSED)

    @property
    def proven(self) -> int:
        return sum(1 for p in self.canaries.values() if p.proven)

    def as_json(self) -> dict[str, Any]:
        tests = {i: [t.outcome, t.location, t.code] for i, t in self.tests.items()}
        proofs = {k: p.as_json() for k, p in self.canaries.items()}
        return {"tests": tests, "canaries": proofs, "pool": self.pool_seed}

    @classmethod
    def from_json(cls, data: Any) -> Expected | None:
        if not isinstance(data, dict):
            return None
        proofs = {}
        pool = data["pool"] if isinstance(data.get("pool"), int) else 0
        if isinstance(data.get("tests"), dict) and isinstance(data.get("canaries"), dict):
            for key, value in data["canaries"].items():
                proof = Proof.from_json(value)
                if proof is not None:
                    proofs[str(key)] = proof
            data = data["tests"]
        tests = {}
        for test_id, value in data.items():
            if isinstance(value, list) and len(value) in (2, 3) and isinstance(value[0], str):
                location, code = value[1], value[2] if len(value) == 3 else None
                tests[str(test_id)] = TestResult(
                    value[0], location if isinstance(location, str) else None, code if isinstance(code, str) else None
                )
        return cls(tests, proofs, pool)


__all__ = ["Expected", "RunnerReport", "TestResult"]
