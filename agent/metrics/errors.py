"""Errors raised by the metrics layer: one line each, naming what failed and the fix."""

from __future__ import annotations

from agent import QuotabenchError


class ReportError(QuotabenchError):
    """A report cannot be built as asked (unknown run, manifest mismatch, bad format...)."""


class PriceError(ReportError):
    """An arm has no usable price table, so its cost would be a silent $0 (seed 000)."""
