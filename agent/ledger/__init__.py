"""The SQLite ledger: one file, many runs. Schema as sqlite-utils Migrations (schema_base.py,
schema.py); typed writes (ops.py) built by the row builders (rows.py: runs, arms, submissions,
preflights; attempt_rows.py: attempts, calls, tool calls, grades), applied by `Ledger`
(store.py, its connection opened by connection.py) on one writer thread (writer.py); named reads for each reader: the report
(report_reads.py), the browser (browse_reads.py), the live view (live_reads.py), a strategy
task (strategy_reads.py), export (export_reads.py), resume (recovery.py, with the repair of what a kill left).
Documented for humans in docs/ledger.md.
"""

from agent.ledger.store import Ledger, new_id, utc_now

__all__ = ["Ledger", "new_id", "utc_now"]
