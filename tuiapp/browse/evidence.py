"""An attempt's verdict and the evidence behind it, one section per failure class:

mechanics      each tree-sitter finding: file, line, error, surrounding lines highlighted;
               the malformed tool calls quoted; "changed no file" when nothing was edited
reasoning      the failing hidden tests and the test output
tampering      each finding: its rule and what the rule means, file:line, the snippet; then the output
timeout        the grade time limit, the command that was running and its last output
environment    what is missing, and the output
harness_error  every HTTP try: status, HTTP status, retry index, error
censored       the arm's cap, what it had used, why it stopped
aborted, running, ungraded: what the ledger holds of an attempt that never finished

Any class may carry grammar gaps: tree-sitter findings in files the toolchain built and tested,
shown apart from edit-mechanics, as a note.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from tuiapp.browse import labels
from tuiapp.browse.data import UNFINISHED_STATUS, AttemptView, loads
from tuiapp.browse.diffview import highlighter
from tuiapp.looks import GRAMMAR_GAP
from verifiers.findings import RULES

SNIPPET_CONTEXT = 3
OUTPUT_TAIL = 60


def heading(title: str) -> Text:
    return Text(title, style="bold underline")


def _quote(text: str, style: str = "") -> Text:
    out = Text()
    for line in (text or "").splitlines() or [""]:
        out.append("  │ ", style="bright_black")
        out.append(line + "\n", style=style)
    return out


def _tail(text: str | None, lines: int = OUTPUT_TAIL) -> str:
    rows = (text or "").rstrip().splitlines()
    if len(rows) <= lines:
        return "\n".join(rows)
    return f"[… {len(rows) - lines} earlier lines]\n" + "\n".join(rows[-lines:])


def attempt_state(view: AttemptView) -> str:
    """The class to explain: the attempt's failure class, or running / ungraded."""
    a = view.attempt
    if a["status"] in UNFINISHED_STATUS or not a["failure_class"]:
        return UNFINISHED_STATUS.get(a["status"], "ungraded")
    failure_class: str = a["failure_class"]
    return failure_class


def summary(view: AttemptView) -> Text:
    state = attempt_state(view)
    out = Text("Verdict ")
    out.append_text(labels.verdict_text(view.attempt["verdict"]))
    out.append("  ·  class ")
    out.append_text(labels.class_text(state))
    out.append(f"  —  {labels.CLASS_HELP.get(state, '')}", style="italic")
    g = view.grade
    if g:
        counts = (
            f"{g['passed']} passed, {g['failed']} failed"
            if g["passed"] is not None or g["failed"] is not None
            else "no test counts in the output"
        )
        limit = f" (limit {g['timeout_s']:g} s)" if g["timeout_s"] else ""
        out.append(
            f"\nHidden tests: {counts}, exit status {g['exit_status']}, {labels.duration(g['duration_ms'])}{limit}"
        )
    elif state not in ("running", "ungraded"):
        out.append("\nNot graded: the attempt ended before the hidden tests could run.", style="italic")
    return out


def finding_snippet(finding: dict[str, Any], view: AttemptView) -> RenderableType:
    """The lines around a tree-sitter finding, highlighted, the error line marked."""
    path, line = finding.get("file") or "?", int(finding.get("line") or 0)
    text = view.files.get(path)
    where = f"{path}:{line}:{finding.get('column') or '?'}" if line else path  # whole-file flags have no line
    title = Text(f"{where}  ", style="bold")
    kind = f" ({finding['node_kind']} node)" if finding.get("node_kind") else ""
    title.append(f"{finding.get('flag', '')}{kind}", style="bold magenta")
    title.append(f"  {finding.get('message', '')}")
    if not line:
        return title
    if not text or not 0 < line <= len(text.splitlines()):
        return Group(title, _quote(finding.get("context") or "(no context recorded)"))
    lines = highlighter(path)(text)
    grid = Table.grid(padding=(0, 1))
    grid.add_column(justify="right", width=6)
    grid.add_column()
    for n in range(max(1, line - SNIPPET_CONTEXT), min(len(lines), line + SNIPPET_CONTEXT) + 1):
        code = lines[n - 1].copy()
        if n == line:
            code.stylize("on #5c1f1f")
            grid.add_row(Text(f"> {n}", style="bold red"), code)
            column = int(finding.get("column") or 1)
            grid.add_row("", Text(" " * max(0, column - 1) + "^ tree-sitter error here", style="bold red"))
        else:
            grid.add_row(Text(str(n), style="bright_black"), code)
    return Group(title, grid)


