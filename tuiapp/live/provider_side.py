"""An arm's provider, as the live view's second meter shows it: the rate limits the provider's
last response announced, the cached share of prompt tokens (as reported), the time calls waited
for its limit, and why its quota ended the arm (cleared when the arm runs again)."""

from __future__ import annotations

from dataclasses import dataclass

from agent import events as ev


@dataclass
class ProviderSide:
    limits: ev.ProviderLimits | None = None
    prompt_tokens: int = 0
    cached_tokens: int = 0
    paced_ms: int = 0
    quota: str = ""  # "provider quota: ..." while the provider's quota holds the arm

    @property
    def cached_share(self) -> float | None:
        return self.cached_tokens / self.prompt_tokens if self.cached_tokens and self.prompt_tokens else None

    def apply(self, event: ev.Event) -> bool:
        """Fold one of the arm's events in; True when the meter changed."""
        match event:
            case ev.ProviderLimits():
                self.limits, self.paced_ms = event, event.paced_ms
            case ev.ProviderQuotaSpent():
                self.quota = event.reason
            case ev.CallFinished():
                self.prompt_tokens += event.prompt_tokens
                self.cached_tokens += event.cached_tokens
                self.paced_ms += event.paced_ms
            case ev.ArmStateChanged() if event.state == "running":  # topped up and resumed
                self.quota = ""
            case _:
                return False
        return True
