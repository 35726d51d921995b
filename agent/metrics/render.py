"""`render_report`: the report dict as plain aligned text, markdown or JSON. Same content in
each; every number is printed next to its n (a rate without its n cannot be read). No colours.
"""

from __future__ import annotations

import json
from typing import Any

from agent.metrics.decision_table import cost_left_out_line, decision_headers, decision_rows, published_lines
from agent.metrics.errors import ReportError
from agent.metrics.grader_view import grader_lines
from agent.metrics.integrity import integrity_lines
from agent.metrics.kinds import broken_lines, kind_lines
from agent.metrics.repeats import repeat_lines
from agent.metrics.replicate_render import replicate_blocks
from agent.metrics.replicate_stats import replicate_stats_blocks
from agent.metrics.run_lines import arm_details, comparison_lines, decision_lines, placement_line, sandbox_warning
from agent.metrics.setup import forced_banner, setup_lines
from agent.metrics.strategy_render import strategy_blocks

FORMATS = ("text", "markdown", "json")


def _session(session_id: str | None) -> str:
    """runs.session_id is the launching shell's pid plus terminal/tmux ids when present."""
    parts = [p for p in (session_id or "").split("-") if p]
    return f"shell session {'/'.join(parts)}" if parts else "session —"


def _blocks(report: dict[str, Any]) -> list[tuple[Any, ...]]:
    with_cost = report["with_cost"]
    blocks: list[tuple[Any, ...]] = []
    for section in report["runs"]:
        run = section["run"]
        blocks.append(
            (
                "heading",
                f"Run {run['id']} ({run['status'] or '—'}, created {run['created_utc'] or '—'}, "
                f"{_session(run['session_id'])}, manifest {run['manifest_sha256'] or '—'}, "
                f"n={section['n_tasks']} tasks{_controls_note(section)})",
            )
        )
        setup = _setup_of(section)
        banner = forced_banner(setup)
        if banner:
            blocks.append(("lines", [banner]))
        if not section["sandbox"]["full"]:
            blocks.append(("lines", [sandbox_warning(section["sandbox"])]))
        blocks.append(("section", "setup:", setup_lines(setup)))
        if section["sandbox"]["placement"]["n"]:
            blocks.append(("lines", [placement_line(section["sandbox"]["placement"])]))
        blocks.append(("table", decision_headers(section, with_cost), decision_rows(section, with_cost)))
        left_out = cost_left_out_line(report)
        if left_out:
            blocks.append(("lines", [left_out]))
        blocks.append(("section", "published with these numbers:", published_lines(section, with_cost)))
        if section.get("broken_tasks"):
            blocks.append(
                (
                    "section",
                    f"task folders left out of this run ({len(section['broken_tasks'])}, not in n): they would not load",
                    broken_lines(section["broken_tasks"]),
                )
            )
        for arm in section["arms"]:
            blocks.append(("section", f"{arm['metrics']['name']}:", arm_details(arm)))
        if len(section.get("by_kind") or ()) > 1:
            blocks.append(
                ("section", "accepted by task kind (accepted / decided tasks):", kind_lines(section["by_kind"]))
            )
        if section.get("repeated_retries"):
            blocks.append(("section", "retries that could not differ:", repeat_lines(section["repeated_retries"])))
        if section.get("integrity"):
            blocks.append(
                ("section", "grader integrity (apart from acceptance):", integrity_lines(section["integrity"]))
            )
        blocks.extend(strategy_blocks(section, with_cost))
        for c in section["comparisons"]:
            blocks.append(("section", f"paired comparison {c['second']} vs {c['first']}:", comparison_lines(c)))
        if section["comparisons"]:
            blocks.append(("lines", [f"decision rule: {report['decision_rule']['text']}"]))
        blocks.extend(_weak_test_blocks(section))
        if section.get("decision") and section["decision"]["n_pairs"]:
            blocks.append(
                (
                    "section",
                    "sequential decision (stays valid when watched after every task):",
                    decision_lines(section["decision"]),
                )
            )
    for i, group in enumerate(report.get("setup_groups") or []):
        runs = ", ".join(group["run_ids"])
        lines = [f"runs {runs}"] + (group["differences"] or ["the first setup"] if i else ["the first setup"])
        blocks.append(
            (
                "section",
                f"setup {i + 1} of {len(report['setup_groups'])} ({group['setup_sha256'][:16]}): not replicates of the others",
                lines,
            )
        )
        if group.get("replicates"):
            blocks.extend(replicate_blocks(group["replicates"]))
        if group.get("replicate_statistics"):
            blocks.extend(replicate_stats_blocks(group["replicate_statistics"]))
    if report["replicates"]:
        blocks.extend(replicate_blocks(report["replicates"]))
        early = [sec["run"]["id"] for sec in report["runs"] if (sec.get("decision") or {}).get("stopped_early")]
        if early:
            blocks.append(
                (
                    "lines",
                    [
                        f"not fixed-n: {', '.join(early)} stopped early when the comparison was "
                        "decided; its figures cover the decided prefix only, and its gap is biased "
                        "toward a larger one (docs/sequential.md)"
                    ],
                )
            )
    if report.get("replicate_statistics"):
        blocks.extend(replicate_stats_blocks(report["replicate_statistics"]))
    if len(report["runs"]) == 1:
        blocks.append(
            (
                "lines",
                [
                    "run-to-run spread: unknown from one run (the model's own error bar, seed 003) — "
                    "`quotabench run CONFIG --replicates 3` measures it"
                ],
            )
        )
    return blocks


