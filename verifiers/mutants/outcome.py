"""What a mutant's grade means for the hidden tests, and the scores built from it.

A mutant is graded like a model's answer (the reference's test identities expected, runner
files reset), and its verdict (verifiers.grading.VERDICTS) maps to one outcome:

    pass       survived   the hidden tests accept wrong code (unless likely equivalent)
    fail       killed     at least one test recorded a failure, or the runner was killed by a
                          signal (a memory or CPU limit: the mutant ran away under the tests);
                          when no test ran and the runner exited by itself (a build or import
                          error), it is `unviable`: the tests never judged it
    timeout    killed     the tests noticed: a mutant that loops is caught by the time limit
    error      error      the sandbox or runner could not start: says nothing about the tests
    tampering  killed     if a test failed under it; else `flagged`: the integrity checks, not
                          the tests, rejected it, so it is neither credit nor blame

The mutation score of a task is killed / (killed + survived), equivalents, unviable, flagged
and errors left out of both. The suite's score pools every task's mutants, with a Wilson
interval (agent/metrics/mutation.py; the mutants of one task are not independent, so read it
as a description of this corpus' mutants rather than of tests in general).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

OUTCOMES = ("killed", "survived", "equivalent", "unviable", "flagged", "error")
DEFAULT_WEAK_BELOW = 0.80


def outcome_of(verdict: str, tests: dict[str, str], failed: int | None, exit_status: int | None = None) -> str:
    """The outcome of a mutant graded with `verdict`, the runner's per-test outcomes and its exit status."""
    failures = bool(failed) or any(o not in ("passed", "skipped") for o in tests.values())
    if verdict == "pass":
        return "survived"
    if verdict == "timeout":
        return "killed"
    if verdict == "error":
        return "error"
    if verdict == "tampering":
        return "killed" if failures else "flagged"
    signalled = exit_status is not None and (exit_status < 0 or exit_status > 128)
    if not tests and not failed and not signalled:
        return "unviable"
    return "killed"


@dataclass(frozen=True)
class MutantResult:
    id: str
    kind: str
    file: str
    line: int
    description: str
    outcome: str  # one of OUTCOMES
    verdict: str
    diff: str = ""  # kept for survivors and equivalents
    seconds: float = 0.0
    note: str = ""  # why it was judged equivalent, or the first tamper finding
    function: str = ""  # the function the mutation sits in


@dataclass(frozen=True)
class TaskScore:
    """One task version's mutation results (what the cache holds)."""

    task_id: str
    language: str
    key: str  # the task version and mutator settings the results belong to
    mutants: list[MutantResult] = field(default_factory=list)
    unparsed: int = 0  # generated edits dropped because they did not parse
    dropped: int = 0  # parsing mutants over max_mutants
    seconds: float = 0.0
    skipped: str | None = None  # why the task was not scored (a control, a missing runtime, ...)

    def count(self, outcome: str) -> int:
        return sum(m.outcome == outcome for m in self.mutants)

    @property
    def generated(self) -> int:
        return len(self.mutants)

    @property
    def killed(self) -> int:
        return self.count("killed")

    @property
    def survived(self) -> int:
        return self.count("survived")

    @property
    def counted(self) -> int:
        """Mutants that count for or against the tests."""
        return self.killed + self.survived

    @property
    def score(self) -> float | None:
        return self.killed / self.counted if self.counted else None

    def weak(self, below: float = DEFAULT_WEAK_BELOW) -> bool:
        """Fewer than `below` of the counted mutants killed (a task with none counted is not weak)."""
        return self.score is not None and self.score < below

    def survivors(self) -> list[MutantResult]:
        return [m for m in self.mutants if m.outcome == "survived"]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskScore:
        mutants = [MutantResult(**m) for m in data.get("mutants", [])]
        return cls(**{**data, "mutants": mutants})
