"""With stderr redirected to a file and stdout on a terminal, a full-screen view draws on the
terminal, not into the file (`quotabench run live.toml 2>err.log`)."""

import os
import pty
import subprocess
import sys
import time

APP = """
import sys
from textual.app import App
from textual.widgets import Static
from tuiapp.terminal import frames_on_the_terminal

class Once(App):
    def compose(self):
        yield Static("drawn-here")
    def on_mount(self):
        self.set_timer(0.3, self.exit)

with frames_on_the_terminal():
    Once().run()
print("said-on-stderr", file=sys.stderr)
"""


def _run(tmp_path, wrap: bool) -> tuple[bytes, str]:
    code = APP if wrap else APP.replace("with frames_on_the_terminal():\n    Once().run()", "Once().run()")
    leader, follower = pty.openpty()
    err = tmp_path / f"err-{wrap}.log"
    with err.open("w") as stderr:
        done = subprocess.Popen(
            [sys.executable, "-c", code], stdin=follower, stdout=follower, stderr=stderr, cwd=os.getcwd()
        )
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 60
    while done.poll() is None and time.monotonic() < deadline:
        try:
            seen += os.read(leader, 65536)
        except OSError:
            break
    done.wait(timeout=10)
    os.close(leader)
    return seen, err.read_text()


def test_the_view_draws_on_the_terminal_and_stderr_keeps_only_what_is_said(tmp_path):
    screen, log = _run(tmp_path, wrap=True)
    assert b"drawn-here" in screen and b"\x1b[" in screen
    assert log == "said-on-stderr\n"


def test_without_it_textual_draws_into_the_redirected_file(tmp_path):
    # what the wrapper is for: Textual's frames follow the process's original stderr
    screen, log = _run(tmp_path, wrap=False)
    assert "drawn-here" in log and "\x1b[" in log
