"""Money: the arm's price table, cost per attempt, cost per solved problem (CPSP) and the
break-even utilization of a self-hosted arm against a priced one, as seed 000 defines them.

A missing or malformed price is a PriceError naming the arm, never a silent $0.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime

from agent.metrics.errors import PriceError

_FIX = ("add a price table to the arm in the run config: input_per_mtok and output_per_mtok "
        "($ per million tokens), or gpu_hour (and optionally utilization) for a self-hosted "
        "endpoint; or report with --no-cost")


@dataclass(frozen=True)
class Price:
    """One arm's price: per-token (`tokens`) or self-hosted by the GPU-hour (`gpu`)."""
    kind: str
    input_per_mtok: float | None = None
    output_per_mtok: float | None = None
    gpu_hour: float | None = None
    utilization: float | None = None


def _number(arm: str, key: str, value, *, upper: float = math.inf) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= upper
    if not ok or (key == "utilization" and value == 0):
        bound = "in (0, 1]" if key == "utilization" else "a number >= 0"
        raise PriceError(f"arm {arm}: price {key} = {value!r} must be {bound} — fix the arm's price table")
    return float(value)


def parse_price(arm: str, price_json: str | None) -> Price:
    """The arm's arms.price_json as a Price; PriceError naming the arm when absent or bad."""
    try:
        table = json.loads(price_json) if price_json else {}
    except json.JSONDecodeError as exc:
        raise PriceError(f"arm {arm}: price_json is not JSON ({exc.msg}) — {_FIX}") from None
    if not isinstance(table, dict) or not table:
        raise PriceError(f"arm {arm}: no price — {_FIX}")
    if "gpu_hour" in table:
        util = table.get("utilization")
        return Price("gpu", gpu_hour=_number(arm, "gpu_hour", table["gpu_hour"]),
                     utilization=None if util is None else _number(arm, "utilization", util, upper=1.0))
    missing = [k for k in ("input_per_mtok", "output_per_mtok") if k not in table]
    if missing:
        raise PriceError(f"arm {arm}: price table {sorted(table)} lacks {' and '.join(missing)} — {_FIX}")
    return Price("tokens", input_per_mtok=_number(arm, "input_per_mtok", table["input_per_mtok"]),
                 output_per_mtok=_number(arm, "output_per_mtok", table["output_per_mtok"]))


@dataclass(frozen=True)
class ArmCost:
    """What an arm's attempts cost and what each solved task cost (seed 000's CPSP)."""
    arm: str
    kind: str
    total: float
    n_attempts: int
    per_attempt: float | None
    solved: int
    cpsp: float | None
    busy_hours: float | None = None
    utilization: float | None = None
    utilization_source: str | None = None
    gpu_cost_at_full_use: float | None = None


def token_attempt_cost(price: Price, row: dict) -> float:
    """$ of one attempt at per-token prices.

    Tokens in total_tokens beyond prompt + completion (transport retries the engine could not
    split) are charged at the input rate: a retried request is mostly its prompt sent again.
    """
    prompt, completion = row["prompt_tokens"] or 0, row["completion_tokens"] or 0
    unsplit = max(0, (row["total_tokens"] or 0) - prompt - completion)
    return ((prompt + unsplit) * price.input_per_mtok + completion * price.output_per_mtok) / 1e6


def _parse_utc(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def run_wall_ms(run_row: dict, attempts: list[dict]) -> float | None:
    """Run wall time: created to finished, or to the last attempt's end while unfinished."""
    start = _parse_utc(run_row.get("created_utc"))
    end = _parse_utc(run_row.get("finished_utc")) or max(
        (_parse_utc(r["ended_utc"]) for r in attempts if r.get("ended_utc")), default=None)
    if start is None or end is None:
        return None
    return (end - start).total_seconds() * 1000


def _gpu_cost(arm: str, price: Price, arm_row: dict, run_row: dict, attempts: list[dict],
              solved: int) -> ArmCost:
    durations = [r["duration_ms"] or 0 for r in attempts]
    busy_ms = arm_row.get("busy_ms") or sum(durations)
    util, source = price.utilization, "configured"
    if util is None:
        wall = run_wall_ms(run_row, attempts)
        if not wall or not busy_ms:
            raise PriceError(f"arm {arm}: price has gpu_hour but no utilization, and the run has no "
                             f"busy or wall time to measure it from — add utilization to the arm's price table")
        util, source = min(1.0, busy_ms / wall), "measured"
    busy_hours = busy_ms / 3.6e6
    full_use = price.gpu_hour * busy_hours
    infra = full_use / util
    return ArmCost(arm=arm, kind="gpu", total=infra, n_attempts=len(attempts),
                   per_attempt=infra / len(attempts) if attempts else None, solved=solved,
                   cpsp=infra / solved if solved else None, busy_hours=busy_hours,
                   utilization=util, utilization_source=source, gpu_cost_at_full_use=full_use)


def arm_cost(arm_row: dict, run_row: dict, attempts: list[dict], solved: int) -> ArmCost:
    """Cost of one arm: CPSP = (Σ attempt cost + infra) / |tasks solved| (seed 000).

    Per-token arm: each attempt costs its tokens at the price; infra is 0. Self-hosted arm:
    infra = gpu_hour × busy hours / utilization, so idle time is paid for too (seed 000);
    each attempt's cost is its duration_ms share of that bill, so Σ attempt cost already is
    infra and it enters the numerator once. Utilization absent from the price is measured
    as busy_ms / run wall time, and `utilization_source` says so.
    """
    arm = arm_row["name"]
    price = parse_price(arm, arm_row.get("price_json"))
    if price.kind == "gpu":
        return _gpu_cost(arm, price, arm_row, run_row, attempts, solved)
    total = sum(token_attempt_cost(price, r) for r in attempts)
    return ArmCost(arm=arm, kind="tokens", total=total, n_attempts=len(attempts),
                   per_attempt=total / len(attempts) if attempts else None, solved=solved,
                   cpsp=total / solved if solved else None)


def break_even_utilization(gpu: ArmCost, priced: ArmCost) -> float | None:
    """Sustained utilization at which the self-hosted arm's CPSP equals the priced arm's.

    Busy hours are the work and stay fixed; only paid idle time moves with utilization, so
    gpu_hour × busy_h / (u × solved_gpu) = CPSP_priced gives u* (seed 000: "about 64%").
    Above 1 the self-hosted arm cannot break even; None when either side solved nothing.
    """
    if gpu.kind != "gpu" or priced.kind != "tokens":
        raise ValueError("break_even_utilization: need a self-hosted arm and a per-token arm")
    if not gpu.solved or not priced.cpsp:
        return None
    return gpu.gpu_cost_at_full_use / (gpu.solved * priced.cpsp)
