"""Paired comparison of two arms of one run over the same tasks (seed 000): the acceptance
gap with a bootstrap over tasks, McNemar's exact test, and the study size the gap would need.
"""
from __future__ import annotations

from dataclasses import dataclass

from agent.metrics.arm import TaskOutcome
from agent.metrics.stats import McNemar, PairedGap, mcnemar_exact, paired_bootstrap, tasks_needed_for_power


@dataclass(frozen=True)
class Comparison:
    """`second` minus `first` on the tasks both arms finished; censored tasks are left out."""
    first: str
    second: str
    n_paired: int
    excluded: list[str]
    first_accepted: int
    second_accepted: int
    bootstrap: PairedGap
    mcnemar: McNemar
    tasks_needed: int | None


def compare_arms(first: str, first_outcomes: list[TaskOutcome], second: str,
                 second_outcomes: list[TaskOutcome], *, seed: int, resamples: int) -> Comparison | None:
    """Pair two arms task by task (both lists in the run's task order); None if nothing pairs.

    A task censored in either arm is excluded: it never got its full attempt budget there, so
    counting it as a failure would score the cap, not the arm (seed 002).
    """
    pairs = [(a, b) for a, b in zip(first_outcomes, second_outcomes, strict=True)
             if not a.censored and not b.censored]
    excluded = [a.task_id for a, b in zip(first_outcomes, second_outcomes) if a.censored or b.censored]
    if not pairs:
        return None
    a = [int(x.accepted) for x, _ in pairs]
    b = [int(y.accepted) for _, y in pairs]
    n = len(pairs)
    return Comparison(
        first=first, second=second, n_paired=n, excluded=excluded,
        first_accepted=sum(a), second_accepted=sum(b),
        bootstrap=paired_bootstrap(a, b, seed=seed, resamples=resamples),
        mcnemar=mcnemar_exact(a, b),
        tasks_needed=tasks_needed_for_power(sum(a) / n, sum(b) / n))
