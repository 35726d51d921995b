"""pytest plugin, copied next to the tests by equivalence.py: records every call from outside
the traced module into its functions and class methods (arguments before and after, the result
or exception type), repeats each module-level function call on neighbours of its arguments (noting which of the
module's functions those calls reached), and writes it all as `QBTRACE` lines to .qb-trace. Not imported by quotabench itself."""

from __future__ import annotations

import copy
import functools
import importlib
import inspect
import os
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any

_LINES: list[str] = []
_LIMIT = 4000
_VARIED = 2000  # calls whose arguments show longer than this are not varied (perf workloads)
_BUDGET = [400]  # variant calls left in this run
_VARIANT_S = 0.5
_INSIDE = [False]
_REACHED: set[str] = set()  # functions of the traced module that ran during variant calls
_OWN = [""]


class _VariantTimeout(Exception):
    pass


def _neighbours(value: object) -> list[object]:
    """Type-aware neighbours of one argument (EvalPlus-style input mutation)."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value - 1, 0, -value]
    if isinstance(value, float):
        return [value + 1, -value, 0.0]
    if isinstance(value, str):
        return ["", value[: len(value) // 2], value + " " + value, value.upper()]
    if isinstance(value, (list, tuple)):
        return [type(value)(), type(value)(value[: len(value) // 2]), type(value)(reversed(value))]
    return []


def _variants(args: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
    seen = {_show(args)}
    for i, value in enumerate(args):
        for other in _neighbours(value):
            changed = (*args[:i], other, *args[i + 1 :])
            if _show(changed) not in seen:
                seen.add(_show(changed))
                yield changed


def _on_alarm(signum: int, frame: object) -> None:
    raise _VariantTimeout


def _vary(name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Call fn on each neighbour of its arguments and record what it gives (time-boxed)."""
    if len(_show(args)) > _VARIED:
        return
    _INSIDE[0] = True
    old = signal.signal(signal.SIGALRM, _on_alarm)
    sys.setprofile(_profile)
    try:
        for changed in _variants(args):
            if _BUDGET[0] <= 0:
                return
            _BUDGET[0] -= 1
            signal.setitimer(signal.ITIMER_REAL, _VARIANT_S)
            try:
                shown = f"-> {_show(fn(*copy.deepcopy(changed), **copy.deepcopy(kwargs)))}"
            except _VariantTimeout:
                shown = "timed out"
            except BaseException as exc:  # noqa: BLE001 — what it raises is the behaviour recorded
                shown = f"raised {type(exc).__name__}"
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            _LINES.append(f"variant {name}{_show(changed)} {shown}")
    finally:
        sys.setprofile(None)
        signal.signal(signal.SIGALRM, old)
        _INSIDE[0] = False


def _profile(frame: Any, event: str, arg: object) -> None:
    if event == "call" and frame.f_code.co_filename == _OWN[0]:
        _REACHED.add(frame.f_code.co_name)


def _show(value: object) -> str:
    try:
        text = repr(value)
    except Exception as exc:  # noqa: BLE001 — a repr that raises is recorded as such
        text = f"<repr raised {type(exc).__name__}>"
    return text[:_LIMIT]


def _wrap(name: str, fn: Callable[..., Any], own_file: str, vary: bool) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _INSIDE[0] or os.path.abspath(sys._getframe(1).f_code.co_filename) == own_file:
            return fn(*args, **kwargs)  # the module calling itself, or a variant call: not recorded
        before = f"{_show(args)} {_show(kwargs)}"
        try:
            saved = copy.deepcopy((args, kwargs)) if vary else None
        except Exception:  # noqa: BLE001 — arguments that cannot be copied are not varied
            saved = None
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            _LINES.append(f"{name}{before} raised {type(exc).__name__} / {_show(args)}")
            raise
        finally:
            if saved is not None and threading_main():
                _vary(name, fn, *saved)
        _LINES.append(f"{name}{before} -> {_show(result)} / {_show(args)}")
        return result

    return wrapper


def threading_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _trace_module(path: str) -> None:
    name = path[:-3].replace("/", ".").removesuffix(".__init__")
    module = importlib.import_module(name)
    own = os.path.abspath(module.__file__ or path)
    _OWN[0] = module.__file__ or path
    for attr, value in list(vars(module).items()):
        if inspect.isfunction(value) and value.__module__ == module.__name__:
            setattr(module, attr, _wrap(attr, value, own, vary=True))
        elif inspect.isclass(value) and value.__module__ == module.__name__:
            for method, fn in list(vars(value).items()):
                if inspect.isfunction(fn) and method not in ("__repr__", "__str__", "__hash__"):
                    setattr(value, method, _wrap(f"{attr}.{method}", fn, own, vary=False))


def pytest_configure(config: Any) -> None:
    traced = os.environ.get("QB_TRACE", "")
    if traced:
        _trace_module(traced)


def pytest_unconfigure(config: Any) -> None:
    with open(".qb-trace", "a", encoding="utf-8") as out:
        out.writelines(f"QBTRACE {line.replace(chr(10), chr(92) + 'n')}\n" for line in _LINES)
        out.writelines(f"QBTRACE reached {name}\n" for name in sorted(_REACHED))
