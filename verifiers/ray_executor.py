"""The Ray executor: sandboxed commands run as Ray tasks on a cluster's workers.

A command travels as data: the staged tree and the protected (hidden) files are packed into
the task's arguments, the worker writes them into its own scratch folder and runs the very
sandbox `quotabench` runs locally (bubblewrap, or the recorded fallback), and the RunResult
comes back. Nothing on the worker writes the ledger or touches a quota: the driver grades.

Scheduling: each task asks Ray for the command's `cpus` and typical resident memory (by
language, verifiers/sandbox.py RESIDENT_MB). A worker lost mid-command (killed, node gone) is
retried once on another worker and the retry is recorded; a second loss is an error naming
the node, never charged to the model. What every node has (quotabench, bubblewrap, the
language runtimes) is checked when the executor starts, and said per node.

Connecting: `address` "auto" joins the cluster `ray start` made on this machine, a
"ray://host:10001" address a remote one; None starts a local Ray for this process (closed by
`close()`).
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from verifiers import VerifierError
from verifiers.packed_tree import Tree, pack_tree, unpack_tree
from verifiers.sandbox import Limits, RunResult, SandboxUnavailable

_MB = 1024 * 1024
TOOLS = ("python", "node", "tsx", "cargo")
LOST = (
    "WorkerCrashedError",
    "NodeDiedError",
    "ObjectLostError",
    "OwnerDiedError",
    "ObjectFetchTimedOutError",
    "LocalRayletDiedError",
    "RaySystemError",
)


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise VerifierError(
            "executor ray: the ray package is not installed — pip install -e '.[ray]' (or use executor = \"local\")"
        ) from None
    return ray


@dataclass(frozen=True)
class NodeReport:
    """What one node of the cluster can run."""

    node_id: str
    host: str
    quotabench: str | None
    sandbox: str
    sandbox_problem: str | None
    missing_tools: tuple[str, ...]

    def __str__(self) -> str:
        tools = f"missing {', '.join(self.missing_tools)}" if self.missing_tools else "all runtimes"
        sandbox = self.sandbox if self.sandbox_problem is None else f"{self.sandbox} ({self.sandbox_problem})"
        return f"node {self.host} {self.node_id[:8]}: quotabench {self.quotabench}, sandbox {sandbox}, {tools}"


def _probe_node() -> dict[str, Any]:
    """Runs on a worker: what this node has."""
    import shutil
    from importlib.metadata import PackageNotFoundError, version

    import ray

    from verifiers.hostpaths import host_paths
    from verifiers.isolation import bwrap_status

    status = bwrap_status()
    path = ":".join(host_paths().path_dirs)
    try:
        installed: str | None = version("quotabench")
    except PackageNotFoundError:
        installed = None
    return {
        "node_id": ray.get_runtime_context().get_node_id(),
        "host": _host(),
        "quotabench": installed,
        "sandbox": "bwrap" if status.usable else "fallback",
        "sandbox_problem": status.problem,
        "missing_tools": tuple(t for t in TOOLS if shutil.which(t, path=path) is None),
    }


def _host() -> str:
    import socket

    return socket.gethostname()


_worker_sandboxes: dict[bool, object] = {}


def _run_on_worker(
    command: str, tree: Tree, hidden: Tree, limits: Limits, require: bool, channel: bytes | None = None
) -> tuple[Any, ...]:
    """Runs on a worker: unpack, run the local sandbox, clean up. Returns (result, node, host, run_ms)."""
    import ray

    from verifiers.sandboxes import make_sandbox
    from verifiers.scratch import remove, scratch_dir

    started = time.monotonic()
    sandbox = _worker_sandboxes.get(require)
    if sandbox is None:
        sandbox = _worker_sandboxes[require] = make_sandbox(require=require)
    folder = scratch_dir("ray-command")
    try:
        source = unpack_tree(tree, folder / "src")
        protected = unpack_tree(hidden, folder / "hidden") if hidden else None
        result = sandbox.run(command, source, limits, protected, channel)  # type: ignore[attr-defined]
    finally:
        remove(folder)
    node = ray.get_runtime_context().get_node_id()
    return result, node, _host(), int((time.monotonic() - started) * 1000)


class RaySandbox:
    """A `Sandbox` whose commands run on Ray workers (see the module docstring)."""

    name = "ray"

    def __init__(self, address: str | None = None, *, require_sandbox: bool = False, num_cpus: int | None = None):
        ray = _ray()
        self.require = require_sandbox
        self.started_local = False
        if not ray.is_initialized():
            options = dict(
                include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING, configure_logging=False
            )
            try:
                if address:
                    ray.init(address=address, **options)
                else:
                    ray.init(num_cpus=num_cpus or os.cpu_count(), **options)
                    self.started_local = True
            except Exception as exc:  # noqa: BLE001 — any failure to reach the cluster is one line
                where = f"the Ray cluster at {address}" if address else "a local Ray instance"
                why = " ".join(str(exc).split())[:200]
                raise VerifierError(
                    f"executor ray: cannot start or reach {where} ({type(exc).__name__}: {why}) "
                    "— check ray_address, or run `ray start --head`"
                ) from None
        self._remote = ray.remote(_run_on_worker)
        self.nodes = self.check_nodes()
        bad = [n for n in self.nodes if n.sandbox_problem is not None]
        if require_sandbox and bad:
            raise SandboxUnavailable(
                f"the bubblewrap sandbox is required but unavailable on {len(bad)} Ray node(s): "
                + "; ".join(str(n) for n in bad)
            )

    def check_nodes(self) -> list[NodeReport]:
        """Probe every alive node once (pinned to it) for quotabench, the sandbox and runtimes."""
        ray = _ray()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        probe = ray.remote(_probe_node)
        refs = [
            probe.options(
                num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)
            ).remote()
            for n in ray.nodes()
            if n.get("Alive")
        ]
        return [NodeReport(**r) for r in ray.get(refs, timeout=120)]

    def describe(self) -> dict[str, Any]:
        sandboxes = {n.sandbox for n in self.nodes}
        missing = "; ".join(str(n) for n in self.nodes if n.sandbox_problem) or None
        return {
            "sandbox": "bwrap" if sandboxes == {"bwrap"} else "fallback",
            "executor": "ray",
            "missing": missing,
            "nodes": [str(n) for n in self.nodes],
        }

    def run(
        self, command: str, source: Path, limits: Limits, protected: Path | None = None, channel: bytes | None = None
    ) -> RunResult:
        ray = _ray()
        tree, hidden = pack_tree(Path(source)), pack_tree(protected)
        submitted = time.monotonic()
        lost: list[str] = []
        for _ in range(2):
            ref = self._remote.options(num_cpus=limits.cpus, memory=limits.resident_mb * _MB, max_retries=0).remote(
                command, tree, hidden, limits, self.require, channel
            )
            try:
                result, node, host, run_ms = ray.get(ref)
            except Exception as exc:  # noqa: BLE001 — a lost worker is retried once; anything else is an error
                if type(exc).__name__ not in LOST and not isinstance(getattr(exc, "cause", None), OSError):
                    return RunResult(
                        None,
                        0,
                        "",
                        start_error=f"the Ray task failed: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}",
                        placement={"executor": "ray", "retries": len(lost)},
                    )
                lost.append(f"{type(exc).__name__}")
                continue
            total_ms = int((time.monotonic() - submitted) * 1000)
            placement = {
                "executor": "ray",
                "node": f"{host} {node[:12]}",
                "queue_ms": max(0, total_ms - run_ms),
                "run_ms": run_ms,
                "retries": len(lost),
            }
            return replace(result, placement=placement)  # type: ignore[no-any-return]  # the output stays as the local run's (tokens!)
        return RunResult(
            None,
            int((time.monotonic() - submitted) * 1000),
            "",
            start_error=f"the Ray worker running it was lost twice ({', '.join(lost)}) — "
            "not the model's doing; check the cluster's nodes",
            placement={"executor": "ray", "retries": len(lost)},
        )

    def close(self) -> None:
        if self.started_local:
            _ray().shutdown()
            self.started_local = False
