"""Start one process, wait for it without polling, and read what it prints with a cap.

The wait is a `poll()` on a pidfd and the output pipe together, so the parent wakes when
the process exits or writes, not on a sleep schedule; the wall-clock limit is the poll's
timeout. Output beyond the cap is dropped as it arrives (head and tail kept), so a command
printing gigabytes costs neither disk nor memory.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

OUTPUT_CAP_BYTES = 64 * 1024
CHANNEL_CAP_BYTES = 16 * 1024 * 1024  # the harness's verdict records: a line per test phase
_CHUNK = 65536
DRAIN_AFTER_EXIT_S = 2.0  # a straggler still holding the pipe after the exit: give up reading


@dataclass(frozen=True)
class Finished:
    exit_status: int | None  # negative: killed by that signal
    output: str
    duration_ms: int
    timed_out: bool
    start_error: str | None = None
    channel: bytes = b""  # what arrived on `channel_fd` (cut at CHANNEL_CAP_BYTES)


class _CappedBuffer:
    def __init__(self, cap: int):
        self.head_cap, self.tail_cap = cap // 4, cap - cap // 4
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_len = 0
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail.append(data)
            self.tail_len += len(data)
            while self.tail_len - len(self.tail[0]) >= self.tail_cap:
                self.tail_len -= len(self.tail.popleft())

    def text(self) -> str:
        tail = b"".join(self.tail)
        kept = len(self.head) + len(tail)
        if self.total > kept or len(tail) > self.tail_cap:
            tail = tail[-self.tail_cap :]
            cut = self.total - len(self.head) - len(tail)
            return (
                self.head.decode("utf-8", "replace")
                + f"\n[... {cut} bytes cut ...]\n"
                + tail.decode("utf-8", "replace")
            )
        return (bytes(self.head) + tail).decode("utf-8", "replace")


def run_process(
    argv: list[str],
    *,
    env: dict[str, str],
    timeout_s: float,
    cwd: str | None = None,
    cap: int = OUTPUT_CAP_BYTES,
    kill: Callable[[int], None] | None = None,
    after_exit: Callable[[int], None] | None = None,
    pass_fds: tuple[int, ...] = (),
    channel_fd: int | None = None,
) -> Finished:
    """Run argv in a new session with stdout+stderr on a pipe; kill it at `timeout_s`.

    `kill(pid)` replaces the default SIGKILL of the process group on timeout; `after_exit(pid)`
    runs once the process has exited (the fallback sandbox reaps stray children there).
    `pass_fds` are inherited by the process and closed here once it has started.
    `channel_fd`, the read end of a pipe whose write end is in `pass_fds`, is drained beside
    the output (so a writer never blocks on a full pipe) into `Finished.channel`.
    """
    read_fd, write_fd = os.pipe()
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            env=env,
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
            pass_fds=pass_fds,
        )
    except OSError as exc:
        for fd in (read_fd, write_fd, *pass_fds):
            os.close(fd)
        return Finished(None, "", 0, False, start_error=f"could not start {argv[0]}: {exc}")
    for fd in (write_fd, *pass_fds):
        os.close(fd)
    buffer = _CappedBuffer(cap)
    channel = bytearray()
    pidfd = os.pidfd_open(proc.pid)
    timed_out = False
    try:
        poller = select.poll()
        poller.register(read_fd, select.POLLIN)
        poller.register(pidfd, select.POLLIN)
        if channel_fd is not None:
            poller.register(channel_fd, select.POLLIN)
        deadline = started + timeout_s
        exited_at: float | None = None
        pipe_open = True
        channel_open = channel_fd is not None
        while pipe_open or channel_open or exited_at is None:
            now = time.monotonic()
            if exited_at is None and now >= deadline and not timed_out:
                timed_out = True
                (kill or _kill_group)(proc.pid)
            if exited_at is not None:
                if now - exited_at > DRAIN_AFTER_EXIT_S:
                    break
                wait_s = exited_at + DRAIN_AFTER_EXIT_S - now
            else:
                wait_s = DRAIN_AFTER_EXIT_S if timed_out else deadline - now
            for fd, _events in poller.poll(max(0.0, wait_s) * 1000):
                if fd == pidfd:
                    exited_at = time.monotonic()
                    poller.unregister(pidfd)
                    if after_exit is not None:
                        after_exit(proc.pid)
                elif fd == read_fd:
                    data = os.read(read_fd, _CHUNK)
                    if data:
                        buffer.add(data)
                    else:
                        pipe_open = False
                        poller.unregister(read_fd)
                elif fd == channel_fd:
                    data = os.read(channel_fd, _CHUNK)
                    if data:
                        channel += data[: max(0, CHANNEL_CAP_BYTES - len(channel))]
                    else:
                        channel_open = False
                        poller.unregister(channel_fd)
        proc.wait()
        duration_ms = int((time.monotonic() - started) * 1000)
    finally:
        os.close(read_fd)
        os.close(pidfd)
        if proc.returncode is None:
            _kill_group(proc.pid)
            proc.wait()
    return Finished(proc.returncode, buffer.text(), duration_ms, timed_out, channel=bytes(channel))


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def uid_process_count(uid: int) -> int:
    """How many processes `uid` owns now (RLIMIT_NPROC counts them all, not only ours)."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += 1
            except OSError:
                pass
    return count
