"""The figures a benchmark measured, kept for benchmarks/all.py: each with its unit, its floor
(measured in the same run), its target and whether it met it, and the load average at the
script's start and end. A script prints its own report as before and, given `--json FILE`,
writes these there too.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any


def load_average() -> float:
    return os.getloadavg()[0]


def add_json_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", type=Path, help="also write the figures to this file (benchmarks/all.py reads it)")


class Figures:
    """One script's figures, keyed by name ("whole_run.in_process.cpu_ms")."""

    def __init__(self, script: str):
        self.script = script
        self.load_start = load_average()
        self.items: dict[str, dict[str, Any]] = {}

    def add(
        self,
        key: str,
        value: float,
        unit: str,
        *,
        floor: float | None = None,
        floor_is: str | None = None,
        target: str | None = None,
        ok: bool | None = None,
    ) -> float:
        """Record a figure (and return it, to be printed); `floor_is` says what the floor is."""
        self.items[key] = {
            "value": value,
            "unit": unit,
            "floor": floor,
            "floor_is": floor_is,
            "target": target,
            "ok": ok,
        }
        return value

    @property
    def ok(self) -> bool:
        return all(f["ok"] is not False for f in self.items.values())

    def write(self, path: Path | None) -> None:
        if path is None:
            return
        path.write_text(
            json.dumps(
                {
                    "script": self.script,
                    "load_start": self.load_start,
                    "load_end": load_average(),
                    "cores": os.cpu_count(),
                    "figures": self.items,
                },
                indent=1,
            )
        )
