"""What the report reads from the ledger, one named, set-based read each (no read per row):
the report (agent/metrics/report.py) reads through these, then computes."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from agent.classify import NOT_COUNTED
from agent.ledger.store import Ledger, Row

# Only the columns the metrics read: `a.*` (diffs included) took half the report's time at 5,000
# attempts. Read through sqlite3.Row, which finds a name by scanning: the most-read come first.
ATTEMPT_COLUMNS = (
    "task_id",
    "attempt_no",
    "failure_class",
    "accepted",
    "total_tokens",
    "arm",
    "verdict",
    "visible_passed",
    "duration_ms",
    "calls",
    "transport_retries",
    "malformed_tool_calls",
    "prompt_tokens",
    "completion_tokens",
    "ended_utc",
    "stage",
    "submitted",
)
TASK_COLUMNS = ("task_id", "files_sha256", "control", "kind")  # not the prompts: 50k tasks' prompts are tens of MB
# How a call's tokens were counted (calls.usage_source): "reported" by the endpoint, "estimated"
# by our tokenizer, "reserved" for a call lost in flight (charged at its reservation); "none",
# a failed try, counts no tokens.
USAGE_SOURCES = ("reported", "estimated", "reserved")


def run_tasks(ledger: Ledger, run_id: str) -> list[dict[str, Any]]:
    """The run's tasks in run order (TASK_COLUMNS)."""
    return ledger.query(f"select {', '.join(TASK_COLUMNS)} from tasks where run_id = ? order by position", [run_id])


def run_attempts(ledger: Ledger, run_id: str) -> list[Row]:
    """The run's attempts (ATTEMPT_COLUMNS), by arm, task and attempt number."""
    return ledger.rows(
        f"select {', '.join(ATTEMPT_COLUMNS)} from attempts where run_id = ? order by arm, task_id, attempt_no",
        [run_id],
    )


def grade_sums(ledger: Ledger, run_id: str) -> dict[str, tuple[int, int]]:
    """Per arm: how many grades, and their summed duration in ms."""
    return {
        r["arm"]: (r["n"], r["ms"])
        for r in ledger.query(
            "select a.arm, count(*) as n, sum(coalesce(g.duration_ms, 0)) as ms from grades g "
            "join attempts a on a.id = g.attempt_id where a.run_id = ? group by a.arm",
            [run_id],
        )
    }


def preflights(ledger: Ledger, run_id: str) -> list[dict[str, Any]]:
    return ledger.query("select * from preflights where run_id = ?", [run_id])


def tampering_and_controls(ledger: Ledger, run_id: str, controls: set[str]) -> list[dict[str, Any]]:
    """Attempts classed tampering and every attempt on an impossible control, with their grade's
    tampering findings: only the rows that can count, so a large clean run reads almost nothing."""
    marks = ", ".join("?" * len(controls))
    control_clause = f" or a.task_id in ({marks})" if controls else ""
    return ledger.query(
        "select a.id, a.arm, a.task_id, a.failure_class, a.accepted, a.total_tokens, g.tampering_json "
        "from attempts a left join grades g on g.attempt_id = a.id "
        f"where a.run_id = ? and (a.failure_class = 'tampering'{control_clause})",
        [run_id, *sorted(controls)],
    )


def suspects_and_oracles(ledger: Ledger, run_id: str) -> list[dict[str, Any]]:
    """Accepted attempts whose grade kept suspects (constructs the scan or the harness saw that
    decided nothing), and grades whose pass rested on the exit status only (a custom verifier
    script, no canaries): only those rows, so a clean run reads almost nothing."""
    return ledger.query(
        "select a.arm, a.task_id, a.accepted, g.suspects_json, g.oracle "
        "from attempts a join grades g on g.attempt_id = a.id where a.run_id = ? and "
        "((a.accepted = 1 and g.suspects_json is not null and g.suspects_json != '[]') or g.oracle = 'exit status only')",
        [run_id],
    )


def grammar_gaps(ledger: Ledger, run_id: str) -> list[dict[str, Any]]:
    """Grades that kept grammar gaps (parse errors the toolchain accepted), by arm: only those rows."""
    return ledger.query(
        "select a.arm, g.grammar_gaps_json from attempts a join grades g on g.attempt_id = a.id "
        "where a.run_id = ? and g.grammar_gaps_json is not null and g.grammar_gaps_json != '[]'",
        [run_id],
    )


