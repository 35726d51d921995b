"""How values read: verdict and failure-class badges, tokens, durations, times (Rich Text only,
so text from the ledger is never parsed as markup)."""

from __future__ import annotations

import re
from typing import Any

from rich.text import Text

from agent.classify import CLASS_LABELS, CLASS_MEANINGS
from tuiapp.looks import CELL_LOOKS, CLASS_LOOKS, CONTROL_LOOKS

MODEL_CHARS = 28  # an arm's model name on screen; the full name (a GGUF path) stays in the ledger
_MODEL_FILE = re.compile(r"\.(gguf|bin|safetensors|ggml)$", re.IGNORECASE)

# a class's or an attempt's badge: the UI's looks, and the browser's own states of an attempt
# with no class (ended but never graded, never made)
CLASS_STYLES = {status: look.style for status, look in (CELL_LOOKS | CONTROL_LOOKS).items() if look.style} | {
    "ungraded": "bold blue",
    "not run": "bright_black",
}
VERDICT_STYLES = {
    "pass": "green",
    "fail": "red",
    "timeout": "yellow",
    "error": "red",
    "tampering": "bold white on red",
    "running": "blue",
    "ungraded": "blue",
}
CLASS_HELP = {
    **CLASS_MEANINGS,
    "running": "never ended: the run stopped (crashed or killed) while this attempt was in progress",
    "ungraded": "ended but never graded: the run stopped before grading",
    "not run": "no attempt was made",
}


def short_model(model: str | None, width: int = MODEL_CHARS) -> str:
    """An arm's model as the screens label it: a file path (a local GGUF) becomes its file name
    without the extension; a hosted id ("qwen/qwen3-coder") is kept; past `width` the middle
    is elided, so both ends stay readable."""
    name = (model or "").strip()
    if name.startswith(("/", "~", "./", "../")) or "\\" in name or _MODEL_FILE.search(name):
        name = _MODEL_FILE.sub("", re.split(r"[\\/]", name.rstrip("/\\"))[-1])
    if len(name) > width:
        keep = width - 1
        name = name[: (keep + 1) // 2] + "…" + name[len(name) - keep // 2 :]
    return name or "?"


def class_label(failure_class: str | None) -> str:
    if not failure_class:
        return "—"
    if failure_class in CONTROL_LOOKS:
        return f"{CONTROL_LOOKS[failure_class].short} control"
    return CLASS_LABELS.get(failure_class, failure_class)


# The live grid's glyph, kept in the browser's cells: a gamed grader is seen before it is read.
CLASS_GLYPHS = {"tampering": CLASS_LOOKS["tampering"].glyph + " "} | {
    status: look.glyph + " " for status, look in CONTROL_LOOKS.items()
}


def class_text(failure_class: str | None) -> Text:
    glyph = CLASS_GLYPHS.get(failure_class or "", "")
    return Text(glyph + class_label(failure_class), style=CLASS_STYLES.get(failure_class or "", ""))


def verdict_text(verdict: str | None) -> Text:
    return Text(verdict or "—", style=VERDICT_STYLES.get(verdict or "", "bright_black"))


def tokens(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


def tokens_short(n: float | None) -> str:
    """A token count in at most 6 characters, never cut: 950, 12.3k, 120k, 1.25M; "—" for None."""
    if n is None:
        return "—"
    n = int(round(n))
    if abs(n) < 1000:
        return f"{n}"
    if abs(n) < 100_000:
        return f"{n / 1000:.1f}".removesuffix(".0") + "k"
    if abs(n) < 1_000_000:
        return f"{n // 1000}k"
    if abs(n) < 100_000_000:
        return f"{n / 1_000_000:.2f}".rstrip("0").removesuffix(".") + "M"
    return f"{n // 1_000_000:,}M"


def duration(ms: int | None) -> str:
    if ms is None:
        return "—"
    if ms < 1000:
        return f"{ms} ms"
    return f"{ms / 1000:.1f} s" if ms < 120_000 else f"{ms / 60000:.1f} min"


def when(utc: str | None) -> str:
    """'2026-11-30T01:50:04.068+00:00' -> '2026-11-30 01:50:04 UTC'."""
    if not utc:
        return "—"
    return utc[:19].replace("T", " ") + " UTC"


def rate(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def run_status(run: dict[str, Any], short: bool = False) -> Text:
    """A run row's status as agent.ledger.liveness reads it: `running` only while its process
    lives, `interrupted` once it is gone; 'never finished' when this host cannot tell."""
    from agent.ledger.liveness import run_state

    status = run_state(run) if run.get("status") else "?"
    if status == "interrupted":
        hint = f": `quotabench resume {str(run.get('id'))[:10]}` finishes it" if run.get("id") and not short else ""
        return Text(f"interrupted{hint}", style="bold yellow")
    if status == "running?" and not run.get("finished_utc"):
        return Text(
            "never finished" if short else "never finished: still running, or crashed / killed", style="bold yellow"
        )
    style = {"finished": "green", "aborted": "yellow", "crashed": "red"}.get(status, "")
    return Text(status, style=style)


def sandbox_warning(sandbox: str | None) -> Text | None:
    """A mark for a run that graded without the bubblewrap sandbox (None when it had it)."""
    if sandbox == "bwrap":
        return None
    return Text(f"⚠ no full sandbox ({sandbox or 'unrecorded'})", style="bold yellow")
