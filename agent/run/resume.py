"""Resume a run that was killed or aborted: recover the ledger, then finish the remaining work.

Recovery: a call row still `in_flight` was lost with the process and is charged at its
reservation; an attempt still `running` becomes `lost` (kept, not counted against
max_attempts: its retry runs under the same attempt number, and its tokens are lost spend,
charged against the cap but kept out of the model's figures); an attempt whose loop ended but whose grade never landed is graded now from
its recorded files (one that has a grade already, from a ledger written before grades and
attempt updates were one transaction, takes its class from that grade). A run killed before
its tasks or arms rows were written gets them now. Finished attempts are never re-run or
charged again. Any kill point leaves a ledger that resumes (tests/agent/run/test_kill_resume.py).
An arm censored by its provider's quota (arms.censored_by) runs again: resuming says the
account was topped up; its censored attempts never counted, so its unfinished tasks run now.
"""

from __future__ import annotations

import json
import traceback
from pathlib import Path
from typing import Any

import anyio

from agent import QuotabenchError
from agent import events as ev
from agent.classify import FailureClass, classify, counts_toward_budget
from agent.config import PROMPT_TEMPLATE_VERSION, RunConfig, load_config_text
from agent.ledger.attempt_rows import attempt_classed, attempt_update
from agent.ledger.liveness import process_identity, run_state
from agent.ledger.recovery import arm_tokens_used, attempt_outcomes, recover, ungraded_attempts
from agent.ledger.rows import run_resumed
from agent.ledger.store import Ledger, LedgerError, capped, to_json
from agent.manifest import RUNTIME_VERSIONS, manifest_sha256, observed_constants
from agent.run.attempt import NOT_GRADED, grade_attempt
from agent.run.engine import RunEngine
from agent.run.prepare import load_tasks, sandbox_constants, task_rows
from agent.run.quota import CensoredBy
from agent.run.replicate import Replicate
from agent.run.resume_plan import ResumePlan, TaskProgress
from agent.run.workspace_diff import apply_changes
from agent.states import EndReason, RunStatus
from verifiers.scratch import clean_stale, remove, scratch_dir
from verifiers.tasks import Task, materialize


def _class_from_grade(ledger: Ledger, row: dict[str, Any]) -> None:
    grade = ledger.grade(row["id"])
    assert grade is not None  # selected for having one
    findings = len(json.loads(grade["mechanics_json"] or "[]"))
    failure_class = classify(
        row["end_reason"],
        grade["verdict"],
        findings=findings,
        edited=bool(row["edited"]),
        malformed=row["malformed_tool_calls"] or 0,
        environment=grade["environment"],
    )
    ledger.batch([attempt_classed(row["id"], failure_class, failure_class == FailureClass.ACCEPTED)])


async def _regrade(engine: RunEngine, row: dict[str, Any], task: Task) -> None:
    """Grade an attempt whose loop ended before the kill, from its recorded files."""
    changes = json.loads(row["files_json"] or "{}")
    scratch = scratch_dir(f"regrade-{row['arm']}-{task.id}")
    try:
        work = materialize(task, scratch / "work")
        apply_changes(work, changes)
        await grade_attempt(
            engine,
            row["arm"],
            row["id"],
            task,
            work,
            row["attempt_no"],
            end_reason=row["end_reason"],
            edited=bool(changes),
            malformed=row["malformed_tool_calls"] or 0,
            changed=[k for k, v in changes.items() if v is not None],
            tokens=row["total_tokens"] or 0,
        )
    except LedgerError:
        raise
    except Exception as exc:  # noqa: BLE001 — as in a live attempt: this attempt's harness error, not the run's
        broken = attempt_classed(
            row["id"],
            FailureClass.HARNESS_ERROR,
            False,
            end_reason=EndReason.HARNESS_ERROR,
            end_detail=capped(f"regrading failed: {type(exc).__name__}: {exc}", 300),
            error_traceback=capped(engine.mask(traceback.format_exc())),
        )
        engine.ledger_sync.batch([broken])
        engine.emit(ev.LogMessage(engine.run_id, level="warning", text=f"regrading {row['id']} failed: {exc}"))
    finally:
        remove(scratch)


