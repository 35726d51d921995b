"""Likely-equivalent mutants: survivors that behave like the alternate solution on every input the
visible and hidden tests give the changed file.

The check records, at the changed file's boundary, every call the tests (or other files) make
into it — the function, its arguments before and after the call, and what it returned or the
kind of exception it raised — while the hidden and then the visible tests run in the sandbox,
once on workspace + alternate and once on workspace + reference + mutant. Each call to a
module-level function is then repeated on type-aware neighbours of its arguments (EvalPlus's
input mutation: integers ±1, 0 and negated; strings emptied, halved, doubled, upper-cased;
lists emptied, halved, reversed; booleans flipped), so the comparison reaches past the inputs
the tests chose. The mutant is likely equivalent only when

  - the two records are the same multiset (calls in any order, memory addresses blanked), and
  - the function the mutation sits in was called and varied in them, or (Python) ran during the
    varied calls of the mutant: a mutant in code the tests never reach, or that the neighbour
    inputs never reach, is never excused.

Any difference — a value no test asserted on, an argument changed in place, another exception
type, a neighbour input where the mutant and the alternate part — keeps it a survivor.
Exception messages are not compared (two right solutions word them differently), nor what a
call does besides returning (files written, output printed): hence *likely* equivalent.

Where calls are recorded: Python (a pytest plugin wraps the module's functions and class
methods) and JavaScript / TypeScript (the changed module is replaced by a proxy re-exporting it
with every exported function wrapped; promises are recorded when they settle, and not varied).
Rust and shell are not recorded: no survivor there is judged equivalent, every one counts.
Without an alternate/ there is nothing to compare with, and no survivor is judged equivalent.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tree_sitter import Node

from verifiers.mechanics import grammar_for, parse
from verifiers.mutants.generate import Mutant, overlay
from verifiers.sandbox import Sandbox, limits_for
from verifiers.scratch import remove, scratch_dir
from verifiers.tasks import Task, copy_with_overlays

HERE = Path(__file__).resolve().parent
TRACE_FILE = ".qb-trace"
_PYTEST = re.compile(r"\bpytest\b")
_NODE_TEST = re.compile(r"^(node|tsx)\s+--test\b")
_JS_GRAMMARS = ("javascript", "typescript")


def traceable(task: Task, mutant: Mutant) -> bool:
    """Whether calls into the mutant's file can be recorded for this task at all."""
    if task.alternate is None:
        return False
    grammar = grammar_for(mutant.file)
    commands = (task.hidden_cmd, task.visible_cmd)
    if not mutant.function:
        return False
    if grammar == "python":
        return all(_PYTEST.search(c) for c in commands)
    if grammar in _JS_GRAMMARS:
        return all(_NODE_TEST.match(c) for c in commands) and bool(_exports(mutant.source, grammar))
    return False


def _python_command(command: str, traced: str) -> str:
    plugin = "-p qb_trace -p no:cacheprovider --basetemp=/tmp/qb-basetemp"
    return f"QB_TRACE={shlex.quote(traced)} " + _PYTEST.sub(f"pytest {plugin}", command, count=1)


def _exports(source: bytes, grammar: str) -> list[str]:
    """Names of the functions (and consts) a JS/TS module exports by name, and 'default'."""
    names: list[str] = []
    root = parse(source, grammar).root_node
    for node in root.named_children:
        if node.type != "export_statement":
            continue
        if any(c.type == "default" for c in node.children):
            names.append("default")
            continue
        declaration = node.child_by_field_name("declaration")
        if declaration is not None:
            names += _declared(declaration)
        for clause in (c for c in node.named_children if c.type == "export_clause"):
            for spec in clause.named_children:
                alias = spec.child_by_field_name("alias") or spec.child_by_field_name("name")
                if alias is not None and alias.text:
                    names.append(alias.text.decode())
    return [n for n in dict.fromkeys(names) if n]


