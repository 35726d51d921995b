"""The SQLite ledger: one file, many runs. Schema as sqlite-utils Migrations (schema.py),
writes and reads through `Ledger` (store.py). Documented for humans in docs/ledger.md.
"""

from agent.ledger.store import Ledger, new_id, utc_now

__all__ = ["Ledger", "new_id", "utc_now"]
