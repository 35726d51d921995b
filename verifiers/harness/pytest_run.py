"""quotabench's pytest driver: runs inside the sandbox, before any workspace code, as
`python -P -s -B pytest_run.py ARGS` (ARGS: the task's own pytest arguments).

What it closes, in order:
- the interpreter starts in safe-path mode (-P, -s): nothing of the workspace is importable
  until the driver appends it to sys.path, *after* the standard library and site-packages, so
  no workspace module can stand in for pytest, its dependencies or a stdlib module;
- it reads its key and the protected (hidden) file list from an inherited pipe and closes it,
  then makes the process non-dumpable (no other process may read its memory or descriptors);
  the key goes into the signer (pytest_sign.py) and no frame of the driver keeps it;
- pytest runs with the harness's own config (or the task's, restored by the grader), plugin
  autoload off, `--import-mode=importlib`, and the harness's plugins (pytest_plugin.py): every
  collected test, every phase's outcome, a witness of each test function that returned, and
  the session's end go as HMAC-signed lines with a sequence number to a second inherited
  descriptor (the verdict channel: stdout is only for people);
- an audit hook (pytest_watch.py; PEP 578, not removable) reports what workspace code does that
  tests are gamed with, and refuses it the harness's own state;
- the runner's internals, the hidden tests' oracles and namespaces are fingerprinted
  (pytest_guard.py) and checked before every test and at the end;
- it leaves with os._exit, so no atexit hook or lingering thread can change the exit status.

The harness's modules are loaded from their files (not sys.path) and import nothing of
quotabench: only the standard library and pytest.
"""

import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.realpath(__file__))


def main() -> None:  # what workspace code could use is not kept in this frame, which it can read
    import gc
    import json

    setup = json.loads(_read_fd(int(os.environ.pop("QB_KEY_FD"))))
    work = os.path.realpath(os.getcwd())
    protected = frozenset(os.path.realpath(os.path.join(work, p)) for p in setup.get("protected", ()))
    _not_dumpable()
    names = ("pytest_sign", "pytest_watch", "pytest_guard", "pytest_plugin", "pytest_sources")
    sign, watch, guard, plugins, served = (_load(n) for n in names)
    own = _own_code_ids(sys.modules[__name__], sign, watch, guard, plugins, served)
    sources = {
        os.path.realpath(os.path.join(work, rel)): text.encode() for rel, text in setup.pop("sources", {}).items()
    }
    emit = sign.signer(bytes.fromhex(setup.pop("key")), int(os.environ.pop("QB_RESULT_FD")), own)
    emit("start", runner="pytest", python=sys.version.split()[0])
    args = sys.argv[1:]
    sys.path[:] = [p for p in sys.path if p and os.path.realpath(p) != work]
    for folder in [work, *_test_dirs(args, work)]:
        if folder not in sys.path:
            sys.path.append(folder)  # after the standard library and site-packages
    import pytest

    served.serve(sources)  # before any hidden module is imported: on disk they are empty
    served.parse_once()
    harness = plugins.make_plugins(emit, work, protected, guard, sources)
    watch.watch(emit, work, tuple(sorted(protected)), own, HERE)
    del sign, watch, guard, plugins, served, own, sources
    code = 3
    # What is alive now (pytest, the harness and its fingerprints) is never garbage; pytest
    # collects five times at the end of a session, and each walked all of it.
    gc.freeze()
    try:
        code = int(pytest.main(_harness_args(args, work, setup), plugins=harness))
    finally:
        emit("exit", code=code)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(code)


def _load(name: str) -> Any:
    """A harness module from its file, kept out of sys.modules."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"quotabench_{name}", os.path.join(HERE, f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _own_code_ids(*modules: Any) -> frozenset[int]:
    """Every code object of the harness's modules (functions, nested functions, class bodies and
    comprehensions): the callers whose records the signer signs."""
    from types import CodeType, FunctionType

    found: set[int] = set()
    stack = [v.__code__ for m in modules for v in vars(m).values() if type(v) is FunctionType]
    while stack:
        code = stack.pop()
        if code.co_filename.startswith(HERE + os.sep) and id(code) not in found:
            found.add(id(code))
            stack.extend(c for c in code.co_consts if type(c) is CodeType)
    return frozenset(found)


def _read_fd(fd: int) -> bytes:
    chunks = []
    while True:
        data = os.read(fd, 65536)
        if not data:
            break
        chunks.append(data)
    os.close(fd)
    return b"".join(chunks)


def _not_dumpable() -> None:
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except Exception:  # noqa: BLE001 — still graded; other processes could then read /proc/<pid>/fd
        pass


def _test_dirs(args: list[str], work: str) -> list[str]:
    """Folders of the test files named on the command line (pytest's rootdir-insertion, but last)."""
    dirs = []
    for arg in args:
        path = os.path.realpath(os.path.join(work, arg.split("::")[0]))
        if not arg.startswith("-") and path.startswith(work + os.sep) and os.path.exists(path):
            dirs.append(path if os.path.isdir(path) else os.path.dirname(path))
    return dirs


def _harness_args(args: list[str], work: str, setup: dict[str, object]) -> list[str]:
    config = setup.get("config") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "pytest.ini")
    extra = ["-c", str(config), "--rootdir", work, "-p", "no:cacheprovider", "--import-mode=importlib"]
    if not setup.get("conftest"):
        extra.append("--noconftest")
    return extra + [a for a in args if not a.startswith(("--import-mode", "--rootdir", "-c=", "--config-file"))]


if __name__ == "__main__":
    main()
