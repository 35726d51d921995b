"""Money: cost per attempt, cost per solved problem (CPSP) and the break-even utilization of a
self-hosted arm against a priced one, from each arm's price (agent/metrics/price.py). CPSP is
what the arm spent on the model and on grading over the tasks it solved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent.ledger.store import Row
from agent.metrics.billing import Spend, spend_cost
from agent.metrics.errors import PriceError
from agent.metrics.price import Price, parse_price


@dataclass(frozen=True)
class ArmCost:
    """What an arm's attempts and their grading cost, and what each solved task cost (seed 000).

    total = model + grading; model is the tokens at their price, or for a self-hosted arm its
    share of the machine's bill (by busy time, when arms share one server); cpsp = total /
    solved, None when nothing was solved or the arm is not comparable.
    """

    arm: str
    kind: str
    total: float
    n_attempts: int
    per_attempt: float | None
    solved: int
    cpsp: float | None
    model: float = 0.0
    grading: float = 0.0
    grading_cpu_s: float = 0.0
    grading_cpu_hour: float = 0.0
    busy_hours: float | None = None
    utilization: float | None = None
    utilization_source: str | None = None
    gpu_cost_at_full_use: float | None = None
    server: str | None = None
    shared_with: tuple[str, ...] = ()
    machine_total: float | None = None
    machine_share: float | None = None
    cost_source: str | None = None  # per-token arm: reported (the provider's usage.cost) | priced | mixed
    lost: float | None = None  # per-token arm: $ of the attempts the run cut off (billed, in no figure above)


def token_attempt_cost(price: Price, row: Row | dict[str, Any]) -> float:
    """$ of one attempt at per-token prices.

    Tokens in total_tokens beyond prompt + completion (transport retries the engine could not
    split) are charged at the input rate: a retried request is mostly its prompt sent again.
    """
    assert price.input_per_mtok is not None and price.output_per_mtok is not None  # kind "tokens"
    prompt, completion = row["prompt_tokens"] or 0, row["completion_tokens"] or 0
    unsplit = max(0, (row["total_tokens"] or 0) - prompt - completion)
    return ((prompt + unsplit) * price.input_per_mtok + completion * price.output_per_mtok) / 1e6


def _parse_utc(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def run_wall_ms(run_row: dict[str, Any], attempts: Sequence[Row | dict[str, Any]]) -> float | None:
    """Run wall time: created to finished, or to the last attempt's end while unfinished."""
    start = _parse_utc(run_row.get("created_utc"))
    end = _parse_utc(run_row.get("finished_utc")) or max(
        (datetime.fromisoformat(r["ended_utc"]) for r in attempts if r.get("ended_utc")), default=None
    )
    if start is None or end is None:
        return None
    return (end - start).total_seconds() * 1000


@dataclass(frozen=True)
class ArmUse:
    """One arm's inputs to the cost: its rows, what it solved, its busy time, its grading."""

    arm_row: dict[str, Any]
    attempts: Sequence[Row | dict[str, Any]]
    solved: int | None  # None: not comparable, so no CPSP
    busy_ms: int | None = None  # union of its call intervals; None: not measured
    grading_cpu_s: float = 0.0
    spend: Spend | None = None  # its calls as the provider billed them (agent/metrics/billing.py)
    lost: Sequence[Row | dict[str, Any]] = ()  # the attempts the run cut off (lost spend)
    billed: Spend | None = None  # every call of the arm, lost attempts' too


def _busy_ms(use: ArmUse) -> int:
    if use.busy_ms is not None:
        return use.busy_ms
    return use.arm_row.get("busy_ms") or sum(r["duration_ms"] or 0 for r in use.attempts)


def _finish(use: ArmUse, price: Price, model: float, grading_cpu_hour: float, **gpu: Any) -> ArmCost:
    grading = use.grading_cpu_s / 3600 * grading_cpu_hour
    total = model + grading
    n = len(use.attempts)
    return ArmCost(
        arm=use.arm_row["name"],
        kind=price.kind,
        total=total,
        n_attempts=n,
        per_attempt=total / n if n else None,
        solved=use.solved or 0,
        cpsp=total / use.solved if use.solved else None,
        model=model,
        grading=grading,
        grading_cpu_s=use.grading_cpu_s,
        grading_cpu_hour=grading_cpu_hour,
        **gpu,
    )