def _declared(node: Node) -> list[str]:
    if node.type in ("function_declaration", "generator_function_declaration"):
        name = node.child_by_field_name("name")
        return [name.text.decode()] if name is not None and name.text else []
    if node.type in ("lexical_declaration", "variable_declaration"):
        found = []
        for declarator in node.named_children:
            name = declarator.child_by_field_name("name")
            if declarator.type == "variable_declarator" and name is not None and name.type == "identifier":
                found.append((name.text or b"").decode())
        return found
    return []  # classes, types and interfaces pass through `export *` unwrapped


def _proxy(file: str, names: list[str]) -> tuple[str, str]:
    """(where the real module goes, the proxy module's text) for a JS/TS file."""
    path = Path(file)
    impl = path.with_name(f"{path.stem}.qbimpl{path.suffix}")
    target = f"./{impl.name}"
    lines = [
        f"import * as impl from {target!r};",
        "import { qbWrap } from './qb_trace.mjs';",
        f"export * from {target!r};",
    ]
    for name in names:
        if name == "default":
            lines.append("export default qbWrap('default', impl.default);")
        else:
            lines.append(f"export const {name} = qbWrap({name!r}, impl[{name!r}]);")
    return str(impl), "\n".join(lines) + "\n"


def _stage(task: Task, layers: list[Path | None], file: str, dest: Path) -> tuple[Path, str]:
    """Workspace + layers at dest with the recorder in place; returns (dest, command)."""
    copy_with_overlays(task.workspace, dest, *layers)
    grammar = grammar_for(file)
    tail = f"; cat {TRACE_FILE} 2>/dev/null"
    if grammar == "python":
        (dest / "qb_trace.py").write_bytes((HERE / "qb_trace.py").read_bytes())
        commands = [_python_command(c, file) for c in (task.hidden_cmd, task.visible_cmd)]
        return dest, " ; ".join(commands) + tail
    source = (dest / file).read_bytes()
    impl, proxy = _proxy(file, _exports(source, grammar or "javascript"))
    (dest / impl).write_bytes(source)
    (dest / file).write_text(proxy)
    (dest / Path(file).parent / "qb_trace.mjs").write_bytes((HERE / "qb_trace.mjs").read_bytes())
    return dest, f"{task.hidden_cmd} ; {task.visible_cmd}" + tail


_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")


def _record(output: str) -> list[str]:
    lines = [
        _ADDRESS.sub("0x?", line[len("QBTRACE ") :]) for line in output.splitlines() if line.startswith("QBTRACE ")
    ]
    return sorted(lines)


def trace(sandbox: Sandbox, task: Task, layers: list[Path | None], file: str) -> list[str]:
    """The sorted calls into `file` while the hidden and visible tests run on workspace + layers."""
    scratch = scratch_dir(f"trace-{task.id}")
    try:
        staged, command = _stage(task, layers, file, scratch / "work")
        limits = limits_for(task.language, task.timeout_s * 2, task.memory_mb)
        result = sandbox.run(command, staged, limits, task.hidden)
        return [] if result.timed_out else _record(result.output)
    finally:
        remove(scratch)


def likely_equivalent(sandbox: Sandbox, task: Task, mutant: Mutant, alternate_trace: list[str] | None) -> bool:
    """The mutant's calls match the alternate's (given, or recorded now) and are not empty."""
    if not traceable(task, mutant):
        return False
    if alternate_trace is None:
        alternate_trace = trace(sandbox, task, [task.alternate], mutant.file)
    scratch = scratch_dir(f"equiv-{task.id}")
    try:
        folder = overlay(task, mutant, scratch / "overlay")
        mine = trace(sandbox, task, [folder], mutant.file)
    finally:
        remove(scratch)
    if _calls(mine) != _calls(alternate_trace):
        return False
    varied = f"variant {mutant.function}"
    return any(line.startswith(varied) for line in alternate_trace) or f"reached {mutant.function}" in mine


def _calls(record: list[str]) -> list[str]:
    """The recorded calls, without the note of which functions the variants reached."""
    return [line for line in record if not line.startswith("reached ")]
