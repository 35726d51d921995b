"""The `quotabench` command line: one module per group of commands, each with its parsers.

program.py    the top-level parser (description, examples, exit codes) and `main`
running.py    run, preflight, resume, demo: commands that run something
reading.py    report, export, browse: commands that only read a ledger
suites.py     validate, import: commands over task suites (mutants.py: validate --mutants)
drive.py      a run driven headless (the line printer, Ctrl-C and SIGTERM), or whether the live view can run
outcome.py    what a run leaves on the terminal: its report, the next commands, its exit code
exits.py      what each exit code means, and any failure as one line and its exit code
ledgers.py    which ledger a command opens, and what is wrong with a ledger path
options.py    parser parts several commands share
demo.py       the demo's run: its config, once the [local] extra is installed

Parsing loads no engine, scorer or UI: each command imports what it needs when it runs.
"""

from tuiapp.cli.program import build_parser, main

__all__ = ["build_parser", "main"]
