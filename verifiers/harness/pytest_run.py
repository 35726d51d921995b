"""quotabench's pytest driver: runs inside the sandbox, before any workspace code, as
`python -P -s -B pytest_run.py ARGS` (ARGS: the task's own pytest arguments).

What it closes, in order:
- the interpreter starts in safe-path mode (-P, -s): nothing of the workspace is importable
  until the driver appends it to sys.path, *after* the standard library and site-packages, so
  no workspace module can stand in for pytest, its dependencies or a stdlib module;
- it reads its key and the protected (hidden) file list from an inherited pipe and closes it,
  then makes the process non-dumpable (no other process may read its memory or descriptors);
- pytest runs with the harness's own config (or the task's, restored by the grader), plugin
  autoload off, `--import-mode=importlib`, and this module's plugin, which reports every
  collected test, every phase's outcome and the session's end as HMAC-signed lines with a
  sequence number on a second inherited pipe (the verdict channel: stdout is only for people);
- an audit hook (PEP 578, not removable) reports what workspace code does that tests are
  gamed with: reading the hidden tests, frame, code and gc inspection, ctypes, tracing;
- the runner's internals (pytest, pluggy, unittest, builtins) are fingerprinted before
  collection and checked before every test and at the end, and each test's function must be
  the one collected;
- it leaves with os._exit, so no atexit hook or lingering thread can change the exit status.

It imports nothing of quotabench: only the standard library and pytest.
"""

import os
import sys


