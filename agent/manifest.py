"""The run manifest (what makes two runs the same benchmark) and the constants a comparison holds
fixed, observed at run start rather than assumed.

manifest sha256 = hash over every task file of the suite and the harness config that decides
the grade (max_attempts, limits, prompt template version, harness version). A changed hash
means a new benchmark.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from typing import Any

from agent import __version__
from agent.config import RunConfig
from verifiers.isolation import network_isolation_available
from verifiers.tasks import Task


def manifest_sha256(tasks: list[Task], config: RunConfig, prompt_template_version: str) -> str:
    h = hashlib.sha256()
    for task in tasks:
        h.update(task.id.encode() + b"\0" + task.files_sha256().encode() + b"\0")
    harness = {
        "max_attempts": config.max_attempts,
        "limits": asdict(config.limits),
        "prompt_template": prompt_template_version,
        "harness_version": __version__,
    }
    if any(a.strategy is not None for a in config.arms):  # other strategies are another benchmark
        harness["strategies"] = {
            a.name: [a.strategy or "direct", a.select or "visible", a.fallback] for a in config.arms
        }
    if config.stop_when_decided:  # the task order is a seeded shuffle; the order is hashed too
        harness["task_order"] = f"shuffled with seed {config.task_order_seed}"
    h.update(json.dumps(harness, sort_keys=True).encode())
    return h.hexdigest()


def _version(*cmd: str) -> str | None:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    text = (out.stdout or out.stderr).strip().splitlines()
    return text[0] if out.returncode == 0 and text else None


def load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


RUNTIME_VERSIONS = {
    "node_version": ("node", "--version"),
    "cargo_version": ("cargo", "--version"),
    "tsx_version": ("tsx", "--version"),
    "go_version": ("go", "version"),
    "java_version": ("java", "-version"),
    "gxx_version": ("g++", "--version"),
}


@functools.cache
def _runtime_versions(path: str) -> dict[str, str | None]:
    # Asked at once: `tsx --version` alone starts node with a loader (~0.3 s).
    with ThreadPoolExecutor(len(RUNTIME_VERSIONS)) as pool:
        asked = {key: pool.submit(_version, *cmd) for key, cmd in RUNTIME_VERSIONS.items()}
        return {key: future.result() for key, future in asked.items()}


def runtime_versions() -> dict[str, str | None]:
    """The versions of the tools tasks run with, as installed on PATH; asked once per PATH in a
    process (a session's runs share them)."""
    return dict(_runtime_versions(os.environ.get("PATH", "")))


@functools.cache
def _isolation(no_unshare: str | None, no_cgroup: str | None) -> dict[str, str]:
    from verifiers.isolation import PidsCgroup

    probe = PidsCgroup(8)
    pids = "on" if probe.path else "off"
    probe.remove()
    return {"isolation_network": "on" if network_isolation_available() else "off", "isolation_pids": pids}


def machine_constants() -> dict[str, Any]:
    """The held constants but the runtime versions: what this machine is and isolates, measured
    (once per process and isolation switches), not assumed."""
    switches = os.environ.get("QUOTABENCH_NO_UNSHARE"), os.environ.get("QUOTABENCH_NO_CGROUP")
    return {
        "harness_version": __version__,
        "python_version": platform.python_version(),
        **_isolation(*switches),
        "host": platform.node(),
    }


def observed_constants() -> dict[str, Any]:
    """Versions and isolation as measured on this machine, not as assumed."""
    return machine_constants() | runtime_versions()
