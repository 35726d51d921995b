"""Parser parts several commands share: a subcommand with its description and examples, the
--db / --config ledger options, the preflight switches and a positive count."""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

from tuiapp.cli.ledgers import DEFAULT_DB

if TYPE_CHECKING:
    # what add_subparsers() returns; argparse documents it but names its type only privately
    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]
Command = Callable[[argparse.Namespace], int]


def add_command(
    sub: Subparsers, name: str, help: str, description: str, examples: str, func: Command
) -> argparse.ArgumentParser:
    """The subcommand `name`: its one-line help, a description wrapped to 78 columns and examples."""
    p = sub.add_parser(
        name,
        help=help,
        description=textwrap.fill(description, 78),
        epilog="examples:\n" + examples,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(func=func)
    return p


def db_option(p: argparse.ArgumentParser, reads: bool = True) -> None:
    """--db (and, for a command that reads a ledger, --config naming the run config that writes it)."""
    if reads:
        p.add_argument(
            "--db",
            metavar="FILE",
            help="the ledger to read, e.g. --db quotabench-demo.sqlite (default: "
            f"the ledger of the last run started in this folder, else ./{DEFAULT_DB})",
        )
        p.add_argument(
            "--config",
            dest="config_file",
            metavar="FILE",
            help="read the ledger this run config writes (its run.db), e.g. --config examples/openai-pair.toml",
        )
        p.set_defaults(reads_ledger=True)
    else:
        p.add_argument(
            "--db",
            metavar="FILE",
            help=f"the ledger to write, e.g. --db runs.sqlite (default: run.db of "
            f"the config, else ./{DEFAULT_DB}); a bare `report` or `browse` here opens it afterwards",
        )


def preflight_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-preflight",
        action="store_true",
        help='skip the endpoint checks before the run (also: [run] preflight = "off")',
    )
    p.add_argument(
        "--force",
        action="store_true",
        help='run even when preflight finds a difference that invalidates the run (also: [run] preflight = "force")',
    )


def positive(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value
