"""The live view's widgets. Each has a `show...` method the app's message handlers call with
plain state; none reads the engine or the ledger. Colours come from live.tcss (component
classes for the parts of a line), symbols and words carry the meaning without colour.

Numbers are never cut silently: a line that does not fit its width switches to a shorter
wording with compact units (12.3k), and only the shortest one, if it still does not fit,
ends in an ellipsis (`Fit`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from agent.config import ArmConfig
from tuiapp.browse.labels import short_model, tokens_short
from tuiapp.live import figures as fig
from tuiapp.live.grid import STATUS_CLASSES
from tuiapp.live.state import ArmState, RunState, clock
from tuiapp.looks import CELL_LOOKS, CONTROL_LOOKS, GRAMMAR_GAP

Line = str | Text
Wording = Line | Sequence[Line]  # one line, or the lines of a multi-line wording


def _lines(wording: Wording) -> list[Text]:
    items = [wording] if isinstance(wording, (str, Text)) else list(wording)
    return [item if isinstance(item, Text) else Text(item) for item in items]


def fit(wordings: Sequence[Wording], width: int) -> Text:
    """The first wording (longest first) whose every line fits `width`, else the last one with an
    ellipsis where it is cut."""
    chosen = None
    for wording in wordings:
        lines = _lines(wording)
        if all(cell_len(line.plain) <= width for line in lines):
            chosen = lines
            break
    if chosen is None:
        chosen = _lines(wordings[-1]) if wordings else [Text("")]
        for line in chosen:
            line.truncate(max(1, width), overflow="ellipsis")
    out = Text("\n").join(chosen)
    out.no_wrap, out.overflow = True, "ellipsis"
    return out


class Fit(Widget):
    """Text in several wordings; shows the longest that fits the widget's width (see `fit`)."""

    def __init__(self, *wordings: Wording, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.wordings: tuple[Wording, ...] = wordings

    def show(self, *wordings: Wording) -> None:
        if wordings != self.wordings:
            self.wordings = wordings
            self.refresh()

    @property
    def text(self) -> str:
        """What the widget shows at its current width (for tests and the benchmark)."""
        return fit(self.wordings, max(1, self.size.width)).plain

    def render(self) -> Text:
        return fit(self.wordings, max(1, self.size.width))


def quota_wordings(used: int, reserved: int, cap: int) -> list[str]:
    """The meter's numbers, longest first: each keeps used, the cap and the share."""
    pct = fig.percent(fig.share(used, reserved, cap))
    t, s = fig.tokens, tokens_short
    return [
        f"{t(used)} used + {t(reserved)} in flight / cap {t(cap)} ({pct})",
        f"{t(used)} + {t(reserved)} in flight / cap {t(cap)} ({pct})",
        f"{s(used)} used + {s(reserved)} in flight / cap {s(cap)} ({pct})",
        f"{s(used)} + {s(reserved)} in flight / cap {s(cap)} ({pct})",
        f"{s(used)}+{s(reserved)} / cap {s(cap)} ({pct})",
        f"{s(used + reserved)}/{s(cap)} {pct}",
    ]


class QuotaMeter(Widget):
    """Two lines: the bar (used █, reserved in flight ▒, free ░) and the numbers.

    The widget carries -ok / -warn / -danger as the arm nears its cap; live.tcss colours
    the used part by those classes.
    """

    COMPONENT_CLASSES = {"quota-meter--used", "quota-meter--reserved", "quota-meter--free"}

    def __init__(self, danger_share: float, cap: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.danger_share = danger_share
        self.used = self.reserved = 0
        self.cap = cap

    def show(self, used: int, reserved: int, cap: int) -> None:
        self.used, self.reserved, self.cap = used, reserved, cap
        share = fig.share(used, reserved, cap)
        level = "-danger" if share >= self.danger_share else "-warn" if share >= self.danger_share - 0.2 else "-ok"
        for name in ("-ok", "-warn", "-danger"):
            self.set_class(name == level, name)
        self.refresh()

    @property
    def numbers(self) -> str:
        return fit(quota_wordings(self.used, self.reserved, self.cap), max(1, self.size.width)).plain

    def render(self) -> Text:
        width = max(1, self.size.width)
        used_w, reserved_w, free_w = fig.bar_parts(width, self.used, self.reserved, self.cap)
        style = self.get_component_rich_style
        bar = Text(no_wrap=True, overflow="crop")
        bar.append("█" * used_w, style("quota-meter--used"))
        bar.append("▒" * reserved_w, style("quota-meter--reserved"))
        bar.append("░" * free_w, style("quota-meter--free"))
        return Text("\n").join([bar, fit(quota_wordings(self.used, self.reserved, self.cap), width)])


def provider_wordings(arm: ArmState) -> list[str]:
    """The provider's meter, longest first: what its last reply said is left of its rate limit
    and when it resets, the cached share of prompt tokens, time waited for the limit; or why its
    quota ended the arm. Empty when the provider said none of it."""
    side = arm.provider
    if side.quota:
        return [f"provider: {side.quota} — top up, then resume (p)", side.quota]
    lim, s = side.limits, tokens_short
    parts: list[list[str]] = []  # each part's wordings, longest first
    if lim is not None and lim.remaining_tokens is not None:
        reset = f", resets in {lim.reset_tokens_s:.0f} s" if lim.reset_tokens_s is not None else ""
        of = f" of {s(lim.limit_tokens)}" if lim.limit_tokens else ""
        parts.append([f"{s(lim.remaining_tokens)}{of} tok/min left{reset}", f"{s(lim.remaining_tokens)} tok/min left"])
    if lim is not None and lim.remaining_requests is not None:
        parts.append([f"{lim.remaining_requests:,} req left", ""])
    if side.cached_share is not None:
        parts.append([f"cached {fig.percent(side.cached_share)}"] * 2)
    if side.paced_ms:
        parts.append([f"waited {side.paced_ms / 1000:.1f} s for it", ""])
    if not parts:
        return []
    longest = "provider: " + " · ".join(p[0] for p in parts)
    shortest = "prov: " + " · ".join(p[1] for p in parts if p[1])
    return [longest, shortest]


class BurnLine(Widget):
    """ "burn 4,210 tok/min" and a sparkline of the last five minutes (10 s per character)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rate: float | None = None
        self.spark: tuple[float, ...] = ()

    def show(self, rate: float, spark: tuple[float, ...]) -> None:
        self.rate, self.spark = rate, spark
        self.refresh()

    def render(self) -> Text:
        head = f"burn {fig.tokens(self.rate)} tok/min "
        room = max(0, min(fig.SPARK_BUCKETS, self.size.width - len(head) - 12))
        tail = " last 5 min" if self.spark else ""
        return fit(
            [head + fig.sparkline(self.spark, room) + tail, f"burn {tokens_short(self.rate)}/min"],
            max(1, self.size.width),
        )


class StreamTail(Widget):
    """The last lines of the model's streamed text, newest at the bottom."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.text = ""

    def show(self, text: str) -> None:
        if text != self.text:
            self.text = text
            self.refresh()

    def render(self) -> Text:
        width, height = max(1, self.size.width), max(1, self.size.height)
        lines = [" ".join(line.split()) for line in self.text.splitlines()]
        lines = [line for line in lines if line][-height:]
        shown = [("…" + line[-(width - 1) :]) if len(line) > width else line for line in lines]
        return Text("\n".join(shown) or "—", no_wrap=True, overflow="crop")


def arm_label(arm: ArmConfig) -> str:
    """The arm's model as the screens name it: short (a GGUF path becomes its file name)."""
    model = arm.model
    if not model and arm.llamacpp is not None:
        model = arm.llamacpp.model_package or arm.llamacpp.model_path or ""
    return short_model(model or arm.kind)


def metrics_wordings(f: fig.ArmFigures) -> list[tuple[str, str]]:
    """The live metrics in two lines, longest wording first."""
    if f.decided:
        rate = f"{f.acceptance:.2f} [{f.ci[0]:.2f}, {f.ci[1]:.2f}] n={f.decided}"
        accept = f"accept {rate}" if f.comparable else f"accept not comparable ({rate} finished)"
        mid = f"accept {rate}" if f.comparable else f"not comparable: {rate}"
        short = (
            f"accept {f.acceptance:.2f} [{f.ci[0]:.2f},{f.ci[1]:.2f}] n={f.decided}"
            if f.comparable
            else f"not comparable ({f.acceptance:.2f}, n={f.decided})"
        )
    else:
        accept = mid = "accept — (none decided yet)" if f.comparable else "accept not comparable (none finished)"
        short = "accept — (none decided)" if f.comparable else "not comparable (none finished)"
    qap, tax, first = fig.tokens(f.qap), fig.ratio(f.retry_tax), fig.ratio(f.first_try_share)
    qap_s = tokens_short(f.qap)
    # the report's figures: None (shown —) for QAP, retry tax and first try once not comparable
    return [
        (f"{accept} · QAP {qap} tok/patch", f"retry tax {tax} · first try {first} · censored: {f.censoring}"),
        (mid, f"QAP {qap_s} · retry tax {tax} · first try {first}"),
        (mid, f"QAP {qap_s} · retry {tax} · 1st try {first}"),
        (short, f"QAP {qap_s} · retry {tax} · 1st try {first}"),
        (short, f"QAP {qap_s} · tax {tax} · 1st {first}"),
    ]


class ArmPanel(Vertical):
    """One arm: quota meter, burn rate, projection, live metrics, activity, streamed text."""

    def __init__(self, arm: ArmConfig, danger_share: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.arm_name = arm.name
        self.border_title = f"{arm.name} · {arm_label(arm)} ({arm.kind}, {arm.protocol})"
        self.meter = QuotaMeter(danger_share, arm.cap_tokens, classes="meter")
        self.provider = Fit("", classes="provider")  # shown once the provider says something
        self.provider.display = False
        self.burn = BurnLine(classes="burn")
        self.projection = Fit(
            "projection after the first finished task", "projection after 1st task", classes="projection"
        )
        self.metrics = Fit(("accept — (none decided yet)", ""), classes="metrics")
        self.activity = Static("", classes="activity")
        self.stream = StreamTail(classes="stream")

    def compose(self) -> ComposeResult:
        yield from (self.meter, self.provider, self.burn, self.projection, self.metrics, self.activity, self.stream)

    def show_quota(self, arm: ArmState, word: str | None = None) -> None:
        """The meters, and the arm's state in the border (`word`: as RunState.arm_word says it)."""
        self.meter.show(arm.used, arm.reserved, arm.cap)
        provider = provider_wordings(arm)
        if provider:
            self.provider.show(*provider)
            self.provider.set_class(bool(arm.provider.quota), "-spent")
        self.provider.display = bool(provider)
        word = word or arm.state
        self.border_subtitle = PANEL_WORDS.get(word, word)
        for state in ("stopping", "censored", "stopped", "aborted", "finished", "paused", "aborting"):
            self.set_class(word == state, f"-{state}")

    def show_activity(self, arm: ArmState, word: str | None = None) -> None:
        act, word = arm.activity, word or arm.state
        if word == "preflight…":
            line = "preflight: checking the endpoint…"
        elif act.task_id is None:
            line = IDLE_WORDS.get(word, word)
            if act.last_tool:
                line += f" · last tool {act.last_tool}"
        else:
            doing = "grading" if act.phase == "grading" else f"turn {act.turn}"
            line = f"▶ {act.task_id} · attempt {act.attempt} · {doing} · {act.last_tool or 'no tool yet'}"
            if word in ("paused", "aborting"):  # what is in flight finishes; nothing new starts
                line = f"{PANEL_WORDS[word]} · {line.removeprefix('▶ ')}"
        self.activity.update(Text(line, no_wrap=True, overflow="ellipsis"), layout=False)
        self.stream.show(act.text)

    def show_figures(self, f: fig.ArmFigures) -> None:
        self.burn.show(f.burn_per_min, f.spark)
        self.projection.show(*f.projection.texts)
        self.projection.set_class(f.projection.censored and not f.projection.tentative, "-censored")
        self.projection.set_class(f.projection.tentative, "-tentative")
        self.metrics.show(*metrics_wordings(f))


IDLE_WORDS = {
    "waiting": "waiting for the run to start",
    "running": "between tasks",
    "paused": "⏸ paused: no attempt starts until p",
    "aborting": "■ aborting: no attempt starts",
}
PANEL_WORDS = {"paused": "⏸ paused", "aborting": "■ aborting", "preflight…": "… preflight…"}
STATE_WORDS = {
    "running": "▶ running",
    "preflight": "… preflight…",
    "paused": "⏸ PAUSED",
    "aborting": "■ aborting…",
    "starting": "… starting",
    "finished": "✓ finished",
    "aborted": "■ aborted",
    "crashed": "✗ crashed",
}


def header_wordings(state: RunState, figures: fig.Figures | None) -> list[str]:
    """Longest first. Every wording keeps the state, elapsed, ETA, done and a missing sandbox;
    the run id and manifest go first when the terminal is narrow."""
    status = STATE_WORDS.get(state.engine_state, state.engine_state)
    warnings = [w for w in (state.forced_warning, state.sandbox_warning) if w]
    sandbox = f"⚠ {' · '.join(warnings)}" if warnings else ""
    elapsed = clock(figures.elapsed_s) if figures else "—"
    eta = "—" if not figures or figures.eta_s is None else "~" + clock(figures.eta_s)
    done, done_short, done_tiny = done_words(figures, state.live)
    timing = [f"elapsed {elapsed}", *([f"ETA {eta}"] if state.live else []), done]
    timing_short = [elapsed, *([f"ETA {eta}"] if state.live else []), done_short]
    timing_tiny = [*timing_short[:-1], done_tiny]
    over = [] if state.live else ["b browse", "q quit + report"]
    run = state.run_id or "starting…"
    manifest = state.manifest[:12] or "—"

    def join(*parts: str) -> str:
        return " · ".join(p for p in parts if p)

    return [
        join(f"quotabench live · run {run[:12]} · manifest {manifest}", sandbox, status, *timing, *over),
        join(f"quotabench live · run {run[:12]}", sandbox, status, *timing, *over),
        join(status, *timing, sandbox, *over, f"run {run[:10]}"),
        join(status, *timing, sandbox, *over),
        join(status, *timing_short, sandbox, *over),
        join(status, *timing_short, sandbox),
        join(status, *timing_tiny, sandbox),
        join(status, *timing_tiny, sandbox.replace("no full sandbox", "no sandbox")),
    ]


def done_words(figures: fig.Figures | None, live: bool) -> tuple[str, str, str]:
    """How many task x arm cells are decided, and how many never will be, longest first:
    "5/24 done, 2 censored" while live, "18 done, 6 censored" once the run is over."""
    if not figures or not figures.total_units:
        return "— done", "—", "—"
    done, total, censored = figures.done_units, figures.total_units, figures.censored_units
    counted = f"{done}/{total}" if live or not censored else f"{done}"
    if not censored:
        return f"{counted} done", counted, counted
    return f"{counted} done, {censored} censored", f"{counted}, {censored} censored", f"{counted}, {censored} cens."


class RunHeader(Fit):
    """The engine's state, elapsed time, ETA and progress; the run id and manifest when they fit."""

    def show_run(self, state: RunState, figures: fig.Figures | None) -> None:
        self.show(*header_wordings(state, figures))
        for name in ("paused", "aborting", "finished", "aborted", "crashed"):
            self.set_class(state.engine_state == name, f"-{name}")


class Legend(Widget):
    """What the grid's symbols mean, in the grid's colours."""

    COMPONENT_CLASSES = STATUS_CLASSES
    controls: reactive[bool] = reactive(False)  # the run has impossible controls: their looks too

    def render(self) -> Text:
        text = Text(no_wrap=False)
        for status, look in (CELL_LOOKS | (CONTROL_LOOKS if self.controls else {})).items():
            text.append(f" {look.glyph} ", self.get_component_rich_style(f"status--{status}", partial=True))
            text.append(f"{look.label}  ")
        text.append(f" {GRAMMAR_GAP.glyph} ", GRAMMAR_GAP.style)  # a note beside a class, not a class
        text.append(f"{GRAMMAR_GAP.label}  ")
        return text
