"""The SQLite ledger: one file, many runs. Schema as sqlite-utils Migrations (schema_base.py,
schema.py); typed writes (ops.py) built by the row builders (rows.py: runs, arms, submissions;
attempt_rows.py: attempts, calls, tool calls, grades), applied by `Ledger` (store.py) on one
writer thread (writer.py); what resume repairs and reads (recovery.py). Documented for humans
in docs/ledger.md.
"""

from agent.ledger.store import Ledger, new_id, utc_now

__all__ = ["Ledger", "new_id", "utc_now"]
