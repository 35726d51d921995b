"""A test hook: SIGKILL this process at a named point, so tests can kill inside exact windows.

`QUOTABENCH_KILL_AT=<point>[:<n>]` kills the process the n-th time (default: the first) it
passes `<point>`; `QUOTABENCH_FAIL_AT=<point>` raises an unexpected RuntimeError there instead
(to test how a crash is reported). Unset (always, outside those tests), `kill_point` is one
string compare. Points: run_row (the runs and tasks rows are in, no arms rows yet), arms_open
(the arms rows are in, no attempt started), call_row (a placeholder call row is in, its request
not sent), attempt_ended (the loop's end is recorded, the grade is not), graded (the grade and
the attempt's class were committed together).
"""

from __future__ import annotations

import os
import signal

_POINT, _, _NTH = os.environ.get("QUOTABENCH_KILL_AT", "").partition(":")
_FAIL = os.environ.get("QUOTABENCH_FAIL_AT", "")
_passed = [0]


def kill_point(name: str) -> None:
    if _FAIL and name == _FAIL:
        raise RuntimeError(f"test hook: QUOTABENCH_FAIL_AT={_FAIL}")
    if _POINT and name == _POINT:
        _passed[0] += 1
        if _passed[0] >= int(_NTH or 1):
            os.kill(os.getpid(), signal.SIGKILL)
