"""Metrics and statistics over the ledger: pure functions, numpy and the stdlib (no scipy), no UI.

stats.py      Wilson, Tango's paired score interval, pass@k, bootstraps, exact McNemar, power
outcome.py    a task's outcome and an arm's figures: the one definition report, live view and browser use
arm.py        per-arm metrics from ledger rows: outcome.py's figures plus spend and taxonomy
usage.py      token accounting (reported vs estimated), busy time as a union of calls, grading compute
price.py      an arm's price table: per token or by the GPU-hour; a bad one is a PriceError naming the arm
cost.py       cost per attempt, CPSP, shared servers, break-even utilization
billing.py    what a provider billed: cached, reasoning tokens, reported costs, billed-equivalent tokens
compare.py    paired comparison of two arms and the one decision rule
replicates.py several runs of one manifest: spread, pass@k with intervals, failure frequency
determinism.py  error bars, failure rotation, within-session determinism vs restarts
replicate_stats.py  those over the ledger's runs, and their report blocks
read.py       the one-line practical read per arm
report.py     build_report(ledger, run_ids) -> dict: the ledger's reads first (agent.ledger.report_reads), then
report_sections.py  the sections computed from those reads (decision, strategies, sandboxes, grader view)
render.py     render_report(dict, fmt) -> str, from cells.py (cell formatters), decision_table.py,
              run_lines.py (each section's lines) and replicate_render.py
"""

from agent.metrics.arm import ArmMetrics, arm_metrics, task_outcomes
from agent.metrics.compare import Comparison, Verdict, compare_arms, decide
from agent.metrics.cost import ArmCost, arm_cost, break_even_utilization
from agent.metrics.errors import PriceError, ReportError
from agent.metrics.outcome import ArmFigures, AttemptRecord, TaskOutcome, arm_figures, task_outcome
from agent.metrics.price import Price, parse_price
from agent.metrics.render import render_report
from agent.metrics.replicates import check_same_manifest, replicate_summary
from agent.metrics.report import build_report
from agent.metrics.stats import (
    McNemar,
    PairedGap,
    PairedInterval,
    mcnemar_exact,
    mean_pass_at_k,
    paired_bootstrap,
    pass_at_k,
    tango_interval,
    tasks_needed_for_power,
    wilson,
)

__all__ = [
    "ArmCost",
    "ArmFigures",
    "ArmMetrics",
    "AttemptRecord",
    "Comparison",
    "McNemar",
    "PairedGap",
    "PairedInterval",
    "Price",
    "PriceError",
    "ReportError",
    "TaskOutcome",
    "Verdict",
    "arm_cost",
    "arm_figures",
    "arm_metrics",
    "break_even_utilization",
    "build_report",
    "check_same_manifest",
    "compare_arms",
    "decide",
    "mcnemar_exact",
    "mean_pass_at_k",
    "paired_bootstrap",
    "parse_price",
    "pass_at_k",
    "render_report",
    "replicate_summary",
    "tango_interval",
    "task_outcome",
    "task_outcomes",
    "tasks_needed_for_power",
    "wilson",
]
