"""Where the full-screen views draw: Textual writes its frames to the process's original stderr,
so `quotabench run live.toml 2>err.log` would draw the live view into the log. With stderr
redirected and stdout still on the terminal, the frames go to stdout for as long as the view
runs; what is written to stderr still reaches the file."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator


def _tty(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def frames_on_the_terminal() -> Iterator[None]:
    """Point Textual's output at stdout while stderr is not a terminal but stdout is."""
    original = sys.__stderr__
    swap = not _tty(original) and _tty(sys.__stdout__)
    if swap:
        setattr(sys, "__stderr__", sys.__stdout__)  # noqa: B010 (typeshed calls it Final; Textual reads it)
    try:
        yield
    finally:
        if swap:
            setattr(sys, "__stderr__", original)  # noqa: B010
