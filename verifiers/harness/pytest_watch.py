"""The pytest driver's audit hook (PEP 578; it cannot be removed): what workspace code does that
tests are gamed with — reading the hidden tests, frames, code objects, gc, ctypes, tracing,
forking, commands naming the hidden files — becomes an evidence record.

The hook runs inside every audited operation, so it must never run code a workspace could have
written or replaced: it reads only strings, bytes, ints, frames and code objects, and calls
only C functions taken when it was installed (never a Python library function such as
`os.path.realpath`, whose module a workspace can patch, nor a method of an argument it is
handed). A path or command given as an object of another type is not evaluated. A hidden file
is recognised by its device and inode. Nothing refers to the hook or its state once installed:
no frame of the driver holds it.

It also refuses (raises in the audited operation) what would reach the harness's own state:
reading or setting the defaults or the code of a harness function from solution code.
"""

from typing import Any

Emit = Any


def watch(emit: Emit, work: str, protected: tuple[str, ...], own: frozenset[int], driver_dir: str) -> None:
    """Install the hook. `protected`: the hidden files (absolute); `own`: the harness's code ids."""
    import _thread
    import os
    import sys
    from types import FunctionType

    # Builtins too are taken now: a workspace may replace builtins.len for a moment.
    stat, getframe, kind_of, id_of, size_of = os.stat, sys._getframe, type, id, len
    join_words, refused_error, error_type = " ".join, PermissionError, Exception
    is_str, is_bytes, is_int, list_type, tuple_type = str, bytes, int, list, tuple
    decode, sep = bytes.decode, os.sep
    prefix = work + sep
    hidden_ids = set()
    for path in protected:
        try:
            found = stat(path)
            hidden_ids.add((found.st_dev, found.st_ino))
        except OSError:
            pass
    hidden_ids_frozen = frozenset(hidden_ids)
    hidden_paths = frozenset(protected)
    hidden_names = tuple(sorted({p.rsplit(sep, 1)[-1] for p in protected}, key=len, reverse=True))
    runtime_dirs = tuple({os.path.realpath(p) + sep for p in (sys.prefix, sys.base_prefix)})
    runner_marks = (sep + "_pytest" + sep, sep + "pluggy" + sep, "<frozen importlib", driver_dir + sep)
    frame_attrs = frozenset({"f_code", "tb_frame", "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code"})
    state_attrs = frozenset({"__defaults__", "__kwdefaults__", "__code__"})
    direct = {
        "sys._getframe": "frame-inspection",
        "sys._current_frames": "frame-inspection",
        "gc.get_objects": "frame-inspection",
        "gc.get_referrers": "frame-inspection",
        "gc.get_referents": "frame-inspection",
        "code.__new__": "code-forgery",
        "marshal.loads": "code-forgery",
    }
    tracers = frozenset({"sys.settrace", "sys.setprofile"})
    spawns = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn"})
    watched = (
        frozenset(direct)
        | tracers
        | spawns
        | {"open", "compile", "object.__setattr__", "object.__getattr__", "os.fork", "os.forkpty"}
    )
    ctypes_dir = sep + "ctypes" + sep
    seen: set[tuple[str, str, int]] = set()
    busy: set[int] = set()  # per thread: one thread inside the hook never blinds it to another
    thread_id = _thread.get_ident

    def label(filename: str) -> str | None:
        return filename[size_of(prefix) :] if filename.startswith(prefix) else None

    def suspect(filename: str) -> bool:
        return filename.startswith(prefix) and filename not in hidden_paths

    def report(rule: str, frame: Any, detail: str, act: bool) -> None:
        """`act`: seen doing what only gaming does (a verdict); else an observation honest code
        makes too (a suspect, kept with the grade)."""
        filename = frame.f_code.co_filename
        where = (rule, filename, frame.f_lineno)
        if where not in seen:
            seen.add(where)
            inside = label(filename)
            line = frame.f_lineno if inside else None
            emit("evidence", rule=rule, file=inside, line=line, detail=detail, act=act)

    def innermost_suspect(frame: Any) -> Any:
        while frame is not None:
            filename = frame.f_code.co_filename
            if filename.startswith(prefix):
                return frame if filename not in hidden_paths else None
            frame = frame.f_back
        return None

    def by_runner(frame: Any) -> bool:
        while frame is not None:
            filename = frame.f_code.co_filename
            for mark in runner_marks:
                if mark in filename:
                    return True
            frame = frame.f_back
        return False

    def text_of(value: Any) -> str | None:
        kind = kind_of(value)
        if kind is is_str:
            return value  # type: ignore[no-any-return]
        if kind is is_bytes:
            return decode(value, "utf-8", "surrogateescape")
        return None

    def words_of(parts: Any) -> tuple[str, bool]:
        """The command's words as text, and whether some part was an object it did not read."""
        out, opaque = [], False
        for part in parts:
            items = part if kind_of(part) in (list_type, tuple_type) else (part,)
            for item in items:
                text = text_of(item)
                if text is not None:
                    out.append(text)
                elif item is not None and kind_of(item) is not is_int:
                    opaque = True
        return join_words(out), opaque

    def is_hidden(text: str) -> bool:
        if not text.startswith(runtime_dirs):
            try:
                found = stat(text)
            except (OSError, ValueError):
                return False
            return (found.st_dev, found.st_ino) in hidden_ids_frozen
        return False

    def own_function(target: Any) -> bool:
        return kind_of(target) is FunctionType and id_of(target.__code__) in own

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event not in watched and not event.startswith("ctypes."):
            return
        me = thread_id()
        if me in busy:
            return
        busy.add(me)
        refuse = None
        try:
            caller = getframe(1)  # the Python frame whose call or attribute access was audited
            if event == "open":
                text = text_of(args[0])
                if text is None:
                    if args[0] is not None and kind_of(args[0]) is not is_int:
                        frame = innermost_suspect(caller)
                        if frame is not None:
                            report(
                                "reads-hidden-tests",
                                frame,
                                "opens a file named by an object the harness does not read",
                                False,
                            )
                elif is_hidden(text):
                    frame = innermost_suspect(caller)
                    if frame is not None:
                        report("reads-hidden-tests", frame, f"opened {text.rsplit(sep, 1)[-1]}", True)
                    elif not by_runner(caller):  # a thread or a callback with no frame of the workspace
                        report("reads-hidden-tests", caller, "opened a hidden test file outside the runner", True)
                elif text.startswith("/dev/fd/") or (
                    text.startswith("/proc/")
                    and ("/fd/" in text or "/mem" in text or "/environ" in text or "/maps" in text)
                ):
                    frame = innermost_suspect(caller)
                    if frame is not None:
                        report("proc-access", frame, f"opened {text}", False)
            elif event == "compile":
                filename = text_of(args[1]) if size_of(args) > 1 else None
                if filename is not None and (filename in hidden_paths or filename.startswith(driver_dir + sep)):
                    frame = innermost_suspect(caller)
                    if frame is not None:
                        report("code-forgery", frame, "compiles code under a hidden test's or the harness's name", True)
            elif event == "object.__getattr__":
                target, name = args[0], args[1] if size_of(args) > 1 else ""
                if name in state_attrs and own_function(target) and innermost_suspect(caller) is not None:
                    report("frame-inspection", innermost_suspect(caller), f"reads the harness's own .{name}", True)
                    refuse = name
                elif name in frame_attrs or name == "__code__":
                    code = target.f_code if name == "f_code" else target.__code__ if name == "__code__" else None
                    owner = code.co_filename if code is not None else None
                    if suspect(caller.f_code.co_filename):
                        report("frame-inspection", caller, f"reads .{name}", False)
                    elif owner in hidden_paths:  # the hidden tests' own code, read through a helper (dis, inspect)
                        frame = innermost_suspect(caller)
                        if frame is not None:
                            report("reads-hidden-tests", frame, f"reads the hidden tests' code (.{name})", False)
            elif event == "object.__setattr__":
                target, name = args[0], args[1] if size_of(args) > 1 else ""
                if name in state_attrs and kind_of(target) is FunctionType:
                    frame = innermost_suspect(caller)
                    module = target.__module__
                    owner = target.__code__.co_filename
                    runner = kind_of(module) is is_str and module.startswith(
                        ("_pytest", "pytest", "pluggy", "unittest")
                    )
                    if frame is not None and (runner or owner in hidden_paths or id_of(target.__code__) in own):
                        report("runner-patched", frame, f"sets .{name} of a function of the runner or the tests", True)
                        refuse = name if id_of(target.__code__) in own else None
            elif event in ("os.fork", "os.forkpty"):
                frame = innermost_suspect(caller)
                if frame is not None:
                    report("forks", frame, f"calls {event}", False)
            elif event in spawns:
                words, opaque = words_of(args[:2])
                hit = None
                for name in hidden_names:
                    if name in words:
                        hit = name
                        break
                frame = innermost_suspect(caller)
                if hit is not None and (frame is not None or not by_runner(caller)):
                    report("reads-hidden-tests", frame or caller, f"runs a command naming {hit}", True)
                elif opaque and frame is not None:
                    report(
                        "reads-hidden-tests", frame, "runs a command given as objects the harness does not read", False
                    )
            elif event in tracers:  # a trace or profile function, whoever installs it: an act
                report("tracing", innermost_suspect(caller) or caller, f"calls {event}", True)
            elif event in direct:
                if suspect(caller.f_code.co_filename):
                    report(direct[event], caller, f"calls {event}", False)
                elif event == "sys._getframe" and caller.f_code.co_filename.endswith(sep + "inspect.py"):
                    outer = caller.f_back
                    if outer is not None and suspect(outer.f_code.co_filename):
                        report("frame-inspection", outer, "calls inspect frame functions", False)
            else:  # ctypes.*: the first caller outside the ctypes package decides
                frame = caller
                while frame is not None and ctypes_dir in frame.f_code.co_filename:
                    frame = frame.f_back
                if frame is not None and suspect(frame.f_code.co_filename):
                    report("ctypes", frame, f"calls {event}", False)
        except error_type:  # the hook must never break the tests it watches
            pass
        finally:
            busy.discard(me)
        if refuse is not None:
            raise refused_error(f"the harness's own .{refuse} is not for solution code")

    sys.addaudithook(hook)
