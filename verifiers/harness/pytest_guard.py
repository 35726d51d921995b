"""What the pytest driver's plugin checks the run against (pytest_plugin.py): fingerprints of the
runner's internals and of what the hidden tests use as oracles, the hidden modules' own names,
a stable print of a test function's code, and a probe of the workspace's equality methods.

Everything here runs before any workspace code, or only compares identities later: it calls no
method of an object a workspace made (the equality probe, which must, runs on a thread of its
own, with nothing of the harness on its stack).
"""

import ast
import os
import sys
from collections.abc import Callable
from types import CodeType, FunctionType, ModuleType
from typing import Any

Print = tuple[Any, str, str, Any]  # (live namespace, name, label, the object it held)

# Module globals pytest itself re-binds per test or per session (assertion rewriting's hooks,
# warnings capture, the thread exception hook).
REBOUND = frozenset(
    {
        "_pytest.assertion.util._reprcompare",
        "_pytest.assertion.util._assertion_pass",
        "warnings.showwarning",
        "warnings._showwarnmsg",
        "threading.excepthook",
    }
)
# Standard-library modules a hidden test may import whose state pytest itself changes per test.
NOT_ORACLES = frozenset({"sys", "builtins", "__future__", "gc", "faulthandler"})
PAIRS = ((0, 1), (-7, 12), ("a", "b"), (0.5, 2.5), ((), (1,)), (None, False))


def fingerprint(
    modules: tuple[str, ...],
    exact: bool = False,
    rebound: frozenset[str] = REBOUND,
    loaded: dict[str, Any] = sys.modules,
    _vars: Callable[[Any], Any] = vars,
    _callable: Callable[[Any], bool] = callable,
    _list: Any = list,
    _isinstance: Callable[[Any, Any], bool] = isinstance,
    _getattr: Callable[..., Any] = getattr,
    _type: type = type,
) -> list[Print]:
    """Every function and class of the named modules (or those under them), what their classes
    hold, and the modules' own places in sys.modules; each entry is one identity test."""
    prints: list[Print] = []
    for name, module in _list(loaded.items()):
        if module is None or not (name in modules if exact else name.startswith(modules)):
            continue
        prints.append((loaded, name, f"sys.modules[{name!r}]", module))
        space = _vars(module)
        for attr, value in _list(space.items()):
            if not _callable(value) or f"{name}.{attr}" in rebound:
                continue
            prints.append((space, attr, f"{name}.{attr}", value))
            if _isinstance(value, _type) and _getattr(value, "__module__", None) == name:
                inner = _vars(value)
                prints.extend((inner, c, f"{name}.{attr}.{c}", v) for c, v in _list(inner.items()))
    return prints


def changed(prints: list[Print], limit: int = 10, _missing: object = object(), _len: Any = len) -> list[str]:
    found = []
    for space, key, label, value in prints:
        if space.get(key, _missing) is not value:
            found.append(label)
            if _len(found) >= limit:
                break
    return found


def code_print(
    code: CodeType, _code: type = CodeType, _kind: type = type, _repr: Any = repr, _sorted: Any = sorted
) -> str:
    """A test function's code, the same in every run of the same hidden file: its name, first
    line and a hash of its bytecode, names and constants (nested code included)."""
    import _hashlib

    parts: list[bytes] = []
    stack = [code]
    while stack:
        current = stack.pop()
        parts += [current.co_code, "\0".join(current.co_names).encode()]
        for const in current.co_consts:
            if _kind(const) is _code:
                stack.append(const)
            elif _kind(const) is frozenset:
                parts.append(_repr(_sorted(_repr(c) for c in const)).encode())
            else:
                parts.append(_repr(const).encode())
    digest = _hashlib.openssl_sha256(b"\1".join(parts)).hexdigest()[:16]
    return f"{code.co_name}:{code.co_firstlineno}:{digest}"


class Plan:
    """What a hidden module's own source binds at its top level (read before it runs)."""

    def __init__(self, path: str, source: bytes | None = None) -> None:
        if source is None:
            with open(path, "rb") as fh:
                source = fh.read()
        tree = ast.parse(source, path)
        self.path = path
        self.bound: set[str] = set()
        self.defined: set[str] = set()  # def and class statements
        self.modules: dict[str, str] = {}  # name -> module it is bound to (`import a.b as c`)
        self.taken: dict[str, tuple[str, str]] = {}  # name -> (module, attribute) (`from a import b`)
        self.rebound: set[str] = set()  # names its functions declare `global` (they may change)
        self.assigned_attrs = False  # it sets attributes of other modules at import
        self.star = False  # `from a import *`: it binds names its source does not list
        for node in _top_level(tree.body):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    name = alias.asname or alias.name.split(".")[0]
                    self.modules[name] = alias.name if alias.asname else alias.name.split(".")[0]
                    self.bound.add(name)
            elif isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
                self.star = True
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if node.level == 0 and node.module:
                        self.taken[alias.asname or alias.name] = (node.module, alias.name)
                    self.bound.add(alias.asname or alias.name)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.defined.add(node.name)
            for target in _targets(node):
                if isinstance(target, ast.Name):
                    self.bound.add(target.id)
                elif isinstance(target, ast.Attribute):
                    self.assigned_attrs = True
        self.bound |= self.defined
        for found in ast.walk(tree):
            if isinstance(found, ast.Global):
                self.rebound.update(found.names)
        self.bound |= self.rebound

    def stdlib(self) -> set[str]:
        used = {*self.modules.values(), *(m for m, _ in self.taken.values())}
        return {m for m in used if m.split(".")[0] in sys.stdlib_module_names and m.split(".")[0] not in NOT_ORACLES}


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """Statements that run at import: the body, and the bodies of top-level if/try/with/for."""
    out: list[ast.stmt] = []
    for node in body:
        out.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for field in ("body", "orelse", "finalbody"):
                out += _top_level(getattr(node, field, []) or [])
            for handler in getattr(node, "handlers", []) or []:
                out += _top_level(handler.body)
    return out


