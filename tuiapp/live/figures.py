"""Aggregate live figures: acceptance so far with its Wilson interval, QAP, retry tax,
first-try share, censoring, the burn rate and the cap projection per arm; the paired gap with
the report's decision rule; elapsed time and ETA.

`compute_figures(snapshot)` is pure and is run in a thread on a timer, never per event. Task
outcomes, arm figures and the paired comparison are agent.metrics' own functions
(`outcome.arm_figures`, `compare.compare_arms`), so the live numbers and the final report
cannot disagree. No Textual here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tuiapp.browse.labels import tokens_short
from tuiapp.live.snapshot import ArmSnapshot, Snapshot
from tuiapp.live.state import BUCKET_S

if TYPE_CHECKING:
    from agent.metrics.compare import Comparison
    from agent.metrics.outcome import ArmFigures as CoreFigures
    from agent.metrics.outcome import TaskOutcome

Outcomes = dict[str, list["TaskOutcome"]]  # arm name -> one outcome per task, in grid order

MIN_PAIRED = 5  # tasks decided on both arms before the paired gap is shown (or every task, in a smaller suite)
MIN_PROJECTION = 3  # decided tasks before a cap projection is stated firmly (below: marked as a rough guess)
CLOSED = ("finished", "censored", "stopped", "stopping", "aborted", "decided")  # arm states with no task left to run
SPARK_BUCKETS = 30  # the sparkline covers 30 buckets of 10 s: the last five minutes
SPARK = "▁▂▃▄▅▆▇█"


@dataclass(frozen=True)
class Projection:
    text: str
    censored: bool  # the arm hit its cap, or will at the current tokens per task
    per_task: float | None = None
    short: str = ""  # the same for a narrow panel
    tentative: bool = False  # from fewer than MIN_PROJECTION decided tasks: a rough guess

    @property
    def texts(self) -> tuple[str, ...]:
        return (self.text, self.short) if self.short else (self.text,)


@dataclass(frozen=True)
class ArmFigures:
    """The report's figures for this arm so far (`core`), plus what only the live view shows."""

    core: CoreFigures
    burn_per_min: float
    spark: tuple[float, ...]
    projection: Projection
    censoring: str

    name = property(lambda self: self.core.name)
    decided = property(lambda self: self.core.decided)
    accepted = property(lambda self: self.core.accepted)
    acceptance = property(lambda self: self.core.acceptance)
    ci = property(lambda self: self.core.acceptance_ci)
    comparable = property(lambda self: self.core.comparable)
    qap = property(lambda self: self.core.qap)
    retry_tax = property(lambda self: self.core.retry_tax)
    first_try_share = property(lambda self: self.core.first_try_share)


@dataclass(frozen=True)
class Figures:
    arms: dict[str, ArmFigures]
    gap_text: str
    gap: Comparison | None
    elapsed_s: float | None
    eta_s: float | None
    done_units: int  # task x arm cells decided
    total_units: int  # task x arm cells
    gap_short: str = ""  # the paired gap for a narrow screen
    censored_units: int = 0  # task x arm cells that will never be decided (censored, stopped, not run)
    gap_wordings: tuple[str, ...] = ()  # the paired gap, longest first (gap_text ... gap_short)


def compute_figures(snap: Snapshot) -> Figures:
    now = snap.finished_at or snap.now
    n = len(snap.task_ids)
    outcomes = {a.name: a.outcomes() for a in snap.arms}
    arms = {a.name: _arm_figures(a, outcomes[a.name], n, now, snap.started_at) for a in snap.arms}
    over = snap.status is not None
    # What the report would say of an arm that will not finish every task (censored, stopped, or the run over).
    out = {
        a.name: arms[a.name].core.not_comparable or ""
        for a in snap.arms
        if arms[a.name].core.not_comparable and (over or a.state in STOPPED_WORDS)
    }
    wordings, gap = _gap(snap.arms, outcomes, n, over=over, not_comparable=out)
    elapsed = None if snap.started_at is None else max(0.0, now - snap.started_at)
    # a task its endpoint never served is over (nothing more will run) but no measurement
    done = sum(1 for a in snap.arms for o in outcomes[a.name] if o.decided or o.unserved)
    censored = sum(
        1 for a in snap.arms for o in outcomes[a.name] if o.censored and not o.unserved and o.failure_class != "pending"
    )
    total = n * len(snap.arms)
    # the pace is per running second: time paused is left out, so the ETA stands still while paused
    active = None if elapsed is None else max(0.0, elapsed - snap.paused_s)
    eta = 0.0 if snap.status is not None else eta_seconds(snap.arms, outcomes, active)
    return Figures(arms, wordings[0], gap, elapsed, eta, done, total, wordings[-1], censored, wordings)