def accepted_counts(ledger: Ledger, run_id: str) -> dict[str, int]:
    rows = ledger.query(
        "select arm, count(*) as n from attempts where run_id = ? and accepted = 1 group by arm", [run_id]
    )
    return {r["arm"]: r["n"] for r in rows}


def submissions(ledger: Ledger, run_id: str) -> list[Row]:
    return ledger.rows("select * from submissions where run_id = ?", [run_id])


def stage_tokens(ledger: Ledger, run_id: str) -> list[dict[str, Any]]:
    """Tokens per arm and strategy stage."""
    return ledger.query(
        "select arm, stage, sum(total_tokens) as tokens from attempts where run_id = ? group by arm, stage",
        [run_id],
    )


def sandbox_counts(ledger: Ledger, run_id: str) -> list[dict[str, Any]]:
    """How many of the run's grades ran in each sandbox."""
    return ledger.query(
        "select g.sandbox, count(*) as n from grades g join attempts a on a.id = g.attempt_id "
        "where a.run_id = ? group by g.sandbox",
        [run_id],
    )


def grade_placements(ledger: Ledger, run_id: str) -> dict[str, Any]:
    """Where and when the run's grades ran, in one row: their count, executors and nodes, run
    and queue times (JSON lists), how many were retried, and the first and last grade's time."""
    row = ledger.query(
        "select count(*) as n, json_group_array(coalesce(g.duration_ms, 0)) as runs, "
        "json_group_array(coalesce(g.queue_ms, 0)) as waits, "
        "json_group_array(distinct coalesce(nullif(g.executor, ''), 'local')) as executors, "
        "json_group_array(distinct g.node) filter (where g.node is not null and g.node != '') as nodes, "
        "count(nullif(coalesce(g.retries, 0), 0)) as retried, "
        "min(g.created_utc) as first_utc, max(g.created_utc) as last_utc "
        "from grades g join attempts a on a.id = g.attempt_id where a.run_id = ?",
        [run_id],
    )[0]
    return row | {k: json.loads(row[k] or "[]") for k in ("runs", "waits", "executors", "nodes")}


def server_sessions(ledger: Ledger, run_ids: list[str]) -> dict[str, set[str]]:
    """The server sessions each run's arms talked to, by run id."""
    marks = ", ".join("?" * len(run_ids))
    out: dict[str, set[str]] = defaultdict(set)
    for row in ledger.rows(
        f"select run_id, server_session_id from arms where run_id in ({marks}) "
        "and server_session_id is not null and server_session_id != ''",
        run_ids,
    ):
        out[row["run_id"]].add(row["server_session_id"])
    return dict(out)


# One row per arm and lost flag (one pass over the calls); `priced_*` sum the calls without a
# reported cost (those the table prices), `source_*` the tokens by how they were counted.
SPEND_SQL = """
select arm, attempt_id in (select id from attempts where run_id = ? and failure_class in ({lost})) as lost,
  coalesce(sum(prompt_tokens), 0) as prompt,
  coalesce(sum(completion_tokens), 0) as completion,
  coalesce(sum(cached_tokens), 0) as cached,
  coalesce(sum(cache_write_tokens), 0) as cache_write,
  coalesce(sum(reasoning_tokens), 0) as reasoning,
  coalesce(sum(case when cost_usd is null then prompt_tokens end), 0) as priced_prompt,
  coalesce(sum(case when cost_usd is null then completion_tokens end), 0) as priced_completion,
  coalesce(sum(case when cost_usd is null then cached_tokens end), 0) as priced_cached,
  coalesce(sum(case when cost_usd is null then cache_write_tokens end), 0) as priced_cache_write,
  coalesce(sum(cost_usd), 0.0) as reported_usd,
  count(cost_usd) as reported_calls,
  sum(case when cost_usd is null and coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0) > 0
      then 1 else 0 end) as priced_calls,
  count(cached_tokens) + count(cache_write_tokens) + count(reasoning_tokens) + count(cost_usd) as detailed,
  coalesce(sum(paced_ms), 0) as paced_ms,
  coalesce(sum(case when status = 'http_429' then 1 else 0 end), 0) as limited,
  coalesce(sum(case when pace_window = 'fixed' then 1 else 0 end), 0) as fixed_window,
  count(pace_window) as paced_calls,
  {sources}
from calls where run_id = ? and kind = 'attempt' group by arm, lost
""".format(
    # the calls of lost attempts (agent.classify.is_lost): billed, but not the model's (lost spend)
    lost=", ".join(f"'{c}'" for c in NOT_COUNTED),
    sources=",\n  ".join(
        f"coalesce(sum(case when usage_source = '{s}' then coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0)"
        f" end), 0) as source_{s}"
        for s in USAGE_SOURCES
    ),
)


