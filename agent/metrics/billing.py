"""What an arm's provider billed: its calls' cached, cache-write and reasoning tokens and the
costs it reported, summed per arm in one query (report_reads.spend_sums), and the money and billed-equivalent tokens that
follow from a price table.

A call's cost is the provider's own (`calls.cost_usd`, e.g. OpenRouter's usage.cost) when it
reported one, else the price table's: uncached prompt at the input rate, cached prompt at
`cached_input_per_mtok`, cache writes at `cache_write_per_mtok` (each the input rate when
absent), completion (reasoning included) at the output rate. An arm's cost source is
`reported` when every call that spent tokens reported its cost, `priced` when none did, else
`mixed`. Billed-equivalent tokens weigh each prompt token by its price relative to the input
rate (completion tokens count one each): what the tokens would be at the full input price, so
a caching arm's tokens and a non-caching arm's compare as the bills do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent.metrics.price import Price


@dataclass(frozen=True)
class Spend:
    """One arm's calls as billed (token counts as the provider sent them)."""

    prompt: int = 0
    completion: int = 0
    cached: int = 0
    cache_write: int = 0
    reasoning: int = 0
    priced_prompt: int = 0
    priced_completion: int = 0
    priced_cached: int = 0
    priced_cache_write: int = 0
    reported_usd: float = 0.0
    reported_calls: int = 0
    priced_calls: int = 0
    detailed: int = 0  # provider details recorded at all (0: a ledger from before them, or a plain endpoint)
    paced_ms: int = 0
    limited: int = 0  # tries the provider refused for its rate limit (HTTP 429)
    fixed_window: int = 0  # tries after the pacer learned a fixed window (agent/endpoints/pacing.py)
    paced_calls: int = 0  # tries made with pacing on (their pace_window recorded)

    @property
    def cached_share(self) -> float | None:
        """Cached prompt tokens / prompt tokens (None: no prompt tokens, or no provider details reported)."""
        return self.cached / self.prompt if self.prompt and self.detailed else None

    @property
    def source(self) -> str:
        if not self.reported_calls:
            return "priced"
        return "reported" if not self.priced_calls else "mixed"


def _pacing(spend: Spend) -> str | None:
    """The pacer's model an arm's tries ended with, when it paced at all and it mattered."""
    if spend.fixed_window:
        return "fixed"
    return "steady" if spend.paced_calls and (spend.paced_ms or spend.limited) else None


def spends_of(rows: Iterable[Mapping[str, Any]]) -> tuple[dict[str, Spend], dict[str, Spend]]:
    """Each arm's Spend as billed (its attempt calls; preflight is never charged) and as the
    model's (leaving out the calls of lost attempts, as the model's cost, CPSP, does), from
    report_reads.spend_sums' rows (one per arm and lost flag)."""
    fields = Spend.__dataclass_fields__
    billed: dict[str, Spend] = {}
    model: dict[str, Spend] = {}
    for row in rows:
        spend = Spend(**{k: row.get(k, 0) for k in fields})  # columns a ledger before them lacks: 0
        arm = row["arm"]
        billed[arm] = _plus(billed[arm], spend) if arm in billed else spend
        if not row["lost"]:
            model[arm] = spend
    return billed, model


def _plus(a: Spend, b: Spend) -> Spend:
    return Spend(**{k: getattr(a, k) + getattr(b, k) for k in Spend.__dataclass_fields__})


def _rates(price: Price) -> tuple[float, float, float, float]:
    assert price.input_per_mtok is not None and price.output_per_mtok is not None  # kind "tokens"
    cached = price.cached_input_per_mtok if price.cached_input_per_mtok is not None else price.input_per_mtok
    write = price.cache_write_per_mtok if price.cache_write_per_mtok is not None else price.input_per_mtok
    return price.input_per_mtok, cached, write, price.output_per_mtok


def priced_usd(price: Price, prompt: int, cached: int, cache_write: int, completion: int) -> float:
    """$ of tokens at the table's rates (cached and cache_write are part of prompt)."""
    rate_in, rate_cached, rate_write, rate_out = _rates(price)
    uncached = max(0, prompt - cached - cache_write)
    return (uncached * rate_in + cached * rate_cached + cache_write * rate_write + completion * rate_out) / 1e6


def spend_cost(price: Price, spend: Spend) -> float:
    """The arm's model cost: reported costs as charged, the rest at the table's rates."""
    return spend.reported_usd + priced_usd(
        price, spend.priced_prompt, spend.priced_cached, spend.priced_cache_write, spend.priced_completion
    )


def billed_equivalent(price: Price | None, spend: Spend) -> float | None:
    """Tokens weighted by their price relative to the input rate (see the module docstring);
    None without a per-token price whose input rate is above 0."""
    if price is None or price.kind != "tokens" or not price.input_per_mtok:
        return None
    rate_in, rate_cached, rate_write, _ = _rates(price)
    uncached = max(0, spend.prompt - spend.cached - spend.cache_write)
    return uncached + spend.cached * rate_cached / rate_in + spend.cache_write * rate_write / rate_in + spend.completion


def spend_summary(price: Price | None, spend: Spend) -> dict[str, Any]:
    """The report's per-arm provider figures (JSON-ready)."""
    return {
        "cached_tokens": spend.cached,
        "cache_write_tokens": spend.cache_write,
        "reasoning_tokens": spend.reasoning,
        "cached_share": spend.cached_share,
        "billed_equivalent_tokens": billed_equivalent(price, spend),
        "cost_source": spend.source,
        "reported_cost_usd": spend.reported_usd if spend.reported_calls else None,
        "paced_ms": spend.paced_ms,
        "rate_limited": spend.limited,
        "pacing": _pacing(spend),
    }


COST_SOURCES = {"reported": "reported by the provider", "priced": "priced", "mixed": "partly reported, partly priced"}


def provider_line(summary: dict[str, Any] | None) -> str | None:
    """The report's line of an arm's provider figures (spend_summary); None when there are none."""
    if not summary or not (
        summary["cached_tokens"]
        or summary["cache_write_tokens"]
        or summary["reasoning_tokens"]
        or summary["reported_cost_usd"] is not None
        or summary["paced_ms"]
        or summary.get("rate_limited")
    ):
        return None
    parts = []
    share = summary["cached_share"]
    if share is not None:
        parts.append(f"cached {share:.0%} of prompt tokens ({summary['cached_tokens']:,})")
    if summary["cache_write_tokens"]:
        parts.append(f"cache writes {summary['cache_write_tokens']:,}")
    if summary["reasoning_tokens"]:
        parts.append(f"reasoning {summary['reasoning_tokens']:,} tokens (in completion)")
    if summary["billed_equivalent_tokens"] is not None:
        parts.append(f"billed-equivalent {summary['billed_equivalent_tokens']:,.0f} tokens")
    if summary["reported_cost_usd"] is not None:
        parts.append(f"provider-reported cost ${summary['reported_cost_usd']:.4f}")
    if summary["paced_ms"]:
        parts.append(f"waited {summary['paced_ms'] / 1000:,.1f} s for its rate limit (not in latency)")
    if summary.get("rate_limited"):
        parts.append(
            f"{summary['rate_limited']:,} tr{'y' if summary['rate_limited'] == 1 else 'ies'} met a rate-limit 429"
        )
    pacing = summary.get("pacing")
    if pacing == "fixed":
        parts.append("paced as a fixed window (the budget back at each reset, learned from a 429)")
    elif pacing == "steady":
        parts.append("paced as a steady refill")
    return "provider: " + "; ".join(parts)