def eta_seconds(arms: tuple[ArmSnapshot, ...], outcomes: Outcomes, elapsed: float | None) -> float | None:
    """Time until the last arm still running has decided its remaining tasks, each arm at its own
    pace so far (`elapsed`: the run's time not paused). A censored, stopped or finished arm has
    nothing left to do; None until every running arm has decided a task."""
    if elapsed is None:
        return None
    eta = 0.0
    for arm in arms:
        if arm.state in CLOSED:
            continue
        decided = sum(1 for o in outcomes[arm.name] if o.decided)
        left = sum(1 for o in outcomes[arm.name] if not o.decided and not o.unfinished)
        if left and not decided:
            return None
        if left:
            eta = max(eta, elapsed * left / decided)
    return eta


def _arm_figures(
    arm: ArmSnapshot, outcomes: list[TaskOutcome], n: int, now: float, started: float | None
) -> ArmFigures:
    from agent.metrics.outcome import arm_figures

    core = arm_figures(arm.name, outcomes, arm.records(), arm_state=arm.state, cap_hit=arm.state == "censored")
    projection = project(arm, n, outcomes)
    return ArmFigures(
        core=core,
        burn_per_min=burn_rate(arm.buckets, now, started),
        spark=spark_values(arm.buckets, now, started),
        projection=projection,
        censoring=_censoring(arm, projection),
    )