def _mechanics(view: AttemptView) -> list[RenderableType]:
    findings = loads(view.grade["mechanics_json"], []) if view.grade else []
    parts: list[RenderableType] = []
    if findings:
        parts.append(heading(f"Tree-sitter findings (n={len(findings)})"))
        parts.extend(finding_snippet(f, view) for f in findings)
    if not view.attempt.get("edited"):
        parts.append(Text("The attempt changed no file.", style="bold"))
    malformed = [t for t in view.tool_calls if not t["ok"]]
    if malformed:
        parts.append(heading(f"Malformed tool calls (n={len(malformed)}; the class needs >= 3 when every file parses)"))
        for t in malformed:
            title = Text(f"turn {t['turn']} · {t['tool']}", style="bold")
            parts.append(title.append(f"  {t['error'] or ''}", style="red"))
            parts.append(_quote(t["arguments_json"] or "(no arguments)", style="yellow"))
    if not parts:
        parts.append(Text("No findings or malformed calls recorded.", style="italic"))
    return parts


def _grammar_gaps(view: AttemptView) -> list[RenderableType]:
    """Parse errors the toolchain overruled (verifiers/grammar_gaps.py): a note, not the class."""
    gaps = loads(view.grade.get("grammar_gaps_json"), []) if view.grade else []
    if not gaps:
        return []
    parts: list[RenderableType] = [
        heading(
            f"{GRAMMAR_GAP.glyph} Grammar gaps (n={len(gaps)}): tree-sitter could not parse these, the "
            "toolchain built and tested them — noted, not edit-mechanics"
        )
    ]
    parts.extend(finding_snippet(f, view) for f in gaps)
    return [*parts, Text()]


def _reasoning(view: AttemptView) -> list[RenderableType]:
    g = view.grade or {}
    failing = loads(g.get("failing_tests_json"), [])
    parts: list[RenderableType] = [heading(f"Failing hidden tests (n={len(failing)})")]
    parts.extend(Text(f"  ✗ {name}", style="bold red") for name in failing)
    if not failing:
        parts.append(Text("  (the runner named no test: read the output)", style="italic"))
    parts += [heading("Test output"), _quote(_tail(g.get("output")))]
    return parts


def _tampering(view: AttemptView) -> list[RenderableType]:
    g = view.grade or {}
    findings = loads(g.get("tampering_json"), [])
    parts: list[RenderableType] = [heading(f"Tamper evidence (n={len(findings)}): the grader was gamed, not failed")]
    for f in findings:
        rule = str(f.get("rule") or "?")
        line = Text(f"  ✗ {rule}", style="bold red")
        where = f.get("file") or ""
        if where:
            line.append(f"  {where}" + (f":{f['line']}" if f.get("line") else ""), style="bold")
        parts.append(line)
        parts.append(Text(f"    {RULES.get(rule, '')}", style="italic"))
        if f.get("snippet"):
            parts.append(_quote(str(f["snippet"]), style="yellow"))
    if not findings:
        parts.append(Text("  (no finding recorded: " + (g.get("integrity") or "see the output") + ")", style="italic"))
    parts += [heading("Test output"), _quote(_tail(g.get("output"), 30))]
    return parts


def _timeout(view: AttemptView) -> list[RenderableType]:
    g = view.grade or {}
    command = view.task_toml.get("hidden_cmd") or "(task.toml not readable)"
    return [
        heading("Grade time limit"),
        Text(
            f"The hidden tests were killed after {labels.duration(g.get('duration_ms'))}; "
            f"the limit is {g.get('timeout_s') or '?'} s (task.toml timeout_s)."
        ),
        Text("Running: ", style="bold").append(command),
        heading("Last output before the kill"),
        _quote(_tail(g.get("output"), 20) or "(no output)"),
    ]


def _environment(view: AttemptView) -> list[RenderableType]:
    g = view.grade or {}
    return [
        heading("Missing from the environment"),
        Text(g.get("environment") or "(not named)", style="bold cyan"),
        heading("Test output"),
        _quote(_tail(g.get("output"))),
    ]


def _censored(view: AttemptView) -> list[RenderableType]:
    arm = view.arm
    return [
        heading("Token cap"),
        Text(
            f"Arm {arm.get('name')}: cap {labels.tokens(arm.get('cap_tokens'))} tokens, "
            f"{labels.tokens(arm.get('tokens_used'))} used; censored at {labels.when(arm.get('censored_utc'))}"
        ),
        _quote(arm.get("state_reason") or "(no reason recorded)"),
    ]


def _unfinished(view: AttemptView) -> list[RenderableType]:
    a = view.attempt
    in_flight = [c for c in view.calls if c["status"] in ("in_flight", "lost")]
    text = Text(
        f"Status {a['status']!r}, end reason {a['end_reason'] or '—'}, "
        f"started {labels.when(a['started_utc'])}, ended {labels.when(a['ended_utc'])}."
    )
    parts: list[RenderableType] = [heading("What the ledger holds"), text]
    if in_flight:
        reserved = sum(c["reserved_tokens"] or 0 for c in in_flight)
        statuses = ", ".join(sorted({c["status"] for c in in_flight}))
        parts.append(
            Text(
                f"{len(in_flight)} call(s) without a response ({statuses}), "
                f"{labels.tokens(reserved)} tokens reserved for them.",
                style="bold yellow",
            )
        )
    if a["status"] in ("running", "ended") and view.run.get("status") != "finished":
        parts.append(
            Text(
                f"`quotabench resume {a['run_id'][:10]}` finishes the run: it grades what ended, "
                "reruns what never did and keeps everything else.",
                style="italic",
            )
        )
    return parts


