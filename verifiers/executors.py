"""Where sandboxed commands run: the executor seam, picked by short name.

    local   this machine: the sandbox of verifiers/sandbox.py, in the calling thread
    ray     a Ray cluster (verifiers/ray_executor.py): each command is a Ray task that gets the
            tree's files, runs the same sandbox on a worker and returns the same RunResult;
            the caller stays the only ledger writer and quota account

An executor is a `Sandbox` (same one-method seam), so grading, `run_tests` and the gate use it
unchanged. `placement` in every RunResult says where a command ran and how long it waited.
"""

from __future__ import annotations

from pathlib import Path

from verifiers import VerifierError
from verifiers.sandbox import Sandbox, make_sandbox

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


# -- a tree as data: what a remote command receives instead of paths ---------------------------

Tree = dict[str, tuple[str, bytes]]  # relative path -> ("file", bytes) | ("link", target) | ("exec", bytes)


def pack_tree(root: Path | None) -> Tree:
    """Every file under root as data; symlinks as their target (never followed)."""
    import os

    from verifiers.tasks import iter_files

    if root is None:
        return {}
    tree: Tree = {}
    for path in iter_files(root):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            tree[rel] = ("link", os.readlink(path).encode())
        else:
            tree[rel] = ("exec" if os.access(path, os.X_OK) else "file", path.read_bytes())
    return tree


def unpack_tree(tree: Tree, dest: Path) -> Path:
    """Write a packed tree under dest; a path that would leave dest is refused."""
    import os

    dest.mkdir(parents=True, exist_ok=True)
    root = dest.resolve()
    for rel, (kind, data) in sorted(tree.items()):
        parts = Path(rel).parts
        if os.path.isabs(rel) or ".." in parts or not parts:
            raise VerifierError(f"packed tree: {rel!r} leaves its folder")
        current = root
        for part in parts[:-1]:  # never write through a link
            current = current / part
            if current.is_symlink():
                raise VerifierError(f"packed tree: {rel!r} leaves its folder through a link")
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if kind == "link":
            os.symlink(data.decode(), target)
        else:
            target.write_bytes(data)
            if kind == "exec":
                target.chmod(0o755)
    return dest
