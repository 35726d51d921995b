"""The hidden tests' Python sources, served from memory (the driver has them from its setup pipe):
on disk, at their places in the tree, the hidden test modules and conftests are empty (other
hidden files stay readable: the tests may read them). So a hidden test file read
by any other way than the import (a child process's `cat`, `os.open` with a `dir_fd`, a glob)
reads nothing, and the tests still run as written.

- pytest's assertion rewriter takes the source from here (`_rewrite_test`), never a cached pyc;
- every other hidden module (a helper the tests import, a hidden conftest) is found first by a
  finder at the front of `sys.meta_path`;
- linecache holds the sources, so tracebacks and pytest's failure reports still show the lines.

In this one process the sources stay reachable (linecache, the tests' code objects): reading
them there is no act the harness can stop, and the canaries judge what a reader does with them.
"""

from typing import Any


def serve(sources: dict[str, bytes]) -> None:
    """`sources`: the hidden .py files' real paths -> their contents."""
    import ast
    import importlib.util
    import inspect
    import linecache
    import os
    import sys

    from _pytest.assertion import rewrite

    for path, data in sources.items():
        text = data.decode("utf-8", "replace")
        linecache.cache[path] = (len(data), None, text.splitlines(True), path)  # no mtime: never re-read
        # A failure's report reads its lines through inspect.findsource, whose first call
        # resolves the path of every loaded module to find the frame's; for a hidden file the
        # answer is linecache, so it is given (a module of that name does not exist).
        inspect.modulesbyfile.setdefault(path, "<hidden test source>")

    original_rewrite, original_read_pyc = rewrite._rewrite_test, rewrite._read_pyc

    def rewrite_test(fn: Any, config: Any, _s: Any = (sources, original_rewrite, os, ast, rewrite)) -> Any:
        served, fallback, os_, ast_, module = _s
        path = os_.path.realpath(str(fn))
        if path not in served:
            return fallback(fn, config)
        source = served[path]
        tree = ast_.parse(source, filename=str(fn))
        module.rewrite_asserts(tree, source, str(fn), config)
        return os_.stat(fn), compile(tree, str(fn), "exec", dont_inherit=True)

    def read_pyc(source: Any, pyc: Any, trace: Any = None, _s: Any = (sources, original_read_pyc, os)) -> Any:
        served, fallback, os_ = _s
        if os_.path.realpath(str(source)) in served:
            return None  # a pyc in the tree is the workspace's: the hidden source is compiled here
        return fallback(source, pyc, trace) if trace is not None else fallback(source, pyc)

    rewrite._rewrite_test = rewrite_test
    rewrite._read_pyc = read_pyc

    class Loader:
        def create_module(self, spec: Any) -> None:
            return None

        def exec_module(self, module: Any, _s: Any = (sources, compile, exec)) -> None:
            served, compile_, exec_ = _s
            path = module.__spec__.origin
            exec_(compile_(served[path], path, "exec", dont_inherit=True), module.__dict__)

    loader = Loader()

    class Finder:
        def find_spec(
            self,
            name: str,
            path: Any = None,
            target: Any = None,
            _s: Any = (sources, os, importlib.util, sys, loader),
        ) -> Any:
            served, os_, util, sys_, loader = _s
            leaf = name.rpartition(".")[2]
            for folder in path if path is not None else sys_.path:
                if not isinstance(folder, str):
                    continue
                base = os_.path.realpath(os_.path.join(folder or ".", leaf))
                if base + ".py" in served:
                    return util.spec_from_file_location(name, base + ".py", loader=loader)
                init = os_.path.join(base, "__init__.py")
                if init in served:
                    return util.spec_from_file_location(name, init, loader=loader, submodule_search_locations=[base])
            return None

    sys.meta_path.insert(0, Finder())


def parse_once() -> None:
    """pytest finds a failure's statement by parsing the whole file and walking its tree, twice
    per failure (`getstatementrange_ast`): with a few canaries failing in every grade, that was
    most of what grading cost over the bare command. Here each source is parsed, and its
    statements' lines listed, once per run; the reports read the same. Left as it is when
    pytest's internals are not the ones this was written against."""
    import ast
    import bisect
    import warnings

    try:
        from _pytest._code import code, source
    except ImportError:
        return
    original = getattr(source, "getstatementrange_ast", None)
    if original is None or getattr(code, "getstatementrange_ast", None) is not original:
        return
    if not callable(getattr(source, "get_statement_startend2", None)):
        return
    trees: dict[str, Any] = {}
    starts: dict[int, tuple[Any, list[int]]] = {}

    def getstatementrange_ast(
        lineno: int, text: Any, assertion: bool = False, astnode: Any = None, _s: Any = (trees, original)
    ) -> Any:
        known, fallback = _s
        if astnode is None:
            content = "\n".join(text.lines)
            astnode = known.get(content)
            if astnode is None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    astnode = ast.parse(content, "source", "exec")  # a SyntaxError goes up, as before
                known[content] = astnode
        return fallback(lineno, text, assertion, astnode)

    def get_statement_startend2(lineno: int, node: Any, _s: Any = starts) -> tuple[int, int | None]:
        held = _s.get(id(node))
        if held is None or held[0] is not node:
            values: list[int] = []
            for x in ast.walk(node):  # pytest's own listing (_pytest/_code/source.py)
                if isinstance(x, (ast.stmt, ast.ExceptHandler)):
                    if isinstance(x, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                        values.extend(d.lineno - 1 for d in x.decorator_list)
                    values.append(x.lineno - 1)
                    for name in ("finalbody", "orelse"):
                        val = getattr(x, name, None)
                        if val:
                            values.append(val[0].lineno - 1 - 1)
            values.sort()
            held = _s[id(node)] = (node, values)  # the node is kept: its id is never reused
        values = held[1]
        at = bisect.bisect_right(values, lineno)
        return values[at - 1], values[at] if at < len(values) else None

    for module, name, replacement in (
        (source, "getstatementrange_ast", getstatementrange_ast),
        (code, "getstatementrange_ast", getstatementrange_ast),  # its own name for it
        (source, "get_statement_startend2", get_statement_startend2),
    ):
        setattr(module, name, replacement)
