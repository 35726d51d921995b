"""Where sandboxed commands run: the executor seam, picked by short name.

    local   this machine: a sandbox of verifiers/sandboxes.py, in the calling thread
    ray     a Ray cluster (verifiers/ray_executor.py): each command is a Ray task that gets the
            tree's files, runs the same sandbox on a worker and returns the same RunResult;
            the caller stays the only ledger writer and quota account

An executor is a `Sandbox` (same one-method seam), so grading, `run_tests` and the gate use it
unchanged. `placement` in every RunResult says where a command ran and how long it waited.
"""

from __future__ import annotations

from verifiers import VerifierError
from verifiers.sandbox import Sandbox
from verifiers.sandboxes import make_sandbox

EXECUTORS = ("local", "ray")


def make_executor(
    name: str = "local", *, ray_address: str | None = None, require_sandbox: bool = False, sandbox: str | None = None
) -> Sandbox:
    """The executor called `name`; an unknown name is an error listing the valid ones."""
    if name == "local":
        return make_sandbox(sandbox, require=require_sandbox)
    if name == "ray":
        from verifiers.ray_executor import RaySandbox

        return RaySandbox(address=ray_address, require_sandbox=require_sandbox)
    raise VerifierError(f"unknown executor {name!r} — valid executors: {', '.join(EXECUTORS)}")


def close_executor(sandbox: object) -> None:
    """Release what an executor holds (a local Ray it started); a no-op for the local one."""
    close = getattr(sandbox, "close", None)
    if close is not None:
        close()
