"""An arm's price table as the ledger records it (arms.price_json), read into a `Price`: per token
($ per million, cached and cache-write rates optional) or self-hosted by the GPU-hour. A missing
or malformed price is a PriceError naming the arm, never a silent $0."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import cast

from agent.config import price_problem
from agent.metrics.errors import PriceError

_FIX = (
    "add a price table to the arm in the run config: input_per_mtok and output_per_mtok "
    "($ per million tokens), or gpu_hour (and optionally utilization) for a self-hosted "
    "endpoint"
)


@dataclass(frozen=True)
class Price:
    """One arm's price: per-token (`tokens`) or self-hosted by the GPU-hour (`gpu`)."""

    kind: str
    input_per_mtok: float | None = None
    output_per_mtok: float | None = None
    cached_input_per_mtok: float | None = None  # prompt-cache hits; None: at the input rate
    cache_write_per_mtok: float | None = None  # prompt tokens written to the cache; None: at the input rate
    gpu_hour: float | None = None
    utilization: float | None = None


def _number(arm: str, key: str, value: object, *, upper: float = math.inf) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= upper
    if not ok or (key == "utilization" and value == 0):
        bound = "in (0, 1]" if key == "utilization" else "a number >= 0"
        raise PriceError(f"arm {arm}: price {key} = {value!r} must be {bound} — fix the arm's price table")
    return float(cast(float, value))


def parse_price(arm: str, price_json: str | None) -> Price:
    """The arm's arms.price_json as a Price; PriceError naming the arm when absent or bad."""
    try:
        table = json.loads(price_json) if price_json else {}
    except json.JSONDecodeError as exc:
        raise PriceError(f"arm {arm}: price_json is not JSON ({exc.msg}) — {_FIX}") from None
    if not isinstance(table, dict) or not table:
        raise PriceError(f"arm {arm}: no price — {_FIX}")
    problem = price_problem(table)
    if problem is not None:
        raise PriceError(f"arm {arm}: price table {sorted(table)} {problem[0]} — {problem[1]}")
    if "gpu_hour" in table:
        util = table.get("utilization")
        return Price(
            "gpu",
            gpu_hour=_number(arm, "gpu_hour", table["gpu_hour"]),
            utilization=None if util is None else _number(arm, "utilization", util, upper=1.0),
        )
    optional = {k: _number(arm, k, table[k]) for k in ("cached_input_per_mtok", "cache_write_per_mtok") if k in table}
    return Price(
        "tokens",
        input_per_mtok=_number(arm, "input_per_mtok", table["input_per_mtok"]),
        output_per_mtok=_number(arm, "output_per_mtok", table["output_per_mtok"]),
        **optional,
    )
