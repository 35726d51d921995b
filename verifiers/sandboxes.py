"""The sandboxes, picked by name (the seam is verifiers/sandbox.py's `Sandbox`):

    bwrap     bubblewrap (verifiers/bwrap.py): its own mount, pid, network, ipc and uts
              namespaces; only the runtimes visible, read-only; sized tmpfs for the tree and
              /tmp; an unprivileged uid; everything it started dies with it.
    fallback  a plain subprocess (verifiers/fallback.py) when bubblewrap is unavailable:
              rlimits, a scrubbed environment, `unshare -n` and a pids cgroup where allowed.
              It shares the host's filesystem view, and every result says so.

`make_sandbox()` picks bwrap when it works here; `require=True` refuses the fallback.
"""

from __future__ import annotations

from verifiers import VerifierError
from verifiers.isolation import bwrap_status
from verifiers.sandbox import Sandbox, SandboxUnavailable


def sandbox_names() -> tuple[str, ...]:
    return ("bwrap", "fallback")


def make_sandbox(name: str | None = None, *, require: bool = False) -> Sandbox:
    """The sandbox called `name`, or the best one this machine runs (bwrap, else fallback).

    With `require`, a machine where bubblewrap cannot run raises SandboxUnavailable naming why.
    """
    from verifiers.bwrap import BwrapSandbox  # imported when a sandbox is made, not when graders load
    from verifiers.fallback import FallbackSandbox

    if name not in (None, *sandbox_names()):
        raise VerifierError(f"unknown sandbox {name!r} — valid sandboxes: {', '.join(sandbox_names())}")
    status = bwrap_status()
    if name == "fallback":
        if require:
            raise SandboxUnavailable("the fallback sandbox was asked for, but the full sandbox is required")
        return FallbackSandbox(reason="chosen explicitly")
    if status.usable:
        return BwrapSandbox(status)
    if require or name == "bwrap":
        raise SandboxUnavailable(f"the bubblewrap sandbox is required but unavailable: {status.problem}")
    return FallbackSandbox(reason=status.problem or "bubblewrap unavailable")
