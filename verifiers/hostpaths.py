"""Which host paths a sandboxed test command needs, read-only: the system directories and
the language runtimes (this Python and its packages, node and tsx, cargo and rustup, go).

Nothing else of the host is shown to the command: not the user's home, not the suites, not
the ledger. Found once per process.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import site
import sys
from dataclasses import dataclass
from pathlib import Path

SYSTEM_DIRS = ("/usr",)
# Merged-/usr systems have these as symlinks into /usr; others have real directories.
TOP_LEVEL = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Copied into the sandbox's own /etc (one mount); everything else of /etc stays out.
ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/alternatives",
    "/etc/nsswitch.conf",
    # the JDK's configuration (its conf/ links here: java.security, logging.properties)
    *sorted(glob.glob("/etc/java-*-openjdk")),
)


@dataclass(frozen=True)
class HostPaths:
    ro_binds: tuple[str, ...]  # host paths bound read-only at the same path
    symlinks: tuple[tuple[str, str], ...]  # (target, link) pairs for /bin and friends
    path_dirs: tuple[str, ...]  # PATH inside the sandbox, in order
    env: tuple[tuple[str, str], ...]  # runtime variables (RUSTUP_HOME)


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _python_dirs() -> list[str]:
    """This interpreter's prefixes and every site-packages directory it reads."""
    dirs = [sys.prefix, sys.base_prefix, *site.getsitepackages()]
    for entry in sys.path:  # site dirs added by .pth files (never a project checkout)
        if entry.rstrip("/").endswith(("site-packages", "dist-packages")):
            dirs.append(entry)
    return [d for d in dict.fromkeys(os.path.realpath(d) for d in dirs) if os.path.isdir(d)]


def _tool_root(command: str) -> tuple[str | None, str | None]:
    """(directory on PATH holding `command`, install root to bind) or (None, None)."""
    found = shutil.which(command)
    if found is None:
        return None, None
    real = os.path.realpath(found)
    parts = Path(real).parts
    if "node_modules" in parts:  # a global npm package: bind its node_modules folder
        root = str(Path(*parts[: len(parts) - parts[::-1].index("node_modules")]))
    elif command in ("node", "go"):  # node's prefix holds its bin and lib; go's is its GOROOT
        root = str(Path(real).parent.parent)
    else:  # cargo: its bin folder only (~/.cargo also holds registry credentials)
        root = str(Path(real).parent)
    return str(Path(found).parent), root


def _tsx_loader() -> str | None:
    """tsx's `--import` entry (its package's main export), beside the tsx on PATH."""
    found = shutil.which("tsx")
    if found is None:
        return None
    parts = Path(os.path.realpath(found)).parts
    if "node_modules" not in parts:
        return None
    root = Path(*parts[: len(parts) - parts[::-1].index("node_modules") + 1])
    loader = root / "dist" / "loader.mjs"
    return str(loader) if loader.is_file() else None


def host_paths() -> HostPaths:
    """What to show the sandbox, for the PATH this process has now (found once per PATH)."""
    return _host_paths(os.environ.get("PATH", "/usr/bin:/bin"))


@functools.cache
def _host_paths(process_path: str) -> HostPaths:
    binds: list[str] = [d for d in SYSTEM_DIRS if os.path.isdir(d)]
    symlinks: list[tuple[str, str]] = []
    for top in TOP_LEVEL:
        if os.path.islink(top):
            symlinks.append((os.readlink(top), top))
        elif os.path.isdir(top):
            binds.append(top)
    path_dirs = [str(Path(sys.executable).parent)]
    binds += _python_dirs()
    if not _under(path_dirs[0], binds):
        binds.append(path_dirs[0])
    env: list[tuple[str, str]] = []
    for command in ("node", "tsx", "cargo", "go"):
        on_path, root = _tool_root(command)
        if on_path is None:
            continue
        path_dirs.append(on_path)
        for needed in (on_path, root):
            if needed and not _under(needed, binds) and needed != "/":
                binds.append(needed)
    loader = _tsx_loader()
    if loader is not None:  # the harness runs .ts tests on node with tsx's loader (verifiers/harness)
        env.append(("QB_TSX_LOADER", loader))
    rustup = os.environ.get("RUSTUP_HOME") or str(Path.home() / ".rustup")
    if shutil.which("cargo") and os.path.isdir(rustup):
        binds.append(os.path.realpath(rustup))
        env.append(("RUSTUP_HOME", os.path.realpath(rustup)))
    # Then the caller's own PATH, in its order, as far as the sandbox shows it: a tool the
    # user's shell would not find is not found inside either, and one it finds first comes first
    # (node's /usr/bin ahead of ~/.cargo/bin would hand the tests a distribution's older cargo).
    symlinked = [link for _, link in symlinks]
    tools = set(path_dirs[1:])
    path_dirs = path_dirs[:1]
    for entry in process_path.split(os.pathsep):
        shown = entry in tools or _under(os.path.realpath(entry), binds) or entry in symlinked
        if entry and os.path.isdir(entry) and shown:
            path_dirs.append(entry)
    path_dirs += sorted(tools - set(path_dirs))  # found by `which` on another PATH: still shown
    unique = list(dict.fromkeys(binds))
    outermost = [b for b in unique if not _under(b, [o for o in unique if o != b])]
    return HostPaths(tuple(outermost), tuple(symlinks), tuple(dict.fromkeys(path_dirs)), tuple(env))