def _machine(
    group: list[tuple[ArmUse, Price]], run_row: dict[str, Any], machine_busy_ms: int | None, grading_cpu_hour: float
) -> list[ArmCost]:
    """Self-hosted arms on one server: the machine's bill once, split by each arm's busy time.

    bill = gpu_hour × machine busy hours / utilization, where utilization is configured or
    measured as machine busy / run wall time (then the bill is the wall time: idle time is paid
    too, seed 000). Machine busy is the union of all its arms' calls.
    """
    names = [use.arm_row["name"] for use, _ in group]
    first = group[0][1]
    for _use, price in group[1:]:
        if (price.gpu_hour, price.utilization) != (first.gpu_hour, first.utilization):
            raise PriceError(
                f"arms {' and '.join(names)} share the server {group[0][0].arm_row.get('endpoint_url')} "
                f"but price it differently ({first.gpu_hour}/h vs {price.gpu_hour}/h, utilization "
                f"{first.utilization} vs {price.utilization}) — give them the same price table"
            )
    assert first.gpu_hour is not None  # kind "gpu"
    arm_busy = [_busy_ms(use) for use, _ in group]
    busy = machine_busy_ms if machine_busy_ms is not None else sum(arm_busy)
    util, source = first.utilization, "configured"
    if util is None:
        wall = run_wall_ms(run_row, [r for use, _ in group for r in use.attempts])
        if not wall or not busy:
            raise PriceError(
                f"arm {names[0]}: price has gpu_hour but no utilization, and the run has no "
                f"busy or wall time to measure it from — add utilization to the arm's price table"
            )
        util, source = min(1.0, busy / wall), "measured"
    machine = first.gpu_hour * busy / 3.6e6 / util
    costs = []
    for (use, price), own in zip(group, arm_busy):
        share = own / sum(arm_busy) if sum(arm_busy) else 1 / len(group)
        busy_share_h = busy / 3.6e6 * share
        others = tuple(n for n in names if n != use.arm_row["name"])
        costs.append(
            _finish(
                use,
                price,
                machine * share,
                grading_cpu_hour,
                busy_hours=own / 3.6e6,
                utilization=util,
                utilization_source=source,
                gpu_cost_at_full_use=first.gpu_hour * busy_share_h,
                server=use.arm_row.get("endpoint_url"),
                shared_with=others,
                machine_total=machine,
                machine_share=share,
            )
        )
    return costs


def run_costs(
    uses: list[ArmUse],
    run_row: dict[str, Any],
    *,
    grading_cpu_hour: float,
    machine_busy_ms: dict[str, int] | None = None,
) -> dict[str, ArmCost]:
    """Cost of every arm of a run: CPSP = (Σ attempt cost + infra + grading) / |solved| (seed 000).

    Per-token arm: its tokens at the price. Self-hosted arms (gpu_hour) that call the same
    endpoint_url share one machine, billed once and split by busy time (`machine_busy_ms`
    maps the url to the union of all its calls); an arm alone on its server pays all of it.
    Grading: grader CPU seconds at `grading_cpu_hour` $ per CPU-hour, its own line.
    """
    costs: dict[str, ArmCost] = {}
    servers: dict[str, list[tuple[ArmUse, Price]]] = {}
    for use in uses:
        name = use.arm_row["name"]
        price = parse_price(name, use.arm_row.get("price_json"))
        if price.kind == "gpu":
            servers.setdefault(use.arm_row.get("endpoint_url") or f"arm:{name}", []).append((use, price))
        elif use.spend is not None and use.spend.detailed:  # cached tokens or reported costs: priced per call
            model = spend_cost(price, use.spend)
            lost = spend_cost(price, use.billed) - model if use.billed is not None else 0.0
            costs[name] = _finish(use, price, model, grading_cpu_hour, cost_source=use.spend.source, lost=lost)
        else:
            model = sum(token_attempt_cost(price, r) for r in use.attempts)
            lost = sum((token_attempt_cost(price, r) for r in use.lost), 0.0)
            costs[name] = _finish(use, price, model, grading_cpu_hour, cost_source="priced", lost=lost)
    for url, group in servers.items():
        for cost in _machine(group, run_row, (machine_busy_ms or {}).get(url), grading_cpu_hour):
            costs[cost.arm] = cost
    return {use.arm_row["name"]: costs[use.arm_row["name"]] for use in uses}


def arm_cost(
    arm_row: dict[str, Any],
    run_row: dict[str, Any],
    attempts: list[dict[str, Any]],
    solved: int | None,
    *,
    busy_ms: int | None = None,
    grading_cpu_s: float = 0.0,
    grading_cpu_hour: float = 0.0,
) -> ArmCost:
    """Cost of one arm alone on its endpoint (run_costs with one arm).

    Self-hosted: infra = gpu_hour × busy hours / utilization, so idle time is paid for too
    (seed 000); utilization absent from the price is measured as busy / run wall time.
    """
    use = ArmUse(arm_row, attempts, solved, busy_ms, grading_cpu_s)
    return run_costs([use], run_row, grading_cpu_hour=grading_cpu_hour)[arm_row["name"]]


def break_even_utilization(gpu: ArmCost, priced: ArmCost) -> float | None:
    """Sustained utilization at which the self-hosted arm's CPSP equals the priced arm's.

    Busy hours are the work and stay fixed; only paid idle time moves with utilization, so
    (gpu_hour × busy_h / u + grading_gpu) / solved_gpu = CPSP_priced gives u* (seed 000:
    "about 64%"). Above 1 the self-hosted arm cannot break even; None when either side solved
    nothing or grading alone already costs the self-hosted arm more.
    """
    if gpu.kind != "gpu" or priced.kind != "tokens":
        raise ValueError("break_even_utilization: need a self-hosted arm and a per-token arm")
    if not gpu.solved or not priced.cpsp:
        return None
    room = gpu.solved * priced.cpsp - gpu.grading
    return gpu.gpu_cost_at_full_use / room if room > 0 and gpu.gpu_cost_at_full_use is not None else None
