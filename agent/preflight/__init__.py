"""Preflight: before quota is spent, compare each arm's endpoint with its config (what an
endpoint says it is and what it runs can differ, and integrity failures look like successful
runs).

checks.py  Check (ok / differs / unknown, what to change, invalidating?) from what was observed
server_checks.py  the server itself: parallel slots, the GGUF file, llama.cpp's flags
probes.py  the tiny requests: reply, calibration, context near/over the limit and at the
           suite's largest first request, tool calls per tool_choice, two calls at once
run.py     every arm of a run: probe, conclude, record (calls of kind 'preflight'), table,
           the one-line refusal; `quotabench preflight CONFIG`
"""

from agent.preflight.checks import Check, Observed, Outcome
from agent.preflight.run import (
    WOULD_REFUSE,
    ArmPreflight,
    preflight_arms,
    preflight_for_run,
    preflight_standalone,
    recorded_differences,
    recorded_refusal,
    refusal,
    spent_line,
    table_lines,
)

__all__ = [
    "WOULD_REFUSE",
    "ArmPreflight",
    "Check",
    "Observed",
    "Outcome",
    "preflight_arms",
    "preflight_for_run",
    "preflight_standalone",
    "recorded_differences",
    "recorded_refusal",
    "refusal",
    "spent_line",
    "table_lines",
]