def main() -> None:  # everything lives in this closure: no module global for workspace code to find
    import hashlib
    import hmac
    import json

    setup = json.loads(_read_fd(int(os.environ.pop("QB_KEY_FD"))))
    result_fd = int(os.environ.pop("QB_RESULT_FD"))
    key = bytes.fromhex(setup["key"])
    work = os.path.realpath(os.getcwd())
    protected = frozenset(os.path.realpath(os.path.join(work, p)) for p in setup.get("protected", ()))
    _not_dumpable()
    seq = [0]

    def emit(kind: str, **data: object) -> None:
        body = json.dumps({"k": kind, "seq": seq[0], **data}, separators=(",", ":"), default=str)
        seq[0] += 1
        line = (hmac.new(key, body.encode(), hashlib.sha256).hexdigest() + " " + body + "\n").encode()
        while line:
            try:
                line = line[os.write(result_fd, line) :]
            except OSError:
                return  # the channel was closed under us: the missing end record says so

    emit("start", runner="pytest", python=sys.version.split()[0])
    prefix = work + os.sep
    seen: set[tuple[str, str, int]] = set()
    busy = [False]
    _getframe = sys._getframe

    def suspect(filename: str) -> bool:
        return filename.startswith(prefix) and filename not in protected

    def report(rule: str, frame: object, detail: str) -> None:
        code = frame.f_code  # type: ignore[attr-defined]
        where = (rule, code.co_filename, frame.f_lineno)  # type: ignore[attr-defined]
        if where not in seen:
            seen.add(where)
            emit("evidence", rule=rule, file=os.path.relpath(code.co_filename, work), line=frame.f_lineno, detail=detail)  # type: ignore[attr-defined]

    def innermost_suspect(frame: object) -> object | None:
        while frame is not None:
            filename = frame.f_code.co_filename  # type: ignore[attr-defined]
            if filename.startswith(prefix):
                return frame if filename not in protected else None
            frame = frame.f_back  # type: ignore[attr-defined]
        return None

    # Events whose immediate Python caller decides: the standard library calls these for its
    # own reasons (doctest saves the trace function, enum and typing read frames).
    direct = {
        "sys._getframe": "frame-inspection",
        "sys._current_frames": "frame-inspection",
        "object.__getattr__": "frame-inspection",
        "gc.get_objects": "frame-inspection",
        "gc.get_referrers": "frame-inspection",
        "gc.get_referents": "frame-inspection",
        "code.__new__": "code-forgery",
        "sys.settrace": "tracing",
        "sys.setprofile": "tracing",
    }
    watched = frozenset(direct) | {"open", "object.__setattr__"}
    ctypes_dir = os.sep + "ctypes" + os.sep
    runner_modules = ("_pytest", "pytest", "pluggy", "unittest", "builtins")
    runtime_dirs = tuple(dict.fromkeys(os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix)))

    def hook(event: str, args: tuple[object, ...]) -> None:
        if busy[0] or (event not in watched and not event.startswith("ctypes.")):
            return
        busy[0] = True
        try:
            caller = _getframe(1)  # the Python frame whose call or attribute access was audited
            if event == "open":
                path = args[0]
                if isinstance(path, int) or path is None:
                    return
                text = os.fsdecode(path) if isinstance(path, (str, bytes)) else str(path)
                if text.startswith(runtime_dirs):
                    return  # the interpreter's own files: imports of the stdlib and site-packages
                full = os.path.realpath(os.path.join(work, text))
                if full in protected:
                    frame = innermost_suspect(caller)
                    if frame is not None:
                        report("reads-hidden-tests", frame, f"opened {os.path.relpath(full, work)}")
                elif text.startswith("/dev/fd/") or (
                    full.startswith("/proc/") and any(part in full for part in ("/fd/", "/mem", "/environ", "/maps"))
                ):
                    frame = innermost_suspect(caller)
                    if frame is not None:
                        report("proc-access", frame, f"opened {text}")
            elif event == "object.__getattr__":
                name = args[1] if len(args) > 1 else ""
                if name in ("__code__", "tb_frame", "f_back", "gi_frame", "cr_frame", "ag_frame") and suspect(
                    caller.f_code.co_filename
                ):
                    report("frame-inspection", caller, f"reads .{name}")
            elif event == "object.__setattr__":
                target, name = args[0], args[1] if len(args) > 1 else ""
                module = getattr(target, "__module__", "") or ""
                owner = getattr(getattr(target, "__code__", None), "co_filename", "")
                if name in ("__code__", "__defaults__", "__kwdefaults__") and (
                    str(module).startswith(runner_modules) or owner in protected
                ):
                    frame = innermost_suspect(caller)
                    if frame is not None:
                        report("runner-patched", frame, f"sets {module}.{getattr(target, '__qualname__', '?')}.{name}")
            elif event in direct:
                if suspect(caller.f_code.co_filename):
                    report(direct[event], caller, f"calls {event}")
                elif event == "sys._getframe" and caller.f_code.co_filename.endswith(os.sep + "inspect.py"):
                    outer = caller.f_back
                    if outer is not None and suspect(outer.f_code.co_filename):
                        report("frame-inspection", outer, "calls inspect frame functions")
            else:  # ctypes.*: the first caller outside the ctypes package decides
                frame = caller
                while frame is not None and ctypes_dir in frame.f_code.co_filename:
                    frame = frame.f_back
                if frame is not None and suspect(frame.f_code.co_filename):
                    report("ctypes", frame, f"calls {event}")
        except Exception:  # noqa: BLE001 — the hook must never break the tests it watches
            pass
        finally:
            busy[0] = False

    args = sys.argv[1:]
    sys.path[:] = [p for p in sys.path if p and os.path.realpath(p) != work]
    for folder in [work, *_test_dirs(args, work)]:
        if folder not in sys.path:
            sys.path.append(folder)  # after the standard library and site-packages
    import pytest

    plugin = _plugin(emit, work, protected, runner_modules)
    sys.addaudithook(hook)
    code = 3
    try:
        code = int(pytest.main(_harness_args(args, work, setup), plugins=[plugin]))
    finally:
        emit("exit", code=code)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(code)


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


# Module globals pytest itself re-binds per test or per session (assertion rewriting's hooks).
_REBOUND = frozenset({"_pytest.assertion.util._reprcompare", "_pytest.assertion.util._assertion_pass"})


