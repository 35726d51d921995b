"""Paired comparison of two arms of one run over the same tasks, and the one decision
rule the report, the practical read and the live view all state:

    a side wins on acceptance only when the 95% paired score interval (Tango) excludes 0 AND
    the exact McNemar test rejects at α = 0.05 with at least 6 decided (discordant) pairs;
    otherwise there is no detectable difference at this n, and the power figure says how many
    tasks a gap of the observed size would need.

The paired bootstrap over tasks stays as a second view; it decides nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from agent.metrics.outcome import TaskOutcome
from agent.metrics.stats import (
    McNemar,
    PairedGap,
    PairedInterval,
    mcnemar_exact,
    min_discordant_to_reject,
    paired_bootstrap,
    tango_interval,
    tasks_needed_for_power,
)

ALPHA = 0.05
MIN_DISCORDANT = min_discordant_to_reject(ALPHA)
RULE = (
    f"a side wins only when the {1 - ALPHA:.0%} paired score interval (Tango) excludes 0 and the exact "
    f"McNemar test rejects at α = {ALPHA:g} with at least {MIN_DISCORDANT} decided (discordant) pairs"
)


@dataclass(frozen=True)
class Verdict:
    """The read of one comparison: who wins, or why nobody does."""

    winner: str | None
    loser: str | None
    points: float  # |gap| in percentage points
    text: str  # one line, e.g. "no detectable difference at n=20 paired tasks (...)"
    reasons: tuple[str, ...]  # why there is no winner (empty when there is one)
    short: str = ""  # the same read for a status line, e.g. "B wins by 20 pts (McNemar p = 0.002)"


@dataclass(frozen=True)
class Comparison:
    """`second` minus `first` on the tasks both arms decided; the others are left out."""

    first: str
    second: str
    n_paired: int
    excluded: list[str]
    first_accepted: int
    second_accepted: int
    interval: PairedInterval
    mcnemar: McNemar
    bootstrap: PairedGap | None
    tasks_needed: int | None
    verdict: Verdict
    alpha: float = ALPHA
    min_discordant: int = MIN_DISCORDANT


def decide(
    first: str,
    second: str,
    interval: PairedInterval,
    mcnemar: McNemar,
    tasks_needed: int | None,
    *,
    alpha: float = ALPHA,
    min_discordant: int = MIN_DISCORDANT,
    exclusion: str | None = None,
) -> Verdict:
    """Apply the rule (module docstring) to one comparison. `exclusion` ("20 excluded: B
    censored") says the verdict rests on part of the suite: then it is never a plain win."""
    verdict = _decide(first, second, interval, mcnemar, tasks_needed, alpha=alpha, min_discordant=min_discordant)
    if not exclusion:
        return verdict
    rests = f"on the {interval.n} task{'' if interval.n == 1 else 's'} both finished ({exclusion})"
    if verdict.winner:
        evidence = verdict.text.split(" pts (", 1)[-1]
        return replace(
            verdict,
            text=f"{verdict.winner} ahead on acceptance by {verdict.points:.0f} pts {rests}, not a win over the "
            f"whole suite ({evidence}",
            short=f"{verdict.winner} ahead by {verdict.points:.0f} pts {rests}",
        )
    return replace(verdict, text=f"{rests}: {verdict.text}", short=f"{verdict.short} {rests}")


def _decide(
    first: str,
    second: str,
    interval: PairedInterval,
    mcnemar: McNemar,
    tasks_needed: int | None,
    *,
    alpha: float,
    min_discordant: int,
) -> Verdict:
    gap, points = interval.gap, abs(interval.gap) * 100
    discordant = mcnemar.only_a + mcnemar.only_b
    evidence = (
        f"{second} − {first} {gap * 100:+.0f} pts, {interval.level:.0%} CI [{interval.lo:+.2f}, "
        f"{interval.hi:+.2f}], McNemar p = {mcnemar.p_value:.3g}, {discordant} decided pairs"
    )
    reasons = []
    if interval.lo <= 0 <= interval.hi:
        reasons.append("the interval includes 0")
    if mcnemar.p_value >= alpha:
        reasons.append(f"McNemar p ≥ {alpha:g}")
    if discordant < min_discordant:
        reasons.append(f"fewer than {min_discordant} decided pairs")
    p = f"McNemar p = {mcnemar.p_value:.3g}"
    if not reasons:
        winner, loser = (second, first) if gap > 0 else (first, second)
        return Verdict(
            winner,
            loser,
            points,
            f"{winner} wins on acceptance by {points:.0f} pts ({evidence})",
            (),
            f"{winner} wins on acceptance by {points:.0f} pts ({p})",
        )
    if tasks_needed is None:
        need = "no gap was observed, so no study size would show one"
    else:
        need = f"a {points:.0f}-pt gap would need ~{tasks_needed:,} tasks per arm at 80% power"
    text = f"no detectable difference at n={interval.n} paired tasks ({evidence}; {', '.join(reasons)}); {need}"
    short_need = "no gap observed" if tasks_needed is None else f"~{tasks_needed:,} tasks for {points:.0f} pts"
    short = f"no detectable difference ({p}; {short_need})"
    return Verdict(None, None, points, text, tuple(reasons), short)


def compare_arms(
    first: str,
    first_outcomes: list[TaskOutcome],
    second: str,
    second_outcomes: list[TaskOutcome],
    *,
    seed: int,
    resamples: int,
    not_comparable: Mapping[str, str] | None = None,
) -> Comparison | None:
    """Pair two arms task by task (both lists in the run's task order); None if nothing pairs.

    Only tasks decided on both arms pair: a task unfinished in either (censored, stopped,
    aborted, lost) never got its full attempt budget there, so counting it as a failure would
    score the cap, not the arm (seed 002). `resamples` = 0 leaves the bootstrap out.
    `not_comparable` (arm -> why, e.g. "cap hit: 20 of 40 tasks unfinished") makes the verdict
    say what it rests on.
    """
    pairs = [(a, b) for a, b in zip(first_outcomes, second_outcomes, strict=True) if a.decided and b.decided]
    excluded = [a.task_id for a, b in zip(first_outcomes, second_outcomes) if not (a.decided and b.decided)]
    unserved = {
        name: n
        for name, outs in ((first, first_outcomes), (second, second_outcomes))
        if (n := sum(o.unserved for o in outs))
    }
    if not pairs:
        return None
    a = [int(x.accepted) for x, _ in pairs]
    b = [int(y.accepted) for _, y in pairs]
    n = len(pairs)
    mcnemar = mcnemar_exact(a, b)
    interval = tango_interval(mcnemar.only_a, mcnemar.only_b, n, ALPHA)
    needed = tasks_needed_for_power(sum(a) / n, sum(b) / n, alpha=ALPHA)
    return Comparison(
        first=first,
        second=second,
        n_paired=n,
        excluded=excluded,
        first_accepted=sum(a),
        second_accepted=sum(b),
        interval=interval,
        mcnemar=mcnemar,
        bootstrap=paired_bootstrap(a, b, seed=seed, resamples=resamples) if resamples else None,
        tasks_needed=needed,
        verdict=decide(
            first, second, interval, mcnemar, needed, exclusion=_exclusion(excluded, not_comparable, unserved)
        ),
    )


def _exclusion(
    excluded: list[str], not_comparable: Mapping[str, str] | None, unserved: Mapping[str, int] | None = None
) -> str | None:
    if not excluded or not (not_comparable or unserved):
        return None
    words = {"cap hit": "censored (cap hit)", "arm stopped": "stopped", "run aborted": "aborted"}
    whys = {
        arm: words.get(reason.split(":")[0], reason.split(":")[0] or "unfinished")
        for arm, reason in (not_comparable or {}).items()
    }
    for arm, n in (unserved or {}).items():
        whys.setdefault(arm, f"endpoint failed on {n} task{'s' if n != 1 else ''} (harness_error)")
    return f"{len(excluded)} excluded: " + "; ".join(f"{arm} {why}" for arm, why in whys.items())