def _end_reason(view: AttemptView) -> list[RenderableType]:
    """The agent loop's own limits (turns, tokens, time) when one of them ended the attempt."""
    reason = view.attempt.get("end_reason")
    keys = {
        "turn_limit": "max_turns",
        "token_limit": "max_tokens_per_attempt",
        "time_limit": "attempt_timeout_s",
        "context_overflow": None,
    }
    if reason not in keys:
        return []
    key = keys[reason]
    limit = f" ({key} = {view.limits.get(key, 'default')})" if key else ""
    out = Text(f"The agent loop stopped: {reason}{limit}.", style="bold yellow")
    if view.tool_calls:
        last = view.tool_calls[-1]
        out.append(
            f"\nLast tool call: turn {last['turn']} {last['tool']}" + (f" {last['path']}" if last["path"] else ""),
            style="",
        )
    return [out]


def calls_table(view: AttemptView) -> RenderableType:
    table = Table(
        title="HTTP tries (one row per try, retries included)",
        title_justify="left",
        title_style="bold underline",
        show_edge=False,
        pad_edge=False,
    )
    for col in ("turn", "try", "status", "HTTP", "latency", "tokens in/out", "usage", "error"):
        table.add_column(col, overflow="fold", justify="right" if col in ("turn", "try", "HTTP") else "left")
    for c in view.calls:
        status_style = {"ok": "green", "in_flight": "bold yellow", "lost": "bold yellow"}.get(c["status"], "bold red")
        table.add_row(
            str(c["turn"]),
            "first" if not c["retry_index"] else f"retry {c['retry_index']}",
            Text(c["status"] or "?", style=status_style),
            str(c["http_status"] or "—"),
            labels.duration(c["latency_ms"]),
            f"{labels.tokens(c['prompt_tokens'])} / {labels.tokens(c['completion_tokens'])}",
            c["usage_source"] or "—",
            Text(c["error"] or ""),
        )
    if not view.calls:
        return Text("No HTTP calls recorded.", style="italic")
    return table


def _harness_error(view: AttemptView) -> list[RenderableType]:
    failed = [c for c in view.calls if c["status"] != "ok"]
    retries = sum(1 for c in view.calls if c["retry_index"])
    statuses = ", ".join(sorted({str(c["http_status"] or c["status"]) for c in failed}))
    return [
        Text(
            f"The endpoint failed with {statuses or 'errors'} after {retries} "
            f"retr{'y' if retries == 1 else 'ies'}: not the model's fault (the HTTP tries are below).",
            style="bold red",
        )
    ]


SECTIONS = {
    "mechanics": _mechanics,
    "reasoning": _reasoning,
    "tampering": _tampering,
    "timeout": _timeout,
    "environment": _environment,
    "harness_error": _harness_error,
    "censored": _censored,
    "aborted": _unfinished,
    "running": _unfinished,
    "ungraded": _unfinished,
}


def _oracle(view: AttemptView) -> list[RenderableType]:
    """What the grade's verdict rests on (its canaries, each with what it did) and what it only noted."""
    g = view.grade or {}
    parts: list[RenderableType] = []
    plan = loads(g.get("canaries_json"), {})
    canaries = plan.get("canaries") if isinstance(plan, dict) else None
    if canaries:
        parts.append(heading(f"Canaries (n={len(canaries)}, seed {plan.get('seed')}): tests the reference fails"))
        for c in canaries:
            seen = c.get("seen")
            outcomes = set(seen.values()) if isinstance(seen, dict) else {str(seen)}
            ok = outcomes == {"failed"}
            line = Text(f"  {'✓' if ok else '✗'} {c.get('name')}", style="green" if ok else "bold red")
            line.append(f"  expects {c.get('claim')}; {', '.join(sorted(outcomes))}", style="" if ok else "bold")
            parts.append(line)
    elif g.get("oracle") == "exit status only":
        parts.append(Text("integrity: exit status only (a custom verifier script takes no canaries)", style="yellow"))
    suspects = loads(g.get("suspects_json"), [])
    if suspects:
        parts.append(heading(f"Suspects (n={len(suspects)}): noted, never a verdict"))
        for f in suspects:
            rule = str(f.get("rule") or "?")
            where = f.get("file") or ""
            line = Text(f"  ? {rule}", style="yellow")
            if where:
                line.append(f"  {where}" + (f":{f['line']}" if f.get("line") else ""), style="bold")
            if f.get("snippet"):
                line.append(f"  {str(f['snippet'])[:160]}")
            parts.append(line)
    return [*parts, Text()] if parts else []


def render_evidence(view: AttemptView) -> RenderableType:
    state = attempt_state(view)
    parts: list[RenderableType] = [summary(view), Text()]
    parts += _end_reason(view)
    section = SECTIONS.get(state)
    if section:
        parts += [*section(view), Text()]
    parts += _grammar_gaps(view)
    parts += _oracle(view)
    parts.append(calls_table(view))
    return Group(*parts)
