"""Exit codes are defined once (agent.ExitCode): the top-level --help lists each with its meaning,
and the errors that carry one use it."""

from __future__ import annotations

import re

from agent import ExitCode, QuotabenchError
from agent.ledger.store import LedgerError
from tuiapp.cli import build_parser
from tuiapp.cli.exits import MEANINGS
from tuiapp.live.run import LiveViewCrashed


def test_the_help_lists_every_exit_code_with_its_meaning():
    epilog = build_parser().format_help().split("exit codes: ", 1)[1]
    listed = " ".join(epilog.split()).split(". `quotabench COMMAND --help`")[0]
    codes = [int(c) for c in re.findall(r"(?:^|· )(\d+) ", listed)]
    assert codes == [code.value for code in ExitCode] == [0, 1, 2, 130]
    for code in ExitCode:
        assert f"{code.value} {MEANINGS[code]}" in listed
    assert set(MEANINGS) == set(ExitCode)


def test_the_help_words_them_as_before():
    text = build_parser().format_help()
    assert text.rstrip().endswith(
        "exit codes: 0 done · 1 a run crashed, or the ledger cannot be read or written (one line; a\n"
        "crash also names a log file with the traceback) · 2 bad input (config, task folder, arguments)\n"
        "· 130 a run aborted or stopped (Ctrl-C, q, SIGTERM). `quotabench COMMAND --help` for each."
    )


def test_errors_carry_an_exit_code_of_the_one_list():
    assert QuotabenchError.exit_code is ExitCode.BAD_INPUT
    assert LedgerError.exit_code is ExitCode.FAILED and LiveViewCrashed.exit_code is ExitCode.FAILED
