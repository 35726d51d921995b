"""Metrics and statistics over the ledger: pure functions, numpy/scipy, no UI.

stats.py      Wilson interval, pass@k, paired bootstrap, McNemar, power (seeds 000, 001)
arm.py        per-arm acceptance, QAP, retry tax, first-try share, censoring, taxonomy (seed 002)
cost.py       price tables, cost per attempt, CPSP, break-even utilization (seed 000)
compare.py    paired comparison of two arms of one run (seed 000)
replicates.py several runs of one manifest: spread, failure frequency, sessions (seed 003)
determinism.py  error bars, failure rotation, within-session determinism vs restarts (seed 003)
replicate_stats.py  those over the ledger's runs, and their report blocks (issue 17)
read.py       the one-line practical read per arm (seed 002)
report.py     build_report(ledger, run_ids) -> dict;  render.py: render_report(dict, fmt) -> str
"""
from agent.metrics.arm import ArmMetrics, TaskOutcome, arm_metrics, task_outcomes
from agent.metrics.compare import Comparison, compare_arms
from agent.metrics.cost import ArmCost, Price, arm_cost, break_even_utilization, parse_price
from agent.metrics.errors import PriceError, ReportError
from agent.metrics.render import render_report
from agent.metrics.replicates import check_same_manifest, replicate_summary
from agent.metrics.report import build_report
from agent.metrics.stats import (McNemar, PairedGap, mcnemar_exact, mean_pass_at_k, paired_bootstrap,
                                 pass_at_k, tasks_needed_for_power, wilson)

__all__ = [
    "ArmCost", "ArmMetrics", "Comparison", "McNemar", "PairedGap", "Price", "PriceError",
    "ReportError", "TaskOutcome", "arm_cost", "arm_metrics", "break_even_utilization",
    "build_report", "check_same_manifest", "compare_arms", "mcnemar_exact", "mean_pass_at_k",
    "paired_bootstrap", "parse_price", "pass_at_k", "render_report", "replicate_summary",
    "task_outcomes", "tasks_needed_for_power", "wilson",
]