def spend_sums(ledger: Ledger, run_id: str) -> list[dict[str, Any]]:
    """Per arm and `lost` (0/1: the calls of lost attempts), its attempt calls' token and cost sums
    as billed and their tokens per usage source (SPEND_SQL's columns)."""
    return ledger.query(SPEND_SQL, [run_id, run_id])


# A call's start as integer ms since the epoch: the ledger writes ms (store.utc_now), which is
# SQLite's own date resolution, so the conversion is exact; a call whose start or latency it
# cannot read (a damaged file) is left out.
_START_MS = "cast(round((julianday(started_utc) - 2440587.5) * 86400000.0) as integer)"
SPANS_SQL = f"""
select arm, json_group_array(start_ms) as starts, json_group_array(latency_ms) as latencies from (
  select arm, {_START_MS} as start_ms, cast(latency_ms as integer) as latency_ms from calls
  where run_id = ? and kind = 'attempt' and typeof(latency_ms) in ('integer', 'real') and started_utc is not null
) where start_ms is not null group by arm
"""


def call_spans(ledger: Ledger, run_id: str) -> dict[str, tuple[list[int], list[int]]]:
    """Per arm, its attempt calls' starts (ms since the epoch) and latencies (ms), in one list
    each: 400k calls at 100k attempts are aggregated in SQLite, never held as rows."""
    return {
        row["arm"]: (json.loads(row["starts"]), json.loads(row["latencies"]))
        for row in ledger.query(SPANS_SQL, [run_id])
    }


_REPEATS_SQL = """
select a.arm as arm, count(*) as repeated,
       sum(case when ca.response_sha256 is not null and ca.response_sha256 = cp.response_sha256 then 1 else 0 end)
           as same_reply
from attempts a
join attempts p on p.run_id = a.run_id and p.arm = a.arm and p.task_id = a.task_id
     and p.stage = a.stage and p.attempt_no = a.attempt_no - 1
join calls ca on ca.attempt_id = a.id and ca.turn = 1 and ca.retry_index = 0
join calls cp on cp.attempt_id = p.id and cp.turn = 1 and cp.retry_index = 0
where a.run_id = ? and a.attempt_no > 1 and ca.request_sha256 is not null and ca.request_sha256 = cp.request_sha256
group by a.arm
"""


def repeated_first_requests(ledger: Ledger, run_id: str) -> list[dict[str, Any]]:
    """Per arm: how many later attempts sent the previous attempt's first request byte for byte
    ("repeated"), and how many of those got its first reply back ("same_reply")."""
    return ledger.query(_REPEATS_SQL, [run_id])


def ok_call_hashes(ledger: Ledger, run_ids: list[str]) -> list[dict[str, Any]]:
    """The runs' successful attempt calls with a request hash: arm, run, server session, hashes."""
    marks = ", ".join("?" * len(run_ids))
    return ledger.query(
        f"select arm, run_id, server_session_id, request_sha256, response_sha256 from calls where run_id in ({marks}) "
        "and kind = 'attempt' and status = 'ok' and request_sha256 is not null",
        run_ids,
    )


def unanswered_arms(ledger: Ledger, run_id: str) -> list[dict[str, Any]]:
    """Arms of the run whose endpoint never answered one of the run's calls (preflight's probes
    left out), with how many tries failed and the last error: their figures measure nothing."""
    # a call the harness lost (its own error, or a kill) says nothing of the endpoint
    mine = "('lost', 'in_flight')"
    return ledger.query(
        f"select arm, sum(status not in {mine}) as tries, "
        "(select error from calls d where d.run_id = c.run_id and d.arm = c.arm and d.kind = 'attempt' "
        f" and d.status not in {mine} order by d.started_utc desc limit 1) as error "
        "from calls c where run_id = ? and kind = 'attempt' group by arm "
        f"having sum(status = 'ok') = 0 and sum(status not in {mine}) > 0 order by arm",
        [run_id],
    )
