"""Ledger schema, one additive migration per change (applied whenever the database opens).

Conventions (after Simon Willison's `llm`): text ULID ids, `*_utc` ISO timestamps, `*_json`
JSON text, integer token counts and `duration_ms`, explicit foreign keys.
"""

from __future__ import annotations

from sqlite_utils import Database

from agent.ledger.schema_base import migrations


# m001-m007 (the first schema) are registered first, by schema_base
@migrations()
def m008_grades_sandbox_and_integrity(db: Database) -> None:
    # Which sandbox graded, the reference's test count a pass had to reach, why an exit 0 was
    # not a pass, and the runner files put back to the fixture's version (issue 11).
    db.table("grades").add_column("sandbox", str)
    db.table("grades").add_column("expected_tests", int)
    db.table("grades").add_column("integrity", str)
    db.table("grades").add_column("restored_json", str)


@migrations()
def m009_runs_sandbox(db: Database) -> None:
    # The sandbox a run graded in (bwrap, or fallback and why), shown by live view, report, browse.
    db.table("runs").add_column("isolation_sandbox", str)
    db.table("runs").add_column("isolation_json", str)


@migrations()
def m010_create_reference_counts(db: Database) -> None:
    # Passed tests of each task version's reference solution: the count a hidden pass must
    # reach (pass integrity). Kept across runs of one ledger; key = task files + hidden command.
    db.table("reference_counts").create(
        {"task_key": str, "task_id": str, "passed": int, "created_utc": str}, pk="task_key"
    )


@migrations()
def m011_attempt_end_detail(db: Database) -> None:
    # Why an attempt ended, in one line (the endpoint's last error, the cap it hit, ...), and for
    # `harness_error` the traceback of the unexpected exception, so the bug can be found later.
    db.table("attempts").add_column("end_detail", str)
    db.table("attempts").add_column("error_traceback", str)


@migrations()
def m012_preflight(db: Database) -> None:
    # Issue 17: before quota is spent, each arm's endpoint is compared with its config (model,
    # context, stream usage, tool calls, parallel slots, GGUF hash and flags). One row per arm
    # per preflight; run_id is empty for `quotabench preflight`. Its HTTP tries are calls rows of
    # kind 'preflight' (attempt_id empty): never charged to the arm's cap, never in attempts'
    # tokens. Every older call was an attempt's.
    db.table("preflights").create(
        {
            "id": str,
            "run_id": str,
            "arm": str,
            "created_utc": str,
            "endpoint_url": str,
            "model": str,
            "verdict": str,
            "forced": int,
            "checks_json": str,
            "prompt_tokens": int,
            "completion_tokens": int,
            "calls": int,
            "duration_ms": int,
        },
        pk="id",
        foreign_keys=[("run_id", "runs", "id")],
    )
    db.table("preflights").create_index(["run_id"])
    db.table("calls").add_column("kind", str, not_null_default="attempt")
    db.table("calls").add_column("preflight_id", str)
    db.table("calls").add_column("probe", str)


@migrations()
def m013_replicates(db: Database) -> None:
    # Issue 17: `run --replicates N` runs one manifest N times; each run records its number and
    # the set it belongs to. Each arm records the server session it talked to (a new id every
    # time quotabench starts a server; empty when the endpoint was already running), and each
    # call the hash of what was asked and of what came back: identical requests within one
    # session vs across restarts are how the report tells within-session determinism apart.
    db.table("runs").add_column("replicate", int)
    db.table("runs").add_column("replicates", int)
    db.table("runs").add_column("replicate_set", str)
    db.table("arms").add_column("server_session_id", str)
    db.table("calls").add_column("server_session_id", str)
    db.table("calls").add_column("request_sha256", str)
    db.table("calls").add_column("response_sha256", str)


@migrations()
def m014_grades_placement(db: Database) -> None:
    # Where each graded command ran (issue 18: the local machine or a Ray node), how long it
    # waited for a worker before running, and how often a lost worker made it run again.
    db.table("grades").add_column("executor", str)
    db.table("grades").add_column("node", str)
    db.table("grades").add_column("queue_ms", int)
    db.table("grades").add_column("retries", int)