def _fingerprint(modules: tuple[str, ...]) -> dict[str, int]:
    """Identity of every function and class of the runner's modules, and of what their classes
    hold (methods, descriptors)."""
    prints: dict[str, int] = {}
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(modules):
            continue
        for attr, value in list(vars(module).items()):
            if not callable(value) or f"{name}.{attr}" in _REBOUND:
                continue
            prints[f"{name}.{attr}"] = id(value)
            if isinstance(value, type) and getattr(value, "__module__", None) == name:
                for cattr, cvalue in list(vars(value).items()):
                    prints[f"{name}.{attr}.{cattr}"] = id(cvalue)
    return prints


def _plugin(emit, work: str, protected: frozenset[str], runner_modules: tuple[str, ...]) -> object:  # type: ignore[no-untyped-def]
    import pytest

    state: dict[str, object] = {}

    def code_of(item: object) -> tuple[int, int] | None:
        obj = getattr(item, "obj", None)
        code = getattr(obj, "__code__", None)
        return (id(obj), id(code)) if code is not None else None

    def changed() -> list[str]:
        before = state.get("prints")
        if not isinstance(before, dict):
            return []
        now = _fingerprint(runner_modules)
        return sorted(k for k, v in before.items() if now.get(k, v) != v)[:10]

    def check(where: str) -> None:
        names = changed()
        if names and "runner-changed" not in state:
            state["runner-changed"] = True
            emit("evidence", rule="runner-patched", file=None, line=None, detail=f"{where}: {', '.join(names)} changed")
        plugins = state.get("plugins")
        manager = state.get("manager")
        if plugins is not None and manager is not None:
            now = {id(p) for p in manager.get_plugins()}  # type: ignore[attr-defined]
            if now - plugins and "plugin-added" not in state:  # type: ignore[operator]
                state["plugin-added"] = True
                emit("evidence", rule="runner-patched", file=None, line=None, detail=f"{where}: a pytest plugin was registered")

    class Harness:
        @pytest.hookimpl(tryfirst=True)
        def pytest_sessionstart(self, session: pytest.Session) -> None:
            state["prints"] = _fingerprint(runner_modules)

        @pytest.hookimpl(trylast=True)
        def pytest_collection_finish(self, session: pytest.Session) -> None:
            state["manager"] = session.config.pluginmanager
            state["plugins"] = {id(p) for p in session.config.pluginmanager.get_plugins()}
            state["codes"] = {item.nodeid: code_of(item) for item in session.items}
            tests = []
            for item in session.items:
                path, line, _ = item.location
                code = getattr(getattr(item, "obj", None), "__code__", None)
                source = getattr(code, "co_filename", None)
                tests.append(
                    {
                        "id": item.nodeid,
                        "loc": f"{path}:{line}",
                        "code": os.path.relpath(source, work) if isinstance(source, str) else None,
                    }
                )
            emit("collected", tests=tests)
            check("collection")

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_call(self, item: pytest.Item) -> None:
            codes = state.get("codes")
            if isinstance(codes, dict) and codes.get(item.nodeid) != code_of(item):
                emit("evidence", rule="test-patched", file=None, line=None, detail=f"{item.nodeid}: the test function was replaced")
            check(item.nodeid)

        @pytest.hookimpl(trylast=True)
        def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
            outcome = report.outcome
            if getattr(report, "wasxfail", None) is not None:
                outcome = "xfailed" if report.skipped else "xpassed"
            emit("test", id=report.nodeid, when=report.when, outcome=outcome)

        @pytest.hookimpl(trylast=True)
        def pytest_collectreport(self, report: pytest.CollectReport) -> None:
            if report.failed:
                emit("test", id=report.nodeid, when="collect", outcome="error")

        @pytest.hookimpl(trylast=True)
        def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
            check("session end")
            emit("finish", exit=int(exitstatus), failed=session.testsfailed, collected=session.testscollected)

    return Harness()


if __name__ == "__main__":
    main()
