"""What the pytest harness checks a run against (verifiers/harness/pytest_guard.py), outside the
sandbox: what a hidden module's source binds, names put into it or replaced, the code print,
and the equality probe's verdict on honest and gamed __eq__ methods."""

import math
import sys
import textwrap
from dataclasses import dataclass

from verifiers.harness import pytest_guard as guard


def _plan(tmp_path, source: str) -> guard.Plan:
    path = tmp_path / "test_hidden.py"
    path.write_text(textwrap.dedent(source))
    return guard.Plan(str(path))


def test_a_plan_is_what_the_source_binds_at_import(tmp_path):
    plan = _plan(
        tmp_path,
        """
        import math
        import os.path
        from datetime import timedelta as td
        from . import helpers
        try:
            import tomllib
        except ImportError:
            tomllib = None
        LIMIT = 3
        for i in range(2):
            pass

        def test_a():
            global counter
            counter = 1

        class TestB:
            pass
        """,
    )
    assert plan.bound >= {"math", "os", "td", "helpers", "tomllib", "LIMIT", "i", "test_a", "counter", "TestB"}
    assert plan.defined == {"test_a", "TestB"} and plan.rebound == {"counter"}
    assert plan.modules == {"math": "math", "os": "os", "tomllib": "tomllib"} and plan.taken == {
        "td": ("datetime", "timedelta")
    }
    assert plan.stdlib() == {"math", "os", "tomllib", "datetime"} and not plan.star


def test_names_put_into_a_hidden_module_or_replaced_are_found(tmp_path):
    plan = _plan(tmp_path, "import math\nfrom math import isclose\n\ndef check(a):\n    assert a\n")
    origin = {"builtins": sys.modules["builtins"], "math": math}

    def check(a):  # defined in this file, not the hidden one
        assert a

    honest = {"__builtins__": vars(sys.modules["builtins"]), "math": math, "isclose": math.isclose}
    assert guard.hidden_module_findings({**honest, "check": check}, plan, origin) == [
        f"check() was replaced by a function of {__file__}"
    ]
    injected = guard.hidden_module_findings({**honest, "all": lambda v: True}, plan, origin)
    assert injected == ["'all', which the module never binds, was put into it"]
    assert guard.hidden_module_findings({**honest, "math": object()}, plan, origin) == [
        "'math' is not the module math it imported"
    ]
    assert guard.hidden_module_findings({**honest, "isclose": print}, plan, origin) == [
        "'isclose' is not math.isclose as it imported it"
    ]
    assert guard.hidden_module_findings({**honest, "__builtins__": {}}, plan, origin) == ["__builtins__ was replaced"]
    star = _plan(tmp_path, "from mod import *\n")
    assert guard.hidden_module_findings({"add": 1, "__builtins__": sys.modules["builtins"]}, star, origin) == []


def test_the_code_print_is_stable_and_follows_the_code():
    def test_a():
        assert sum([1, 2]) == 3

    def test_b():
        assert sum([1, 2]) == 4

    assert guard.code_print(test_a.__code__) == guard.code_print(test_a.__code__)
    assert guard.code_print(test_a.__code__).startswith(f"test_a:{test_a.__code__.co_firstlineno}:")
    assert guard.code_print(test_a.__code__).split(":")[2] != guard.code_print(test_b.__code__).split(":")[2]
    assert guard.code_print(test_a.__code__.replace(co_consts=test_b.__code__.co_consts)) != guard.code_print(
        test_a.__code__
    )


class _SlotWrapper(int):
    __eq__ = int.__ne__  # type: ignore[assignment]
    __hash__ = int.__hash__


class _AnyNumber:
    def __init__(self, value: int) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (int, float))

    __hash__ = object.__hash__


@dataclass
class _Point:
    x: int


class _Cents(int):
    def __eq__(self, other: object) -> bool:
        return isinstance(other, int) and int(self) == int(other)

    __hash__ = int.__hash__


class _Named:
    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Named) and self.name.lower() == other.name.lower()

    __hash__ = object.__hash__


def test_the_equality_probe_tells_gamed_equality_from_honest():
    for gamed in (_SlotWrapper, _AnyNumber):
        assert guard._always_equal(gamed, vars(gamed)["__eq__"]), gamed
    for honest in (_Point, _Cents, _Named):
        assert not guard._always_equal(honest, vars(honest)["__eq__"]), honest
