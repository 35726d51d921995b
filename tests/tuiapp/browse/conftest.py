"""Ledgers for the browser tests, each built once per session: a real scripted paired run with
every failure class (scripted_ledger.py) and a ledger of fixed rows (fixed_ledger.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.ledger import Ledger
from tests.support.fixed_ledger import build_fixed_ledger

from .scripted_ledger import build_scripted_ledger


@pytest.fixture(scope="session")
def scripted_run(tmp_path_factory) -> tuple[Path, str]:
    """(ledger path, run id) of the scripted paired run; about 6 s, once."""
    return build_scripted_ledger(tmp_path_factory.mktemp("scripted"))


@pytest.fixture(scope="session")
def fixed_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("fixed") / "ledger.sqlite"
    build_fixed_ledger(path).close()
    return path


@pytest.fixture
def scripted(scripted_run):
    path, run_id = scripted_run
    ledger = Ledger(path)
    yield ledger, run_id
    ledger.close()


@pytest.fixture
def fixed(fixed_path):
    ledger = Ledger(fixed_path)
    yield ledger
    ledger.close()
