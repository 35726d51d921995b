"""Retries that could not differ: a task's attempt whose first request is byte for byte the
previous attempt's (the same request_sha256: same prompt, same settings, temperature 0 and no
retry_seed). On a deterministic endpoint it gets the same reply back (the same response hash):
the retry only adds retry tax. Counted per arm, with what to change (docs/config.md).
"""

from __future__ import annotations

import json
from typing import Any

from agent.ledger import Ledger
from agent.ledger.report_reads import repeated_first_requests


def repeated_retries(ledger: Ledger, run_id: str, arm_rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per arm with any: how many later attempts repeated the previous one's first request, how
    many of those got the same first reply, and the arm's temperature."""
    temperature = {}
    for a in arm_rows:
        try:
            temperature[a["name"]] = json.loads(a.get("sampling_json") or "{}").get("temperature")
        except ValueError:
            temperature[a["name"]] = None
    return {
        r["arm"]: {"repeated": r["repeated"], "same_reply": r["same_reply"], "temperature": temperature.get(r["arm"])}
        for r in repeated_first_requests(ledger, run_id)
        if r["repeated"]
    }


def repeat_lines(repeats: dict[str, dict[str, Any]]) -> list[str]:
    lines = []
    for arm, r in repeats.items():
        at = f" at temperature {r['temperature']:g}" if isinstance(r["temperature"], (int, float)) else ""
        same = (
            f"; {r['same_reply']} got the same first reply: the retry budget bought nothing there"
            if r["same_reply"]
            else ""
        )
        lines.append(
            f"{arm}: {r['repeated']} retr{'y' if r['repeated'] == 1 else 'ies'} repeated the previous attempt's "
            f"request{at}{same} — set retry_seed = true or retry_temperature (docs/config.md)"
        )
    return lines
