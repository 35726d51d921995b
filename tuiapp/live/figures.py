"""Aggregate live figures (seed 002): acceptance so far with its Wilson interval, QAP, retry tax,
first-try share, censoring, the burn rate and the cap projection per arm; the paired gap with
its bootstrap interval; elapsed time and ETA.

`compute_figures(snapshot)` is pure and is run in a thread on a timer, never per event (the
bootstrap is numpy work). The statistics are agent.metrics' own (`wilson`, `paired_bootstrap`,
the report's bootstrap seed), so the live numbers and the final report agree. No Textual here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tuiapp.live.state import BUCKET_S, ArmSnapshot, Snapshot

if TYPE_CHECKING:
    from agent.metrics.stats import PairedGap

MIN_PAIRED = 5  # tasks decided on both arms before the paired gap is shown
BOOTSTRAP_RESAMPLES = 2_000  # the report uses 10,000; the live view trades digits for speed
SPARK_BUCKETS = 30  # the sparkline covers 30 buckets of 10 s: the last five minutes
SPARK = "▁▂▃▄▅▆▇█"
OUT = ("censored", "aborted")  # a task in one of these states will not run on this arm


@dataclass(frozen=True)
class Projection:
    text: str
    censored: bool  # the arm hit its cap, or will at the current tokens per task
    per_task: float | None = None


@dataclass(frozen=True)
class ArmFigures:
    name: str
    decided: int
    accepted: int
    acceptance: float | None
    ci: tuple[float, float]
    qap: float | None
    retry_tax: float | None
    first_try_share: float | None
    burn_per_min: float
    spark: tuple[float, ...]
    projection: Projection
    censoring: str


@dataclass(frozen=True)
class Figures:
    arms: dict[str, ArmFigures]
    gap_text: str
    gap: PairedGap | None
    elapsed_s: float | None
    eta_s: float | None
    done_units: int
    total_units: int


def compute_figures(snap: Snapshot) -> Figures:
    now = snap.finished_at or snap.now
    n = len(snap.task_ids)
    arms = {a.name: _arm_figures(a, n, now, snap.started_at) for a in snap.arms}
    gap_text, gap = _gap(snap.arms)
    elapsed = None if snap.started_at is None else max(0.0, now - snap.started_at)
    done = sum(_done_units(a, n) for a in snap.arms)
    total = n * len(snap.arms)
    eta = None
    if snap.status is not None or (total and done >= total):
        eta = 0.0
    elif elapsed is not None and done:
        eta = elapsed * (total - done) / done
    return Figures(arms, gap_text, gap, elapsed, eta, done, total)


def _done_units(arm: ArmSnapshot, n: int) -> int:
    if arm.state in ("finished", "censored", "stopped", "aborted"):
        return n
    return sum(1 for _, status, decided, _, _ in arm.cells if decided or status in OUT)


def _arm_figures(arm: ArmSnapshot, n: int, now: float, started: float | None) -> ArmFigures:
    from agent.metrics.stats import wilson  # scipy: imported in the figures thread, not at startup
    decided = [c for c in arm.cells if c[2]]
    accepted_on = [c[3] for c in decided if c[3] is not None]
    k = len(accepted_on)
    projection = project(arm, n)
    return ArmFigures(
        name=arm.name, decided=len(decided), accepted=k,
        acceptance=k / len(decided) if decided else None, ci=wilson(k, len(decided)),
        qap=arm.used / k if k else None, retry_tax=arm.wasted / arm.used if arm.used else None,
        first_try_share=sum(1 for a in accepted_on if a == 1) / k if k else None,
        burn_per_min=burn_rate(arm.buckets, now, started), spark=spark_values(arm.buckets, now, started),
        projection=projection, censoring=_censoring(arm, projection))


def burn_rate(buckets: tuple[tuple[int, int], ...], now: float, started: float | None) -> float:
    """Tokens per minute over the last minute (or since the start, if that is shorter)."""
    last = int(now // BUCKET_S)
    first = last - 60 // BUCKET_S + 1
    window_start = first * BUCKET_S
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


def project(arm: ArmSnapshot, n: int) -> Projection:
    """Where the cap will be hit at the current tokens per decided task, or what will be left."""
    out = sum(1 for c in arm.cells if c[1] in OUT)
    if arm.state == "censored":
        return Projection(f"cap hit: {out} of {n} tasks unfinished, not comparable", True)
    if arm.state in ("stopped", "stopping", "aborted"):
        return Projection(f"stopped: {out} of {n} tasks not run, not comparable", False)
    left = arm.cap - arm.used
    if arm.state == "finished":
        return Projection(f"finished with {tokens(left)} tokens left ({left / arm.cap:.0%} of the cap)", False)
    decided = [c for c in arm.cells if c[2]]
    if not decided:
        return Projection("projection after the first finished task", False)
    per_task = sum(c[4] for c in decided) / len(decided)
    in_progress = [c[4] for c in arm.cells if not c[2] and c[1] not in OUT and c[1] != "pending"]
    pending = sum(1 for c in arm.cells if c[1] == "pending")
    projected = arm.used + sum(max(0.0, per_task - t) for t in in_progress) + per_task * pending
    if projected > arm.cap:
        reach = len(decided) + (arm.cap - arm.used + sum(in_progress)) / per_task
        at = min(n, max(len(decided) + 1, int(reach) + 1))
        return Projection(f"cap at ~task {at} of {n}: this arm will be censored", True, per_task)
    spare = arm.cap - projected
    return Projection(f"~{tokens(spare)} tokens left at the end ({spare / arm.cap:.0%} of the cap)", False, per_task)


def _censoring(arm: ArmSnapshot, projection: Projection) -> str:
    if arm.state == "censored":
        return "cap hit"
    if arm.state in ("stopped", "stopping", "aborted"):
        return "stopped"
    if projection.censored:
        return "projected"
    return "no"


def _gap(arms: tuple[ArmSnapshot, ...]) -> tuple[str, PairedGap | None]:
    from agent.metrics.report import DEFAULT_SEED  # the report's seed: live and final gaps agree
    from agent.metrics.stats import paired_bootstrap
    if len(arms) < 2:
        return "paired gap: needs two arms", None
    first, second = arms[0], arms[1]
    a_cells = {t: (decided, acc) for t, _, decided, acc, _ in first.cells}
    pairs = [(int(a_cells[t][1] is not None), int(acc is not None))
             for t, _, decided, acc, _ in second.cells if decided and a_cells.get(t, (False,))[0]]
    label = f"paired gap {second.name} − {first.name}"
    if len(pairs) < MIN_PAIRED:
        return f"{label}: shown once {MIN_PAIRED} tasks are decided on both arms ({len(pairs)} so far)", None
    gap = paired_bootstrap([p[0] for p in pairs], [p[1] for p in pairs], seed=DEFAULT_SEED,
                           resamples=BOOTSTRAP_RESAMPLES)
    return (f"{label}: {gap.gap:+.2f}  95% CI [{gap.lo:+.2f}, {gap.hi:+.2f}]  n={gap.n} tasks decided on "
            f"both arms (bootstrap over tasks, {BOOTSTRAP_RESAMPLES:,} resamples)"), gap


# -- formatting helpers shared by the widgets ---------------------------------------------------
def tokens(n: float | None) -> str:
    """41,230 / 1.2M; "—" for None."""
    if n is None:
        return "—"
    if abs(n) >= 10_000_000:
        return f"{n / 1_000_000:.1f}M"
    return f"{int(round(n)):,}"


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
