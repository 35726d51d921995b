"""What a run loads and checks before it records anything: the task list, the api keys, the
sandbox; and the tasks rows it records them as. Used by the engine, resume and the CLI."""

from __future__ import annotations

import json
import os
import random
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from agent import QuotabenchError
from agent.config import PROMPT_TEMPLATE_VERSION, RunConfig, ValidateSettings
from agent.ledger.liveness import process_identity
from agent.ledger.ops import InsertAll, Op
from agent.ledger.rows import run_opened, run_update
from agent.ledger.store import LedgerError, to_json
from agent.ledger.writer import AsyncLedger
from agent.manifest import load_average, runtime_versions
from agent.run.first_request import over_cap, over_cap_line
from verifiers.sandbox import describe_sandbox
from verifiers.sandboxes import make_sandbox
from verifiers.tasks import Task, TaskProblem, load_suite


def load_tasks(config: RunConfig, log: Callable[[str], None] | None = None) -> list[Task]:
    return load_task_list(config, log)[0]


def load_task_list(config: RunConfig, log: Callable[[str], None] | None = None) -> tuple[list[Task], list[TaskProblem]]:
    """The run's tasks, and the task folders left out because they would not load (each logged;
    a task id already taken by another suite is one of them)."""
    tasks: list[Task] = []
    problems: list[TaskProblem] = []
    seen: dict[str, Path] = {}
    for suite_path in config.suites:
        suite = load_suite(suite_path)
        problems += suite.problems
        for task in suite.tasks:
            if task.id in seen:
                problems.append(
                    TaskProblem(
                        task.path, f"duplicate id {task.id!r} (also {seen[task.id]})", "give each task a unique id"
                    )
                )
                continue
            seen[task.id] = task.path
            tasks.append(task)
    if log:
        for problem in problems:
            log(f"skipping broken task: {problem}")
    if config.tasks:
        wanted = set(config.tasks)
        missing = wanted - {t.id for t in tasks}
        if missing:
            raise QuotabenchError(
                f"config {config.path}: run.tasks names unknown task ids {sorted(missing)} — check the ids in the suites"
            )
        tasks = [t for t in tasks if t.id in wanted]
    if config.stop_when_decided:  # the decided prefix must be a random sample of the suite
        random.Random(config.task_order_seed).shuffle(tasks)
    if not tasks:
        raise QuotabenchError(
            f"config {config.path}: the suites hold no valid task — run `quotabench validate` on them"
        )
    if log:
        for arm in config.arms:
            for request in over_cap(tasks, arm.protocol, arm.max_tokens, arm.cap_tokens):
                log(over_cap_line(request, f"arm {arm.name}", arm.max_tokens, arm.cap_tokens))
    return tasks, problems


def broken_rows(problems: list[TaskProblem]) -> list[dict[str, str]]:
    """The task folders a run left out, as runs.broken_tasks_json holds them."""
    return [{"path": str(p.path), "problem": p.problem, "fix": p.fix} for p in problems]


def check_keys(config: RunConfig) -> None:
    """Every arm's api key variable is set; otherwise one message naming every unset one."""
    missing: dict[str, list[str]] = {}
    for arm in config.arms:
        if arm.api_key_env and not os.environ.get(arm.api_key_env):
            missing.setdefault(arm.api_key_env, []).append(arm.name)
    if len(missing) == 1:
        ((var, arms),) = missing.items()
        raise QuotabenchError(
            f"arm {', '.join(arms)}: environment variable {var} is not set — "
            f"export {var}=... or remove api_key_env from the config"
        )
    if missing:
        names = ", ".join(f"{var} (arm {', '.join(arms)})" for var, arms in missing.items())
        raise QuotabenchError(
            f"config {config.path}: environment variables {names} are not set — "
            f"export {' '.join(f'{var}=...' for var in missing)}, or remove api_key_env from those arms"
        )


def check_before_run(config: RunConfig) -> None:
    """Problems that would only surface once the run is recorded: fail before writing anything."""
    check_keys(config)
    if config.require_sandbox:
        if config.executor == "local":  # a Ray executor checks every node when it starts
            make_sandbox(require=True)  # SandboxUnavailable names what is missing


def task_rows(run_id: str, tasks: list[Task]) -> list[dict[str, Any]]:
    return [
        {
            "run_id": run_id,
            "task_id": t.id,
            "position": i,
            "suite": str(t.path.parent),
            "path": str(t.path),
            "language": t.language,
            "kind": t.kind,
            "files_sha256": t.files_sha256(),
            "prompt": t.prompt,
            "control": t.control,
        }
        for i, t in enumerate(tasks)
    ]


