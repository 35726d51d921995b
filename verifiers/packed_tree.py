"""A folder as data: what a remote command (verifiers/ray_executor.py) receives instead of paths,
and how it is written back out without leaving its destination."""

from __future__ import annotations

import os
from pathlib import Path

from verifiers import VerifierError

Tree = dict[str, tuple[str, bytes]]  # relative path -> ("file", bytes) | ("link", target) | ("exec", bytes)


def pack_tree(root: Path | None) -> Tree:
    """Every file under root as data; symlinks as their target (never followed)."""
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
