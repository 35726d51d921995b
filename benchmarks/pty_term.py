"""A real terminal for the benchmarks: a child process on a pseudo-terminal of a given size,
its output read as it is written, keys written as a user's terminal would send them.

What a user sees is what the program has written to its terminal, so every figure the
benchmarks report stops the clock when the awaited text has arrived on the pty, not when a
widget changed inside the process. A reader thread drains the pty all the time (a full pty
buffer would stall the program being measured) and remembers when each chunk arrived.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Sequence

_ESCAPES = re.compile(
    rb"\x1b\[[0-9;?<>=$ ]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78DEHMNOPZc]"
)


def plain(data: bytes) -> str:
    """The text of terminal output with the escape sequences taken out."""
    return _ESCAPES.sub(b"", data).decode("utf-8", "replace")


class Terminal:
    """`argv` running on a pty of `cols` x `rows`; `wait_for` finds text in what it wrote."""

    def __init__(
        self, argv: Sequence[str], cols: int = 80, rows: int = 24, env: dict | None = None, cwd: str | None = None
    ):
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            list(argv),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env={**os.environ, "TERM": "xterm-256color", "COLUMNS": str(cols), "LINES": str(rows), **(env or {})},
            start_new_session=True,
        )
        os.close(slave)
        self._chunks: list[tuple[float, bytes]] = []  # (arrival time, bytes)
        self._lock = threading.Lock()
        self._closed = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while not self._closed:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            now = time.perf_counter()
            with self._lock:
                self._chunks.append((now, data))

    @property
    def mark(self) -> int:
        """A position in the output: `wait_for(..., since=mark)` looks only at what came after it."""
        with self._lock:
            return len(self._chunks)

    def wait_for(self, text: str, since: int = 0, timeout: float = 30.0) -> float:
        """The arrival time (perf_counter) of the chunk that completed `text` after `since`."""
        deadline = time.perf_counter() + timeout
        seen = since
        tail = b""
        while True:
            with self._lock:
                chunks = self._chunks[seen:]
            for at, data in chunks:
                seen += 1
                tail = (tail + data)[-(len(data) + 4096) :]
                if text in plain(tail):  # on screen: not in a title or other escape sequence
                    return at
            if time.perf_counter() > deadline:
                raise TimeoutError(
                    f"{text!r} did not appear within {timeout:.0f} s; the terminal shows:\n{self.screen_text()[-3000:]}"
                )
            if self.proc.poll() is not None and seen == self.mark:
                raise RuntimeError(
                    f"the program exited ({self.proc.returncode}) before {text!r} appeared:\n"
                    f"{self.screen_text()[-3000:]}"
                )
            time.sleep(0.001)

    def send(self, keys: str | bytes) -> float:
        """Write keys to the terminal; returns when they were written."""
        os.write(self.master, keys.encode() if isinstance(keys, str) else keys)
        return time.perf_counter()

    def screen_text(self) -> str:
        with self._lock:
            return plain(b"".join(d for _, d in self._chunks))

    def close(self, timeout: float = 10.0) -> int | None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._closed = True
        self._reader.join(1)
        os.close(self.master)
        return self.proc.returncode

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))] if values else float("nan")
