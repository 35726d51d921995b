"""Test-time strategies: what an arm does with one task, its budget multiplier, and the stage
each attempts row and calls row is marked with. One definition, read by the config, the engine,
the manifest and the report.

    direct        one agent attempt (today's behaviour with run.max_attempts = 1); m = 1
    parallel@k    k independent agent attempts from fresh workspaces (candidate i sends the
                  request seed `seed + i`), then one is selected and submitted; m = k
    revise        an attempt, a critique turn by the same model on its diff and visible-test
                  output, then (unless the critique says PASS) a revision continuing from the
                  attempt's workspace; m = 3 (attempt <= 1x, critique <= 1x, revision the rest)

Budget rule (strategies compared at equal compute): a strategy at multiplier m gets m times
every per-task cap of run.limits — tokens, turns, time. Each stage is given at most Direct's caps and never more
than what is left of the task's m-fold budget, checked the way Direct's caps are (before each
model call), so a parallel@4 task never starts a call once it has spent 4x Direct's caps.
Selection (`select`, parallel@k only): `visible` (most visible tests passed, no tokens) or
`judge` (the same model chooses, charged, inside the same m-fold budget).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

STRATEGY_NAMES = ("direct", "parallel@k", "revise")
SELECT_RULES = ("visible", "judge")
MAX_K = 16
REVISE_MULTIPLIER = 3


class Stage(StrEnum):
    """What an attempts row (and its calls rows) is within its task's strategy; ATTEMPT is every
    row of a run without a strategy (and of a Direct arm), the migration's default."""

    ATTEMPT = "attempt"
    CANDIDATE = "candidate"
    INITIAL = "initial"
    CRITIQUE = "critique"
    REVISION = "revision"
    JUDGE = "judge"


STAGES = tuple(Stage)
# stages that leave a gradable workspace
CANDIDATE_STAGES = (Stage.ATTEMPT, Stage.CANDIDATE, Stage.INITIAL, Stage.REVISION)
_PARALLEL = re.compile(r"^parallel@(\d+)$")


class StrategyError(ValueError):
    """Not a strategy name; the message lists the valid ones."""


@dataclass(frozen=True)
class Strategy:
    name: str  # "direct", "parallel@3", "revise"
    kind: str  # "direct", "parallel", "revise"
    k: int  # candidates drawn (parallel), else 1
    multiplier: int  # m: the task's caps are m x run.limits


def parse_strategy(text: str) -> Strategy:
    if text == "direct":
        return Strategy("direct", "direct", 1, 1)
    if text == "revise":
        return Strategy("revise", "revise", 1, REVISE_MULTIPLIER)
    match = _PARALLEL.match(text)
    if match and 2 <= int(match.group(1)) <= MAX_K:
        k = int(match.group(1))
        return Strategy(text, "parallel", k, k)
    raise StrategyError(f"{text!r} is not a strategy — valid: direct, parallel@k (k from 2 to {MAX_K}), revise")


def select_rule(strategy: Strategy | None, select: str | None) -> str | None:
    """How a strategy arm picks its submission: visible / judge (parallel), critique (revise)."""
    if strategy is None or strategy.kind == "direct":
        return None
    return "critique" if strategy.kind == "revise" else select or "visible"
