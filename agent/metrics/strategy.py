"""Where a strategy arm loses its candidates: per arm, coverage (a
task where any candidate passes the hidden tests — an offline ceiling, the hidden tests never
choose), conversion (submitted correct / covered), covered-but-lost split into "no valid
selection" (selection gave no choice: nothing submitted, or fallback submitted a wrong one) and
"wrong choice" (a valid choice that fails), revision transitions (revise: the initial attempt's
grade -> the submitted stage's), fallback count, tokens per stage, and cost per task and per
solved task at the realized spend.

Over decided tasks only (the same denominator as acceptance). An arm without a strategy counts
each attempt as a candidate and its accepted attempt as the submission: Direct's operating point.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent.classify import is_lost
from agent.metrics.outcome import TaskOutcome
from agent.strategy_spec import CANDIDATE_STAGES


class RowLike(Protocol):
    """A ledger row as read by the report: a dict, or a store.Row."""

    def __getitem__(self, key: str, /) -> Any: ...
    def get(self, key: str, default: Any = None) -> Any: ...


TRANSITIONS = ("correct->correct", "correct->wrong", "wrong->correct", "wrong->wrong")


@dataclass(frozen=True)
class StrategyFigures:
    arm: str
    strategy: str  # direct (also: no strategy key), parallel@k, revise
    select_rule: str | None
    decided: int
    covered: int
    submitted_correct: int
    coverage: float | None
    conversion: float | None
    lost_no_selection: int
    lost_wrong_choice: int
    fallback: int
    fallback_correct: int
    no_submission: int
    transitions: dict[str, int] | None
    parse_routes: dict[str, int] = field(default_factory=dict)
    stage_tokens: dict[str, int] = field(default_factory=dict)
    tokens_per_task: float | None = None
    cost_per_task: float | None = None
    cost_per_solved: float | None = None


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def strategy_figures(
    arm_row: Mapping[str, Any],
    attempts: Sequence[RowLike],
    submissions: Sequence[RowLike],
    outcomes: Sequence[TaskOutcome],
    stage_tokens: Mapping[str, int],
    cost_total: float | None,
) -> StrategyFigures:
    """One arm's figures from its attempts rows (stage, submitted, accepted), its submissions rows,
    its task outcomes (outcome.py), the tokens of its calls per stage, and its total cost (None: no price)."""
    by_task: dict[str, list[RowLike]] = defaultdict(list)
    for row in attempts:
        by_task[row["task_id"]].append(row)
    subs = {s["task_id"]: s for s in submissions}
    covered = correct = no_sel = wrong = fb = fb_ok = nothing = 0
    transitions: Counter[str] = Counter()
    routes: Counter[str] = Counter()
    revise = (arm_row.get("strategy") or "") == "revise"
    for o in outcomes:
        if not o.decided:
            continue
        rows = by_task.get(o.task_id, [])
        cands = [r for r in rows if (r["stage"] or "attempt") in CANDIDATE_STAGES and not is_lost(r["failure_class"])]
        hit = any(r["accepted"] for r in cands)
        sub = subs.get(o.task_id)
        covered += hit
        correct += o.accepted
        if sub is not None:
            if sub["parse_route"]:
                routes[sub["parse_route"]] += 1
            fb += bool(sub["fallback"])
            fb_ok += bool(sub["fallback"]) and o.accepted
            nothing += sub["route"] == "none"
            if hit and not o.accepted:
                if sub["route"] in ("none", "fallback"):
                    no_sel += 1
                else:
                    wrong += 1
            initial = next((r for r in rows if r["stage"] == "initial"), None)
            if revise and initial is not None:
                before = "correct" if initial["accepted"] else "wrong"
                transitions[f"{before}->{'correct' if o.accepted else 'wrong'}"] += 1
        elif hit and not o.accepted:  # no strategy: every attempt failed, so not covered either
            wrong += 1
    decided = sum(o.decided for o in outcomes)
    tokens = sum(stage_tokens.values())
    return StrategyFigures(
        arm=arm_row["name"],
        strategy=arm_row.get("strategy") or "direct",
        select_rule=arm_row.get("select_rule"),
        decided=decided,
        covered=covered,
        submitted_correct=correct,
        coverage=_ratio(covered, decided),
        conversion=_ratio(correct, covered),
        lost_no_selection=no_sel,
        lost_wrong_choice=wrong,
        fallback=fb,
        fallback_correct=fb_ok,
        no_submission=nothing,
        transitions={t: transitions.get(t, 0) for t in TRANSITIONS} if revise else None,
        parse_routes=dict(routes),
        stage_tokens=dict(stage_tokens),
        tokens_per_task=_ratio(tokens, decided),
        cost_per_task=None if cost_total is None else _ratio(cost_total, decided),
        cost_per_solved=None if cost_total is None else _ratio(cost_total, correct),
    )


def stage_tokens_of(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """{arm: {stage: tokens}} from `select arm, stage, sum(...) as tokens ... group by arm, stage` rows."""
    out: dict[str, dict[str, int]] = defaultdict(dict)
    for r in rows:
        out[r["arm"]][r["stage"] or "attempt"] = int(r["tokens"] or 0)
    return dict(out)