def burn_rate(buckets: tuple[tuple[int, int], ...], now: float, started: float | None) -> float:
    """Tokens per minute over the last minute (or since the start, if that is shorter)."""
    last = int(now // BUCKET_S)
    first = last - 60 // BUCKET_S + 1
    window_start: float = first * BUCKET_S
    if started is not None:
        window_start = max(window_start, started)
    tokens = sum(t for b, t in buckets if first <= b <= last)
    return tokens * 60 / max(now - window_start, 1.0)


def spark_values(buckets: tuple[tuple[int, int], ...], now: float, started: float | None) -> tuple[float, ...]:
    """Tokens per minute in each 10 s bucket of the last five minutes, oldest first."""
    last = int(now // BUCKET_S)
    first = last - SPARK_BUCKETS + 1
    if started is not None:
        first = max(first, int(started // BUCKET_S))
    by_bucket = dict(buckets)
    return tuple(by_bucket.get(b, 0) * 60 / BUCKET_S for b in range(first, last + 1))


def project(arm: ArmSnapshot, n: int, outcomes: list[TaskOutcome] | None = None) -> Projection:
    """Where the cap will be hit at the current tokens per decided task, or what will be left; the
    verdict (censored, fits, stopped, ...) comes first so a narrow panel never cuts it. From fewer
    than MIN_PROJECTION decided tasks it is marked as a rough guess."""
    outcomes = arm.outcomes() if outcomes is None else outcomes
    out = sum(1 for o in outcomes if o.unfinished)
    if arm.state == "censored":
        return Projection(
            f"cap hit: {out} of {n} tasks unfinished, not comparable",
            True,
            short=f"cap hit: {out}/{n} tasks unfinished",
        )
    if arm.state in ("stopped", "stopping", "aborted"):
        return Projection(
            f"stopped: {out} of {n} tasks not run, not comparable", False, short=f"stopped: {out}/{n} tasks not run"
        )
    left = arm.cap - arm.used
    if arm.state == "finished":
        return Projection(
            f"finished with {tokens(left)} tokens left ({left / arm.cap:.0%} of the cap)",
            False,
            short=f"finished, {tokens_short(left)} left ({left / arm.cap:.0%})",
        )
    decided = [o for o in outcomes if o.decided]
    if not decided:
        return Projection("projection after the first finished task", False, short="projection after 1st task")
    per_task = sum(o.tokens for o in decided) / len(decided)
    status = {c.task_id: c.status for c in arm.cells}
    in_progress = [o.tokens for o in outcomes if o.failure_class == "pending" and status[o.task_id] != "pending"]
    pending = sum(1 for o in outcomes if o.failure_class == "pending" and status[o.task_id] == "pending")
    projected = arm.used + sum(max(0.0, per_task - t) for t in in_progress) + per_task * pending
    tentative = len(decided) < MIN_PROJECTION
    rough = f" (rough, from {len(decided)} task{'s' if len(decided) > 1 else ''})" if tentative else ""
    rough_short = " (rough)" if tentative else ""
    if projected > arm.cap:
        reach = len(decided) + (arm.cap - arm.used + sum(in_progress)) / per_task
        at = min(n, max(len(decided) + 1, int(reach) + 1))
        what = "may be censored" if tentative else "will be censored"
        return Projection(
            f"{what}: cap at ~task {at} of {n}{rough}",
            True,
            per_task,
            short=f"{'censored?' if tentative else 'censored:'} cap ~task {at}/{n}{rough_short}",
            tentative=tentative,
        )
    spare = arm.cap - projected
    fits = "fits?" if tentative else "fits:"
    return Projection(
        f"{fits} ~{tokens(spare)} tokens left at the end ({spare / arm.cap:.0%} of the cap){rough}",
        False,
        per_task,
        short=f"{fits} ~{tokens_short(spare)} left ({spare / arm.cap:.0%}, rough)"
        if tentative
        else f"{fits} ~{tokens_short(spare)} left at the end ({spare / arm.cap:.0%})",
        tentative=tentative,
    )


def _censoring(arm: ArmSnapshot, projection: Projection) -> str:
    if arm.state == "censored":
        return "cap hit"
    if arm.state in ("stopped", "stopping", "aborted"):
        return "stopped"
    if projection.censored:
        return "maybe (early)" if projection.tentative else "projected"
    return "no"


# An arm in one of these states has tasks it will never finish: the gap rests on the others.
STOPPED_WORDS = {"censored": "censored", "stopped": "stopped", "aborted": "aborted"}


def _gap(
    arms: tuple[ArmSnapshot, ...], outcomes: Outcomes, n: int, over: bool, not_comparable: dict[str, str] | None = None
) -> tuple[tuple[str, ...], Comparison | None]:
    """The report's paired comparison and decision rule on the tasks decided on both arms so far:
    from MIN_PAIRED such tasks (all of them in a smaller suite), and at the end of the run. Its
    wordings, longest first, each keeping the read and why (the shortest gives the first reason)."""
    from agent.metrics.compare import compare_arms

    if len(arms) < 2:
        return ("paired gap: needs two arms",), None
    first, second = arms[0], arms[1]
    label = f"paired gap {second.name} − {first.name}"
    paired = sum(a.decided and b.decided for a, b in zip(outcomes[first.name], outcomes[second.name]))
    needed = max(1, min(MIN_PAIRED, n))
    out = not_comparable or {}
    c: Comparison | None = None
    if paired >= needed or (over and paired):
        c = compare_arms(
            first.name,
            outcomes[first.name],
            second.name,
            outcomes[second.name],
            seed=0,
            resamples=0,
            not_comparable=out,
        )
    if c is None:  # too few tasks decided on both arms (none pair: the same)
        text = f"{label}: shown once {needed} task{'s are' if needed > 1 else ' is'} decided on both arms ({paired} so far)"
        return (text, f"gap {second.name}−{first.name}: after {needed} paired tasks ({paired} so far)"), None
    iv, v = c.interval, c.verdict
    interval = f"{iv.gap:+.2f}, {iv.level:.0%} CI [{iv.lo:+.2f}, {iv.hi:+.2f}], n={c.n_paired}"
    gap = f"gap {second.name}−{first.name} {iv.gap:+.2f}"
    read, _, evidence = v.short.partition(" (")
    if out:  # an arm will not finish: the read says on which tasks it rests
        base, _, rests = v.short.partition(" on the ")
        read = base.split(" (")[0]
        long_read, reads = v.short, [f"{read} on the {rests}", f"{read}: {' and '.join(out)} not comparable"]
    else:  # "no detectable difference: <why>" / "B wins on acceptance by 20 pts: McNemar p = 0.002"
        why = ", ".join(v.reasons) if v.reasons else evidence.split(";")[0].rstrip(")")
        brief = _brief_reason(v.reasons[-1]) if v.reasons else why
        long_read = f"{read}: {why} ({evidence}" if v.reasons else v.short
        reads = [f"{read}: {why}", f"{read}: {brief}"]
    return (
        f"{label} {interval} · {long_read}",
        *(f"{gap} [{iv.lo:+.2f}, {iv.hi:+.2f}] n={c.n_paired} · {r}" for r in reads),
        f"{gap} n={c.n_paired} · {reads[-1]}",
    ), c


def _brief_reason(reason: str) -> str:
    """One of agent.metrics.compare's reasons for no winner, for a narrow screen."""
    if reason.startswith("fewer than "):
        return "< " + reason.removeprefix("fewer than ")
    return reason.replace("the interval includes 0", "CI includes 0")


# -- formatting helpers shared by the widgets ---------------------------------------------------
def tokens(n: float | None) -> str:
    """41,230 / 1.2M; "—" for None."""
    if n is None:
        return "—"
    if abs(n) >= 10_000_000:
        return f"{n / 1_000_000:.1f}M"
    return f"{int(round(n)):,}"


def share(used: int, reserved: int, cap: int) -> float:
    """Used plus in flight over the cap: the one share the meter, the modal and the engine state."""
    return (used + reserved) / cap if cap else 1.0


def percent(x: float) -> str:
    """A share as a whole percent, never rounded up to the next threshold: 0.899 is 89%, not 90%."""
    return f"{math.floor(x * 100 + 1e-9):.0f}%"


def ratio(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def sparkline(values: tuple[float, ...] | list[float], width: int) -> str:
    """The last `width` values as block characters scaled to their maximum."""
    values = list(values)[-width:] if width > 0 else []
    top = max(values, default=0)
    if top <= 0:
        return "▁" * len(values)
    return "".join(SPARK[min(len(SPARK) - 1, int(v / top * (len(SPARK) - 1) + 0.5))] if v else " " for v in values)


def bar_parts(width: int, used: int, reserved: int, cap: int) -> tuple[int, int, int]:
    """Character counts (used, reserved, free) of a quota bar `width` wide."""
    if width <= 0 or cap <= 0:
        return 0, 0, max(0, width)
    used_w = min(width, round(width * used / cap))
    reserved_w = min(width - used_w, round(width * (used + reserved) / cap) - used_w)
    return used_w, max(0, reserved_w), width - used_w - max(0, reserved_w)
