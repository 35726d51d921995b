"""The live view's widgets. Each has a `show...` method the app's message handlers call with
plain state; none reads the engine or the ledger. Colours come from live.tcss (component
classes for the parts of a line), symbols and words carry the meaning without colour.
"""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from agent.config import ArmConfig
from tuiapp.live import figures as fig
from tuiapp.live.grid import STATUS_CLASSES
from tuiapp.live.state import CELL_LOOK, ArmState, RunState, clock



class QuotaMeter(Widget):
    """Two lines: the bar (used █, reserved in flight ▒, free ░) and the numbers.

    The widget carries -ok / -warn / -danger as the arm nears its cap; live.tcss colours
    the used part by those classes.
    """

    COMPONENT_CLASSES = {"quota-meter--used", "quota-meter--reserved", "quota-meter--free"}

    def __init__(self, danger_share: float, **kwargs) -> None:
        super().__init__(**kwargs)
        self.danger_share = danger_share
        self.used = self.reserved = self.cap = 0

    def show(self, used: int, reserved: int, cap: int) -> None:
        self.used, self.reserved, self.cap = used, reserved, cap
        share = (used + reserved) / cap if cap else 1.0
        level = "-danger" if share >= self.danger_share else "-warn" if share >= self.danger_share - 0.2 else "-ok"
        for name in ("-ok", "-warn", "-danger"):
            self.set_class(name == level, name)
        self.refresh()

    def render(self) -> Text:
        width = max(1, self.size.width)
        used_w, reserved_w, free_w = fig.bar_parts(width, self.used, self.reserved, self.cap)
        style = self.get_component_rich_style
        bar = Text(no_wrap=True, overflow="crop")
        bar.append("█" * used_w, style("quota-meter--used"))
        bar.append("▒" * reserved_w, style("quota-meter--reserved"))
        bar.append("░" * free_w, style("quota-meter--free"))
        share = (self.used + self.reserved) / self.cap if self.cap else 0.0
        numbers = (f"{fig.tokens(self.used)} used + {fig.tokens(self.reserved)} in flight"
                   f" / cap {fig.tokens(self.cap)} ({share:.0%})")
        return Text("\n").join([bar, Text(numbers, no_wrap=True, overflow="ellipsis")])


class BurnLine(Widget):
    """"burn 4,210 tok/min" and a sparkline of the last five minutes (10 s per character)."""

    def __init__(self, **kwargs) -> None:
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
        return Text(head + fig.sparkline(self.spark, room) + tail, no_wrap=True, overflow="ellipsis")


class StreamTail(Widget):
    """The last lines of the model's streamed text, newest at the bottom."""

    def __init__(self, **kwargs) -> None:
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
        shown = [("…" + line[-(width - 1):]) if len(line) > width else line for line in lines]
        return Text("\n".join(shown) or "—", no_wrap=True, overflow="crop")


class ArmPanel(Vertical):
    """One arm: quota meter, burn rate, projection, live metrics, activity, streamed text."""

    def __init__(self, arm: ArmConfig, danger_share: float, **kwargs) -> None:
        super().__init__(**kwargs)
        self.arm_name = arm.name
        self.border_title = f"{arm.name} · {arm.model or arm.kind} ({arm.kind}, {arm.protocol})"
        self.meter = QuotaMeter(danger_share, classes="meter")
        self.burn = BurnLine(classes="burn")
        self.projection = Static("projection after the first finished task", classes="projection")
        self.metrics = Static("accept — (none decided yet)", classes="metrics")
        self.activity = Static("", classes="activity")
        self.stream = StreamTail(classes="stream")

    def compose(self) -> ComposeResult:
        yield from (self.meter, self.burn, self.projection, self.metrics, self.activity, self.stream)

    def show_quota(self, arm: ArmState) -> None:
        self.meter.show(arm.used, arm.reserved, arm.cap)
        self.border_subtitle = arm.state
        for state in ("stopping", "censored", "stopped", "aborted", "finished"):
            self.set_class(arm.state == state, f"-{state}")

    def show_activity(self, arm: ArmState) -> None:
        act = arm.activity
        if act.task_id is None:
            line = {"waiting": "waiting for the run to start", "running": "between tasks"}.get(arm.state, arm.state)
            if act.last_tool:
                line += f" · last tool {act.last_tool}"
        else:
            doing = "grading" if act.phase == "grading" else f"turn {act.turn}"
            line = f"▶ {act.task_id} · attempt {act.attempt} · {doing} · {act.last_tool or 'no tool yet'}"
        self.activity.update(Text(line, no_wrap=True, overflow="ellipsis"), layout=False)
        self.stream.show(act.text)

    def show_figures(self, f: fig.ArmFigures) -> None:
        self.burn.show(f.burn_per_min, f.spark)
        self.projection.update(Text(f.projection.text, no_wrap=True, overflow="ellipsis"), layout=False)
        self.projection.set_class(f.projection.censored, "-censored")
        if f.decided:
            acceptance = f"{f.acceptance:.2f} [{f.ci[0]:.2f}, {f.ci[1]:.2f}] n={f.decided}"
            acceptance = f"accept {acceptance}" if f.comparable else f"accept not comparable ({acceptance} finished)"
        else:
            acceptance = "accept — (none decided yet)" if f.comparable else "accept not comparable (none finished)"
        # the report's figures: None (shown —) for QAP, retry tax and first try once not comparable
        lines = [f"{acceptance} · QAP {fig.tokens(f.qap)} tok/patch",
                 f"retry tax {fig.ratio(f.retry_tax)} · first try {fig.ratio(f.first_try_share)} · "
                 f"censored: {f.censoring}"]
        self.metrics.update(Text("\n".join(lines), no_wrap=True, overflow="ellipsis"), layout=False)


class RunHeader(Static):
    """Run id, manifest hash, the engine's state, elapsed time, ETA and progress."""

    def show(self, state: RunState, figures: fig.Figures | None) -> None:
        run = state.run_id[:12] or "starting…"
        manifest = state.manifest[:12] or "—"
        status = {"running": "▶ running", "paused": "⏸ PAUSED", "aborting": "■ aborting…",
                  "starting": "… starting", "finished": "✓ finished", "aborted": "■ aborted",
                  "crashed": "✗ crashed"}.get(state.engine_state, state.engine_state)
        parts = [f"quotabench live · run {run} · manifest {manifest}", status]
        if figures is not None:
            parts.append(f"elapsed {clock(figures.elapsed_s)}")
            if state.live:
                parts.append(f"ETA {'~' + clock(figures.eta_s) if figures.eta_s is not None else '—'}")
            parts.append(f"{figures.done_units}/{figures.total_units} done")
        if state.sandbox_warning:
            parts.insert(1, f"⚠ {state.sandbox_warning}")
        self.update(Text(" · ".join(parts), no_wrap=True, overflow="ellipsis"), layout=False)
        for name in ("paused", "aborting", "finished", "aborted", "crashed"):
            self.set_class(state.engine_state == name, f"-{name}")


class Legend(Widget):
    """What the grid's symbols mean, in the grid's colours."""

    COMPONENT_CLASSES = STATUS_CLASSES

    def render(self) -> Text:
        text = Text(no_wrap=False)
        for status, (symbol, _, label) in CELL_LOOK.items():
            text.append(f" {symbol} ", self.get_component_rich_style(f"status--{status}", partial=True))
            text.append(f"{label}  ")
        return text