def _targets(node: ast.stmt) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        found = [t for target in node.targets for t in ast.walk(target)]
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        found = list(ast.walk(node.target))
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        found = [t for item in node.items if item.optional_vars for t in ast.walk(item.optional_vars)]
    else:
        return []
    return [t for t in found if isinstance(t, (ast.Name, ast.Attribute))]


def oracle_baseline(plans: list[Plan]) -> list[Print]:
    """Import what the hidden tests take from the standard library now (before any workspace
    code) and fingerprint it."""
    names: set[str] = set()
    for plan in plans:
        if plan.assigned_attrs:
            continue  # the tests themselves set attributes of modules at import: not checkable
        for module in plan.stdlib():
            try:
                __import__(module)
                names.add(module)
            except Exception:  # noqa: BLE001 — a module this interpreter lacks: the test will say so
                pass
    return fingerprint(tuple(sorted(names)), exact=True)


def hidden_module_findings(
    space: dict[str, Any],
    plan: Plan,
    origin: dict[str, Any],
    _list: Any = list,
    _type: type = type,
    _vars: Any = vars,
    _repr: Any = repr,
) -> list[str]:
    """Names in a hidden module's namespace its own source did not put there, or not as it did:
    `origin` maps a standard-library module name to the module as it was before the workspace ran."""
    found = []
    builtins_module = origin["builtins"]
    for name, value in _list(space.items()):
        if _type(name) is not str:
            found.append("a name that is not a string was put into it")
        elif name.startswith(("__", "@py", "@pytest")):
            if name == "__builtins__" and value is not builtins_module and value is not _vars(builtins_module):
                found.append("__builtins__ was replaced")
        elif name not in plan.bound and not plan.star:
            found.append(f"{_repr(name)}, which the module never binds, was put into it")
        elif name in plan.defined and _type(value) is FunctionType and value.__code__.co_filename != plan.path:
            found.append(f"{name}() was replaced by a function of {value.__code__.co_filename}")
        elif name in plan.modules and plan.modules[name] in origin and value is not origin[plan.modules[name]]:
            found.append(f"{_repr(name)} is not the module {plan.modules[name]} it imported")
        elif name in plan.taken and plan.taken[name][0] in origin:
            module, attr = plan.taken[name]
            if value is not _vars(origin[module]).get(attr, value):
                found.append(f"{_repr(name)} is not {module}.{attr} as it imported it")
    return found


def namespace_prints(space: dict[str, Any], plan: Plan, label: str, _list: Any = list) -> list[Print]:
    """Every name of a hidden module's namespace but those its functions rebind (and names the
    interpreter adds, like __warningregistry__), with __builtins__."""
    return [
        (space, n, f"{label}.{n}", v)
        for n, v in _list(space.items())
        if n not in plan.rebound and (not n.startswith("__") or n == "__builtins__")
    ]


def own_names(space: dict[str, Any], plan: Plan, _set: Any = set) -> set[str]:
    names: set[str] = _set(n for n in space if not n.startswith("__") and n not in plan.rebound)
    return names


def equality_probe(
    work: str, protected: frozenset[str], emit: Any, flagged: frozenset[tuple[Any, ...]]
) -> list[tuple[Any, ...]]:
    """Classes of the workspace whose own __eq__ says "equal" whatever it is given: to two objects
    it has never seen, or, for an instance made without arguments, to two different values of one
    type. Each is written as evidence as soon as it is found. Runs the workspace's code: call it
    on a thread with nothing of the harness's below it."""
    prefix = work + os.sep
    found: list[tuple[Any, ...]] = []
    seen: set[int] = set()
    stack: list[type] = [object]
    while stack:
        cls = stack.pop()
        if id(cls) in seen:
            continue
        seen.add(id(cls))
        try:
            stack.extend(type.__subclasses__(cls))
        except TypeError:
            stack.extend(type.__subclasses__(type) if cls is type else [])
        module = sys.modules.get(cls.__dict__.get("__module__") or "")
        source = vars(module).get("__file__") if type(module) is ModuleType else None
        if not (type(source) is str and source.startswith(prefix) and source not in protected):
            continue
        eq = cls.__dict__.get("__eq__")
        if eq is None or not callable(eq) or not _always_equal(cls, eq):
            continue
        line = getattr(getattr(eq, "__code__", None), "co_firstlineno", None)
        where = (source[len(prefix) :], line if type(line) is int else None)
        if where not in flagged:
            qualname = type.__dict__["__qualname__"].__get__(cls)
            emit(
                "evidence",
                rule="const-equality",
                file=where[0],
                line=where[1],
                detail=f"{qualname}.__eq__ says equal to anything",
                act=False,  # a probe's answer, not something the code did: the canaries decide
            )
            found.append(where)
    return found


def _always_equal(cls: type, eq: Callable[[Any, Any], Any]) -> bool:
    def says_equal(left: Any, right: Any) -> bool:
        answer = eq(left, right)
        return answer is not NotImplemented and bool(answer)

    try:
        if says_equal(object(), object()):
            return True
    except BaseException:  # noqa: BLE001 — an __eq__ that looks at its arguments fails on these
        pass
    try:
        make: Any = cls.__new__
        instance = make(cls)
    except BaseException:  # noqa: BLE001 — it needs arguments: nothing more to try
        return False
    for first, second in PAIRS:
        try:
            if says_equal(instance, first) and says_equal(instance, second):
                return True
        except BaseException:  # noqa: BLE001
            continue
    return False