def mutation_rows(run_id: str, tasks: list[Task], settings: ValidateSettings) -> list[dict[str, Any]]:
    """The cached mutation scores of exactly these task versions (`validate --mutants`), as rows."""
    from agent.ledger.store import utc_now
    from agent.metrics.mutation import task_mutation
    from verifiers.mutants.cache import ScoreCache, cache_key

    cache = ScoreCache(settings.cache_dir)
    rows = []
    for task in tasks:
        key = cache_key(task, settings.max_mutants)
        score = cache.get(key)
        if score is None or score.skipped is not None:
            continue
        t = task_mutation(score)
        rows.append(
            {
                "run_id": run_id,
                "task_id": task.id,
                "cache_key": key,
                "language": task.language,
                "generated": t.generated,
                "killed": t.killed,
                "survived": t.survived,
                "equivalent": t.equivalent,
                "unviable": t.unviable,
                "flagged": t.flagged,
                "errors": t.errors,
                "score": t.score,
                "weak_below": settings.weak_below,
                "recorded_utc": utc_now(),
            }
        )
    return rows


def mutation_ops(run_id: str, tasks: list[Task], settings: ValidateSettings) -> list[InsertAll]:
    """The tasks' cached mutation scores as ledger writes (none when no task was scored)."""
    rows = mutation_rows(run_id, tasks, settings)
    return [InsertAll("mutation_scores", rows)] if rows else []


def new_run_ops(
    config: RunConfig,
    config_text: str,
    run_id: str,
    tasks: list[Task],
    broken: list[TaskProblem],
    manifest: str,
    constants: dict[str, Any],
) -> list[Op]:
    """A new run's rows, written in one transaction: the run (what it runs, on which machine,
    `constants`), its tasks and their cached mutation scores."""
    opened = run_opened(
        run_id,
        manifest_sha256=manifest,
        config_path=str(config.path),
        config_json=to_json({"toml": config_text, "path": str(config.path)}),
        suites_json=to_json([str(s) for s in config.suites]),
        prompt_template_version=PROMPT_TEMPLATE_VERSION,
        load_start=load_average(),
        session_id=_session_id(),
        process_json=to_json(process_identity()),
        broken_tasks_json=to_json(broken_rows(broken)),
        **constants,
    )
    return [opened, InsertAll("tasks", task_rows(run_id, tasks)), *mutation_ops(run_id, tasks, config.validate)]


def _session_id() -> str:
    """Runs started from one shell session share this id (back-to-back replicates)."""
    return f"{os.getppid()}-{os.environ.get('TERM_SESSION_ID', '')}-{os.environ.get('TMUX', '').split(',')[-1]}"


class RuntimeVersions:
    """The runtimes' versions for a run's row (agent.manifest.runtime_versions), asked on a
    thread from the moment the run starts rather than before its first call (`tsx --version`
    alone starts node, ~0.3 s), and queued as an update of the row once `record` says it exists.
    """

    def __init__(self) -> None:
        self._row: tuple[AsyncLedger, str] | None = None
        self._row_known = threading.Event()
        self._thread = threading.Thread(target=self._ask, name="runtime versions", daemon=True)
        self._thread.start()

    def _ask(self) -> None:
        versions = runtime_versions()
        self._row_known.wait()
        if self._row is not None:
            ledger, run_id = self._row
            ledger.batch_queued([run_update(run_id, **versions)])

    def record(self, ledger: AsyncLedger, run_id: str) -> None:
        """The run's row is written: the versions go to it when they come."""
        self._row = ledger, run_id
        self._row_known.set()

    async def settle(self, quiet: bool = False) -> None:
        """Wait until the versions are written (or dropped, if the row never was); `quiet`: a
        failed write is not raised."""
        self._row_known.set()
        await anyio.to_thread.run_sync(self._thread.join)
        if self._row is not None:
            try:
                await self._row[0].flush()
            except LedgerError:
                if not quiet:
                    raise


def sandbox_constants(grader: object, log: Callable[[str, str], None]) -> dict[str, Any]:
    """The runs columns that say which sandbox grades run in (a warning when not the full one)."""
    sandbox = describe_sandbox(getattr(grader, "sandbox", None))
    if sandbox["sandbox"] != "bwrap":
        log(f"grading without the full sandbox ({sandbox['sandbox']}): {sandbox.get('missing')}", "warning")
    return {"isolation_sandbox": sandbox["sandbox"], "isolation_json": to_json(sandbox)}


def isolation_event(constants: dict[str, Any]) -> dict[str, Any]:
    """The isolation the RunStarted event reports, from the runs columns."""
    sandbox = json.loads(constants.get("isolation_json") or "{}")
    return {
        "network": constants.get("isolation_network"),
        "pids": constants.get("isolation_pids"),
        "sandbox": constants.get("isolation_sandbox"),
        "missing": sandbox.get("missing"),
    }
