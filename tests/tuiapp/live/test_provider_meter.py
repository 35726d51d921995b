"""The live view's second meter per arm: what the provider's headers say is left of its rate
limit, the cached share of prompt tokens, time waited for the limit, and the provider's quota
ending the arm (a notice: the run is paused until the user tops up and resumes)."""

from __future__ import annotations

import pytest

from agent import events as ev
from tuiapp.live.state import RunState
from tuiapp.live.widgets import provider_wordings


def _call(arm: str, prompt: int, cached: int, paced: int = 0) -> ev.CallFinished:
    return ev.CallFinished(
        "R", arm=arm, task_id="t", attempt=1, status="ok", retry_index=0, prompt_tokens=prompt,
        completion_tokens=10, usage_source="reported", latency_ms=5, cached_tokens=cached, paced_ms=paced,
    )  # fmt: skip


def _limits(arm: str, remaining: int) -> ev.ProviderLimits:
    return ev.ProviderLimits("R", arm=arm, limit_tokens=40_000, remaining_tokens=remaining, reset_tokens_s=12.0,
                             limit_requests=500, remaining_requests=499, reset_requests_s=0.1, paced_ms=1500)  # fmt: skip


def test_the_meter_shows_what_the_provider_says_is_left_and_the_cached_share():
    state = RunState(["A", "B"], {"A": 100_000, "B": 100_000})
    for event in (_call("A", 1000, 0), _call("A", 1000, 800, paced=1500), _limits("A", 38_000)):
        assert state.apply(event) is None
    a, b = state.arms["A"], state.arms["B"]
    assert a.provider.cached_share == pytest.approx(0.4)
    longest = provider_wordings(a)[0]
    assert longest.startswith("provider: 38k of 40k tok/min left, resets in 12 s")
    assert "499 req left" in longest and "cached 40%" in longest and "waited 1.5 s" in longest
    assert provider_wordings(b) == []  # a provider that says nothing: no second meter


def test_a_spent_quota_is_a_notice_and_the_meter_says_why_until_resumed():
    state = RunState(["A"], {"A": 100_000})
    reason = "provider quota: You exceeded your current quota, please check your plan and billing details."
    notice = state.apply(ev.ProviderQuotaSpent("R", arm="A", reason=reason))
    assert notice is not None and (notice.kind, notice.arm, notice.text) == ("provider_quota", "A", reason)
    assert provider_wordings(state.arms["A"])[0].startswith(f"provider: {reason} — top up, then resume")
    assert state.apply(ev.ProviderQuotaSpent("R", arm="A", reason=reason, policy="continue")) is None  # headless
    state.apply(ev.ArmStateChanged("R", arm="A", state="running"))
    assert state.arms["A"].provider.quota == ""
