"""Preflight's checks of the server itself: whether two calls at once queue (parallel slots),
which model file a llama.cpp server loaded, and the flags its process runs with."""

from __future__ import annotations

from typing import Any

from agent.config import ArmConfig
from agent.preflight.checks import Check, Observed

QUEUED = 0.5  # the slower of two simultaneous calls ends this many single-call times after the faster: queued
OVERLAP = 0.3  # ... at most this many: they ran side by side (in between: cannot tell)
TOO_FAST_MS = 20


def slots_verdict(pairs: list[tuple[int, int, int]]) -> str | None:
    """ "queues", "overlaps", or None (too fast to tell, or unclear). Per pair, how much later the
    slower of two simultaneous calls ended, in units of one call alone; the median over the
    pairs decides, so one pair disturbed by a busy machine does not."""
    if not pairs or any(max(solo, faster) < TOO_FAST_MS for solo, faster, _ in pairs):
        return None
    lags = sorted((slower - faster) / max(1, min(solo, faster)) for solo, faster, slower in pairs)
    median = lags[len(lags) // 2] if len(lags) % 2 else (lags[len(lags) // 2 - 1] + lags[len(lags) // 2]) / 2
    if median >= QUEUED:
        return "queues"
    return "overlaps" if median <= OVERLAP else None


def slots_check(arm: ArmConfig, obs: Observed) -> Check:
    expected = f"max_concurrency {arm.max_concurrency}"
    if not obs.pairs:
        return Check("parallel slots", "unknown", expected, "not probed")
    timings = "ms alone → two at once: " + "; ".join(f"{s:,} → {a:,}, {b:,}" for s, a, b in obs.pairs)
    verdict = slots_verdict(obs.pairs)
    if verdict is None:
        return Check("parallel slots", "unknown", expected, f"cannot tell ({timings})")
    seen = f"two calls at once {'queue' if verdict == 'queues' else 'overlap'} ({timings})"
    if verdict == "queues" and arm.max_concurrency > 1:
        return Check(
            "parallel slots",
            "differs",
            expected,
            seen,
            "the server serves one call at a time: set "
            "max_concurrency = 1, or give the server more slots (queued calls eat the attempt's time)",
        )
    return Check("parallel slots", "ok", expected, seen)


def gguf_check(constants: dict[str, Any], pinned: str | None) -> Check:
    sha = constants.get("gguf_sha256")
    if not sha:
        return Check("gguf sha256", "unknown", pinned or "not pinned", "not measured")
    if pinned is None:
        return Check("gguf sha256", "ok", "not pinned", f"{sha} (recorded)", f'pin it: gguf_sha256 = "{sha}"')
    if sha == pinned:
        return Check("gguf sha256", "ok", pinned[:16] + "…", sha[:16] + "…")
    return Check(
        "gguf sha256",
        "differs",
        pinned,
        sha,
        "a different model file than pinned: fix model_path / model_package or gguf_sha256",
        invalidating=True,
    )


def effective_flags(argv: list[str]) -> dict[str, str]:
    """--flag value pairs of a command line, the last occurrence winning (as argparse does)."""
    flags = {}
    for i, word in enumerate(argv):
        if word.startswith("--") and i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            flags[word] = argv[i + 1]
    return flags


def flags_check(want: dict[str, str], running: list[str] | None) -> Check:
    """The flags the config asks for (`want`) vs the command line the server process runs."""
    shown = " ".join(f"{k} {v}" for k, v in want.items() if k in ("--n_ctx", "--n_threads", "--chat_format"))
    if running is None:
        return Check("server flags", "unknown", shown, "the server's command line cannot be read")
    have = effective_flags(running)
    diffs = [f"{k} {have.get(k, '(absent)')}" for k, v in want.items() if have.get(k) != v]
    if diffs:
        return Check(
            "server flags",
            "differs",
            shown,
            f"the server runs {', '.join(diffs)}",
            "extra_args overrides a configured setting: remove it from extra_args or set the setting itself",
        )
    return Check("server flags", "ok", shown, "the server runs them")