def resume_state(ledger: Ledger, run_id: str) -> ResumePlan:
    arms = {a["name"]: a for a in ledger.arms(run_id)}
    used = arm_tokens_used(ledger, run_id)
    for arm in arms.values():
        arm["tokens_used"] = used.get(arm["id"], 0)
    progress: dict[tuple[str, str], TaskProgress] = {}
    for row in attempt_outcomes(ledger, run_id):
        entry = progress.setdefault((row["arm"], row["task_id"]), TaskProgress())
        entry.accepted |= bool(row["accepted"])
        if counts_toward_budget(row["failure_class"]):  # a lost attempt's retry takes its number
            entry.counted += 1
            entry.next_no = max(entry.next_no, row["attempt_no"] + 1)
    return ResumePlan(arms=arms, progress=progress, caps={n: a["cap_tokens"] for n, a in arms.items()})


def engine_for_resume(ledger: Ledger, run_id: str, **engine_kwargs: Any) -> RunEngine:
    run = ledger.run(run_id)
    if run is None:
        raise QuotabenchError(f"ledger {ledger.path}: no run {run_id} — list runs with `quotabench report --list`")
    if run_state(run) == RunStatus.RUNNING:
        process = json.loads(run["process_json"])
        raise QuotabenchError(
            f"run {run_id} is running in process {process['pid']} on this machine — let it finish, "
            f"or stop it (kill {process['pid']}) and resume then"
        )
    spent = [a["name"] for a in ledger.arms(run_id) if a.get("censored_by") == CensoredBy.PROVIDER_QUOTA]
    if run["status"] == RunStatus.FINISHED and not spent:  # an arm the provider's quota ended resumes after a top-up
        raise QuotabenchError(
            f"run {run_id} already finished — nothing to resume; see `quotabench report {run_id[:10]}`"
        )
    stored = json.loads(run["config_json"])
    config: RunConfig = load_config_text(stored["toml"], Path(stored["path"]))
    replicate = Replicate(run["replicate_set"], run["replicate"], run["replicates"] or 1) if run["replicate"] else None
    engine = RunEngine(config, ledger, config_text=stored["toml"], replicate=replicate, **engine_kwargs)
    engine.run_id = run_id
    return engine


async def resume_run(engine: RunEngine) -> str:
    ledger, run_id = engine.ledger_sync, engine.run_id
    engine.tasks = load_tasks(engine.config)
    run = ledger.run(run_id)
    if run is None:
        raise QuotabenchError(f"ledger {ledger.path}: no run {run_id} — list runs with `quotabench report --list`")
    manifest = manifest_sha256(engine.tasks, engine.config, PROMPT_TEMPLATE_VERSION)
    if manifest != run["manifest_sha256"]:
        raise QuotabenchError(
            f"run {run_id}: the task files or harness config changed since it started "
            f"(manifest {run['manifest_sha256'][:12]} then, {manifest[:12]} now) — resuming would mix two benchmarks; start a new run"
        )
    await anyio.to_thread.run_sync(clean_stale)  # scratch folders of the killed process
    recover(ledger, run_id)
    if not ledger.tasks(run_id):  # killed between the runs row and the tasks rows
        ledger.insert_many("tasks", task_rows(run_id, engine.tasks))
    by_id = {t.id: t for t in engine.tasks}
    for row in ungraded_attempts(ledger, run_id):
        if row["status"] == "graded":
            _class_from_grade(ledger, row)
        elif row["end_reason"] in NOT_GRADED:  # stopped before its class was written: nothing to grade
            ledger.batch([attempt_update(row["id"], failure_class=classify(row["end_reason"], None), status="done")])
        else:
            await _regrade(engine, row, by_id[row["task_id"]])
    engine.resume_state = resume_state(ledger, run_id)
    constants = observed_constants() | sandbox_constants(engine.grader, engine.log)
    unrecorded = {key: constants[key] for key in RUNTIME_VERSIONS if run.get(key) is None}  # killed before they came
    process = {"process_json": to_json(process_identity())}  # this process drives the run now
    ledger.batch([run_resumed(run_id, **unrecorded, **process)])
    return await engine.drive(manifest, constants, fresh=False)