def _weak_test_blocks(section: dict[str, Any]) -> list[tuple[Any, ...]]:
    """How strong the hidden tests are, and how a visible-only grader would have read each arm."""
    view = section.get("grader_view") or {}
    hidden = section.get("hidden_tests")
    lines = [hidden["statement"]] if hidden else ["hidden tests: not scored — `quotabench validate --mutants SUITE`"]
    if hidden and hidden["weak"]:
        lines.append("weak tasks: " + ", ".join(f"{w['task_id']} {w['score']:.2f}" for w in hidden["weak"][:10]))
    lines += grader_lines(view.get("arms") or [], view.get("gaps") or [])
    return [("section", "weak-test view (the same tasks, graded by the visible tests alone):", lines)]


def _setup_of(section: dict[str, Any]) -> dict[str, Any]:
    return {**section["setup"], "arms": [a["setup"] for a in section["arms"] if a.get("setup")]}


def _controls_note(section: dict[str, Any]) -> str:
    controls = (section.get("integrity") or {}).get("controls") or []
    return f" + {len(controls)} impossible control{'s' if len(controls) != 1 else ''}" if controls else ""


def _text_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]

    def line(cells: list[str]) -> str:
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def _md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    return [line(headers), "|" + "---|" * len(headers), *(line(r) for r in rows)]


def _render(blocks: list[tuple[Any, ...]], markdown: bool) -> str:
    out: list[str] = []
    for kind, *body in blocks:
        if kind == "heading":
            out += [f"## {body[0]}" if markdown else body[0], ""]
        elif kind == "table":
            out += (_md_table if markdown else _text_table)(*body) + [""]
        elif kind == "section":
            title, lines = body
            out += [f"**{title}**" if markdown else title]
            out += [f"- {line}" if markdown else f"  {line}" for line in lines] + [""]
        else:
            out += [f"- {line}" if markdown else line for line in body[0]] + [""]
    return "\n".join(out).rstrip() + "\n"


def render_report(report: dict[str, Any], fmt: str) -> str:
    """The report as `text` (aligned plain table), `markdown` or `json`: the same content."""
    if fmt == "json":
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    if fmt not in FORMATS:
        raise ReportError(f"report format {fmt!r} is unknown — use one of: {', '.join(FORMATS)}")
    return _render(_blocks(report), markdown=fmt == "markdown")