@migrations()
def m015_stages(db: Database) -> None:
    # Issue 16: a strategy arm runs several stages per task (candidates, an initial attempt, a
    # critique, a revision, a judge). Each stage is an attempts row and its calls carry the stage
    # too, so stage tokens sum to the arm's. `candidate` numbers a parallel candidate from 1;
    # `submitted` is 1 for the stage submitted as the arm's answer, 0 for the others, NULL for a
    # run without a strategy (and while the protocol has not submitted yet). Older rows: 'attempt'.
    db.table("attempts").add_column("stage", str, not_null_default="attempt")
    db.table("attempts").add_column("candidate", int)
    db.table("attempts").add_column("submitted", int)
    db.table("calls").add_column("stage", str, not_null_default="attempt")


@migrations()
def m016_submissions(db: Database) -> None:
    # Issue 16: one row per (run, arm, task) of a strategy arm, written when the protocol submits:
    # which stage became the answer and why (route: visible, judge, critique_pass, revision,
    # fallback, none), how the judge's reply was parsed, whether fallback decided, and each
    # candidate's visible-test score. Coverage and conversion are read from it and the grades.
    db.table("submissions").create(
        {
            "id": str,
            "run_id": str,
            "arm": str,
            "task_id": str,
            "created_utc": str,
            "strategy": str,
            "select_rule": str,
            "candidates": int,
            "submitted_attempt_id": str,
            "route": str,
            "reason": str,
            "parse_route": str,
            "fallback": int,
            "scores_json": str,
        },
        pk="id",
        foreign_keys=[("run_id", "runs", "id"), ("submitted_attempt_id", "attempts", "id")],
    )
    db.table("submissions").create_index(["run_id", "arm", "task_id"], unique=True)


@migrations()
def m017_arms_strategy(db: Database) -> None:
    # Issue 16: the arm's strategy, selection rule and fallback as configured (NULL: no strategy).
    db.table("arms").add_column("strategy", str)
    db.table("arms").add_column("select_rule", str)
    db.table("arms").add_column("fallback", int)


@migrations()
def m018_tampering(db: Database) -> None:
    # A grade's tamper evidence (rule, file, line, snippet per finding: the verdict `tampering`)
    # and how its command ran (pytest, node, tsx, cargo through the harness, or a script). Each
    # task version's reference run keeps every test id with its place and outcome, which a
    # hidden pass must match. A task marked `control = "impossible"` cannot be passed honestly.
    db.table("grades").add_column("tampering_json", str)
    db.table("grades").add_column("runner", str)
    db.table("reference_counts").add_column("tests_json", str)
    db.table("tasks").add_column("control", str)


@migrations()
def m020_provider_usage(db: Database) -> None:
    # Hosted providers bill by more than prompt and completion tokens, and enforce their own
    # quotas. Each try keeps what the provider reported besides them (cached prompt tokens,
    # cache-write tokens, reasoning tokens: all inside prompt_tokens / completion_tokens as sent;
    # NULL = not reported) and the cost it charged with the usage field it came from; the rate
    # limits its headers announced (tokens and requests: limit, remaining, ms to reset); and how
    # long the try waited for that limit before it was sent (kept out of latency_ms). Attempts
    # and arms sum them. An arm censored by the provider's quota (HTTP 402, insufficient_quota)
    # says so in censored_by (`cap` or `provider_quota`): only that kind resumes after a top-up.
    calls = db.table("calls")
    for column, kind in (
        ("cached_tokens", int),
        ("cache_write_tokens", int),
        ("reasoning_tokens", int),
        ("cost_usd", float),
        ("cost_source", str),
        ("ratelimit_limit_tokens", int),
        ("ratelimit_remaining_tokens", int),
        ("ratelimit_reset_tokens_ms", int),
        ("ratelimit_limit_requests", int),
        ("ratelimit_remaining_requests", int),
        ("ratelimit_reset_requests_ms", int),
        ("paced_ms", int),
    ):
        calls.add_column(column, kind)
    for column, kind in (
        ("cached_tokens", int),
        ("cache_write_tokens", int),
        ("reasoning_tokens", int),
        ("cost_usd", float),
        ("paced_ms", int),
    ):
        db.table("attempts").add_column(column, kind)
    db.table("arms").add_column("censored_by", str)
    db.table("arms").add_column("paced_ms", int)


