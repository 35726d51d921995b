"""Typed ledger writes: what `Ledger.batch` and the writer thread commit, one transaction per batch.

A write is a value (frozen dataclass), built by the row builders in agent/ledger/rows.py and
agent/ledger/attempt_rows.py, queued or awaited through agent/ledger/writer.py and applied by
`Ledger` (store.py). Nothing outside the ledger spells a table's columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Insert:
    """One new row of `table`."""

    table: str
    row: dict[str, Any]


@dataclass(frozen=True, slots=True)
class InsertAll:
    """Several new rows of `table` (columns: the union of the rows' keys)."""

    table: str
    rows: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Update:
    """Set `fields` on the row of `table` with this id. `must_exist`: a missing row is an
    error (False: nothing happens, as for a call row a kill may have left unwritten)."""

    table: str
    id: Any
    fields: dict[str, Any]
    must_exist: bool = True


Op = Insert | InsertAll | Update