@migrations()
def m021_run_process_and_broken_tasks(db: Database) -> None:
    # A run killed with SIGKILL stays `running` in its row: the process that drives it (host, pid
    # and the pid's start time, agent/ledger/liveness.py) tells a reader whether it still does.
    # Task folders a run left out because they would not load are kept with the run, so its
    # report can name them (a run's n is the tasks that loaded). Reads in the run's task order
    # (export, browse) walk an index on it instead of sorting every row in memory.
    db.table("runs").add_column("process_json", str)
    db.table("runs").add_column("broken_tasks_json", str)
    db.table("tasks").create_index(["run_id", "position"])


@migrations()
def m022_lost_attempts_keep_their_number(db: Database) -> None:
    # An attempt the run cut off (killed, aborted, stopped, or censored: failure_class `aborted`
    # or `censored`) was not the model's attempt: its retry runs under the same attempt_no, so
    # attempt_no never exceeds max_attempts. The number stays unique among the other attempts:
    # the unique index now leaves the cut-off rows out (no row is changed or dropped).
    db.execute("drop index if exists idx_attempts_run_id_arm_task_id_attempt_no")
    db.execute(
        "create unique index if not exists idx_attempts_number on attempts (run_id, arm, task_id, attempt_no) "
        "where failure_class is null or failure_class not in ('aborted', 'censored')"
    )


@migrations()
def m023_mutation_scores(db: Database) -> None:
    # How strong the hidden tests of a run's tasks were (seed 001: weak tests flatter weak
    # models): each task's mutation results as `quotabench validate --mutants` cached them for
    # the exact task version the run used (cache_key), copied in when the run starts. Outcomes
    # follow verifiers/mutants/outcome.py; score = killed / (killed + survived), NULL when no
    # mutant counted. A task with no cached score for its version has no row.
    db.table("mutation_scores").create(
        {
            "run_id": str,
            "task_id": str,
            "cache_key": str,
            "language": str,
            "generated": int,
            "killed": int,
            "survived": int,
            "equivalent": int,
            "unviable": int,
            "flagged": int,
            "errors": int,
            "score": float,
            "weak_below": float,
            "recorded_utc": str,
        },
        pk=("run_id", "task_id"),
        foreign_keys=[("run_id", "runs", "id")],
    )


@migrations()
def m024_grades_canaries(db: Database) -> None:
    # A hidden pass rests on canaries (tests the reference fails, planted among the real ones at
    # each grade): the grade's plan (its seed and each canary's key, name, claim and what it
    # did), what the pass rests on (canaries, the record, or the exit status only) and the
    # suspects: what the code scan and the harness saw that decides nothing by itself.
    db.table("grades").add_column("canaries_json", str)
    db.table("grades").add_column("oracle", str)
    db.table("grades").add_column("suspects_json", str)


@migrations()
def m025_grades_grammar_gaps(db: Database) -> None:
    # Parse errors of tree-sitter in files the language's own toolchain built and ran
    # (verifiers/grammar_gaps.py): kept as findings, apart from mechanics_json, because they
    # are a note on the attempt and never make it edit-mechanics.
    db.table("grades").add_column("grammar_gaps_json", str)


@migrations()
def m026_arms_cap_raises(db: Database) -> None:
    # Each raise of an arm's cap during the run (the auto-pause window's "raise cap"): from, to,
    # when, and the tokens used by then. arms.cap_tokens is the cap in force; the first raise's
    # `from` is the configured one, so the report can say the arm did not run under its config.
    db.table("arms").add_column("cap_raises_json", str)


@migrations()
def m027_calls_pace_window(db: Database) -> None:
    # The pacer's model of the provider's limit after each try (agent/endpoints/pacing.py):
    # `steady` refill, or `fixed` once a 429 met a call it let go (the budget comes back at the
    # reset the headers state). The report's provider line names the model an arm ended with.
    db.table("calls").add_column("pace_window", str)


@migrations()
def m028_runs_go_version(db: Database) -> None:
    # go became a task language: the toolchain that built and ran the go tasks' tests, beside
    # node's and cargo's, so two runs compared are known to have graded with the same one.
    db.table("runs").add_column("go_version", str)


@migrations()
def m029_runs_java_gxx_versions(db: Database) -> None:
    # java and cpp became task languages: the JVM that ran the JUnit tests and the g++ that built
    # the Catch2 ones, held constant between runs compared like go's toolchain.
    db.table("runs").add_column("java_version", str)
    db.table("runs").add_column("gxx_version", str)


def pending(db: Database) -> bool:
    return bool(migrations.pending(db))


def apply(db: Database) -> None:
    migrations.apply(db)
