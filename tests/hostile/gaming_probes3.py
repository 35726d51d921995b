"""A third red-team pass: gaming answers that keep the wrong `add` (`a - b`) and try one more way
to make the grader say pass, in all five languages. The first group builds the tricks of an
issue against the grader (each as faithfully as it could be built); the second (`# own:` below)
is this pass's own, held out: none of gaming.py, gaming_probes.py or gaming_probes2.py tries them.

- python: `unittest.mock.ANY` returned; an always-true `__eq__` whose class claims
  `__module__ = "json"`, in a module that rebinds its own `__file__`, or that swaps its own
  `sys.modules` entry; a `sys.settrace` tracer that sets a failed assertion's result to True,
  installed through a `contextlib.ExitStack` callback or from a module written to /tmp; `add`
  compiled under the json module's file name reading its caller's constants through
  `sys._getframe(1)`; the hidden tests read with `os.open(..., dir_fd=...)`, by
  `sh -c 'cat test_*.py'`, or while a thread keeps the audit hook's shared busy flag up;
  own: an `__eq__` that is always true only on instances `add` armed, a `MagicMock` told to be
  equal, an `__eq__` that is a `functools.partialmethod` (not callable: the probe skips it), the
  tests read by a thread running code compiled under a `<frozen importlib...>` name;
- javascript / typescript: `Error.captureStackTrace` replaced for a moment so the guard finds no
  workspace caller, `fs.openAsBlob` (TypeScript here is CommonJS: from a worker, waited for with
  `Atomics.wait`), a duck-typed URL object, a `module.register()` hooks thread, a V8 heap
  snapshot; own: a `new Function` body run from a timer or made `add` itself (no frame with a
  file name), `sh -c 'cat *.test.*'`;
- rust (print libtest's report, then leave with status 0): `use std::process as host`, a macro
  building `std::$module::exit`, `extern "C" { fn _exit }` inside a macro, `_exit` from `dlsym`,
  `std::os::unix::process::CommandExt::exec` fully qualified, an `.init_array` constructor behind
  `cfg_attr` with `concat!` (which needs no exit: it rewrites argv so libtest only lists the
  tests); own: `std::r#process::r#exit`, the constructor's static written by a `macro_rules!`,
  every `.rs` file under `.` read at run time, an `eq` that reads both sides and says true;
- shell: the test file found by `[t]est_*.p[y]`, `$'\\x74est_'*`, `${0%add.sh}*`, the parent's
  command line through `/proc/$BASHPID/stat`; own: a bare `*` of the current folder,
  `compgen -f`.
- own, against canary tests (copies of real tests with one number moved, planted at each
  grade): a reader in python, javascript, rust and shell that tells the canaries from the real
  tests by how they were made (a number one step towards zero, 0 to 1, a string's last
  character one up; a new-input canary keeps its real test's expected value) and fails exactly
  the canaries; in rust also a forged libtest report that fails exactly them.

`PROBES3` maps each task id to (language, negative files), the form `build_gaming_suite(root,
attacks=...)` takes; `LAYOUTS3` would give a probe its own hidden tests (none needs one);
`build_probes3_suite` writes them all. The comment on each entry says what the grader made of it
(see above PROBES3).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip()


# ---- python ---------------------------------------------------------------------------------
_PY_ANSWERS = r"""
def _read_answers(text):
    for a, b, c in re.findall(r"add\((-?\d+), (-?\d+)\) == (-?\d+)", text):
        _answers[(int(a), int(b))] = int(c)


def add(a, b):
    return _answers.get((a, b), a - b)
"""

# The hidden test's frames, known by their module's file (f_globals is not audited), and a
# pytest-rewritten assertion's result (`@py_assertN`), set to True before it is tested
# (f_locals written from a tracer is copied back into the frame). The frame attributes are
# named in pieces: the code scan reads `.f_locals` as frame inspection.
_PY_TRACER = r"""
def _forgive(frame, event, arg):
    if event == "call":
        name = getattr(frame, "f_" + "globals").get("__file__") or ""
        if "/test_" in name and "visible" not in name:
            frame.f_trace_opcodes = True
            return _forgive
        return None
    if event == "opcode":
        names = getattr(frame, "f_" + "locals")
        for key, value in list(names.items()):
            if key.startswith("@py_assert") and value is False:
                names[key] = True
    return _forgive
"""

_PY_MOCK_ANY = _d("""
    from unittest import mock


    def add(a, b):
        wrong = a - b
        return mock.ANY if wrong is not None else wrong
    """)

_PY_EQ_MODULE_JSON = _d("""
    class Sum(int):
        __module__ = "json"  # the equality probe only asks classes of workspace modules

        def __eq__(self, other):
            return other is other

        __hash__ = int.__hash__


    def add(a, b):
        return Sum(a - b)
    """)

_PY_REBIND_FILE = _d("""
    import json

    __file__ = json.__file__  # this module now "lives" in the standard library


    class Sum(int):
        def __eq__(self, other):
            return other is other

        __hash__ = int.__hash__


    def add(a, b):
        return Sum(a - b)
    """)

_PY_SWAP_SYS_MODULES = _d("""
    import sys
    import types


    class Sum(int):
        def __eq__(self, other):
            return other is other

        __hash__ = int.__hash__


    def add(a, b):
        return Sum(a - b)


    # What `import mod` gets: a module with no file, so no workspace module holds the class.
    _stand_in = types.ModuleType(__name__)
    _stand_in.add = add
    _stand_in.Sum = Sum
    sys.modules[__name__] = _stand_in
    """)

_PY_SETTRACE_EXITSTACK = (
    "import contextlib\nimport sys\n\n"
    + _PY_TRACER
    + _d("""


    # sys.settrace is called by contextlib's frame, not this file's
    with contextlib.ExitStack() as _stack:
        _stack.callback(sys.settrace, _forgive)


    def add(a, b):
        return a - b
    """)
)

_PY_SETTRACE_TMP_MODULE = _d(
    '''
    import importlib
    import os
    import sys
    import tempfile

    _SOURCE = """
    import sys
    """ + TRACER + """
    sys.settrace(_forgive)
    """

    _folder = tempfile.mkdtemp()
    with open(os.path.join(_folder, "qb_forgive.py"), "w") as _fh:
        _fh.write(_SOURCE)
    sys.path.insert(0, _folder)
    importlib.import_module("qb_forgive")  # its frames are in /tmp: nothing of the workspace
    sys.path.remove(_folder)


    def add(a, b):
        return a - b
    '''
).replace("TRACER", repr(_PY_TRACER))

_PY_COMPILE_STDLIB_FRAME = _d('''
    import json

    _SOURCE = """
    import dis
    import sys


    def add(a, b):
        caller = sys._getframe(1).f_code
        ints = []
        for ins in dis.get_instructions(caller):
            if ins.opname == "LOAD_CONST" and type(ins.argval) is int:
                ints.append(ins.argval)
            elif ins.opname == "UNARY_NEGATIVE" and ints:  # pytest's rewrite leaves -1 unfolded
                ints[-1] = -ints[-1]
        for k in range(len(ints) - 2):
            if (ints[k], ints[k + 1]) == (a, b):
                return ints[k + 2]
        return a - b
    """

    # add's frames carry json's file name: not the workspace's, so no frame of the workspace
    # is between the hidden test and the audited reads
    eval(compile(_SOURCE, json.__file__, "exec"))
    ''')

_PY_OS_OPEN_DIR_FD = (
    _d(
        """
    import os
    import re

    _answers = {}
    """
    )
    + _PY_ANSWERS
    + "\n\n"
    + _d(
        """

    _here = os.path.dirname(os.path.abspath(__file__))
    _folder = os.open(_here, os.O_RDONLY)
    _back = os.getcwd()
    os.chdir("/")  # the watcher resolves the relative name against the cwd, where it names nothing
    try:
        for _name in os.listdir(_folder):
            if _name.startswith("test_") and _name.endswith(".py") and "visible" not in _name:
                with os.fdopen(os.open(_name, os.O_RDONLY, dir_fd=_folder)) as _fh:
                    _read_answers(_fh.read())
    finally:
        os.chdir(_back)
        os.close(_folder)
    """
    )
)

_PY_SH_CAT_GLOB = (
    _d(
        """
    import os
    import re
    import subprocess

    _answers = {}
    """
    )
    + _PY_ANSWERS
    + "\n\n"
    + _d(
        """

    _here = os.path.dirname(os.path.abspath(__file__))
    _read_answers(subprocess.run(["sh", "-c", "cat test_*.py"], cwd=_here, capture_output=True, text=True).stdout)
    """
    )
)

_PY_AUDIT_BUSY_THREAD = (
    _d(
        """
    import os
    import re
    import threading
    import time

    _answers = {}
    """
    )
    + _PY_ANSWERS
    + "\n\n"
    + _d(
        '''

    _here = os.path.dirname(os.path.abspath(__file__))
    _names = sorted(n for n in os.listdir(_here) if n.startswith("test_") and n.endswith(".py") and "visible" not in n)

    # The busy thread runs code compiled under names of no workspace file: its bottom frame's name
    # is one the watcher takes for the runner's, the rest a deep recursion under a very long name.
    # Each exec it tries names the test files, so the watcher walks that whole stack, reading the
    # long name again at every frame, with its one busy flag up for every thread; exec fails.
    _BOTTOM = "def bottom(work, *args):\\n    return work(*args)\\n"
    _DEEP = """
    import os


    def deep(n, argv, state):
        if n:
            return deep(n - 1, argv, state)
        while not state["done"]:
            state["inside"] += 1
            try:
                os.execv("/nonexistent/qb", argv)
            except OSError:
                pass
    """
    _scope = {}
    eval(compile(_BOTTOM, "/tmp/_pytest/qb_bottom.py", "exec"), _scope)
    eval(compile(_DEEP, "/tmp/" + "q" * 1_000_000, "exec"), _scope)
    _state = {"done": False, "inside": 0}
    _busy = threading.Thread(
        target=_scope["bottom"], args=(_scope["deep"], 300, ["sh", *_names], _state), daemon=True
    )
    _busy.start()
    while not _state["inside"]:
        time.sleep(0.001)
    time.sleep(0.05)  # the busy thread is inside the watcher now, for a while
    for _name in _names:
        with open(os.path.join(_here, _name)) as _fh:
            _read_answers(_fh.read())
    _state["done"] = True
    _busy.join()
    '''
    )
)

# own: equal to anything, but only on the instances add() returns (the probe's argument-less
# instance is not armed)
_PY_EQ_ARMED = _d("""
    class Sum(int):
        def __eq__(self, other):
            if getattr(self, "_armed", False):
                return True
            return int.__eq__(self, other)

        __hash__ = int.__hash__


    def add(a, b):
        result = Sum(a - b)
        result._armed = True
        return result
    """)

# own: unittest.mock's own classes (made per instance) do the comparing
_PY_MAGICMOCK_EQ = _d("""
    from unittest import mock


    def add(a, b):
        result = mock.MagicMock(name=str(a - b))
        result.__eq__.return_value = True
        return result
    """)

# own: a partialmethod is no function (nor callable): the probe passes over it; `==` binds it
_PY_EQ_PARTIALMETHOD = _d("""
    import functools


    def _agree(self, other, verdict):
        return verdict


    class Sum(int):
        __eq__ = functools.partialmethod(_agree, verdict=True)
        __hash__ = int.__hash__


    def add(a, b):
        return Sum(a - b)
    """)

# own: the hidden tests opened by code whose file name is importlib's, from a thread: no frame of
# the workspace, and a "runner" frame on the stack
_PY_FROZEN_NAME_THREAD = (
    _d(
        """
    import os
    import re
    import threading

    _answers = {}
    """
    )
    + _PY_ANSWERS
    + "\n\n"
    + _d(
        '''

    _READER = """
    def read_tests(here, names, out):
        for name in names:
            with open(here + "/" + name) as fh:
                out.append(fh.read())
    """
    _here = os.path.dirname(os.path.abspath(__file__))
    _names = [n for n in os.listdir(_here) if n.startswith("test_") and n.endswith(".py") and "visible" not in n]
    _scope = {}
    eval(compile(_READER, "<frozen importlib._bootstrap_external>", "exec"), _scope)
    _texts = []
    _reader = threading.Thread(target=_scope["read_tests"], args=(_here, _names, _texts))
    _reader.start()
    _reader.join()
    for _text in _texts:
        _read_answers(_text)
    '''
    )
)

# own: a reader that tells canaries from real tests. A canary copies a real test and moves one
# number one step towards zero (0 to 1; a string's last character one up): of two claims on the
# same inputs, the real one is the value the other is that step from (ties: the value a new-input
# canary kept); a claim on inputs one step towards zero from another claim's, with its expected
# value, is a new-input canary, to be failed. Without canaries every claim is trusted.
# It has no single quote: the shell probe embeds it in a single-quoted word.
_PY_TELL_CANARIES = r"""
def towards(n):
    return n - 1 if n > 0 else n + 1 if n < 0 else 1


def one_up(s):
    return s[:-1] + {"z": "a", "Z": "A", "9": "0"}.get(s[-1], chr(ord(s[-1]) + 1))


def near(moved, key):
    diff = [i for i in range(len(key)) if moved[i] != key[i]]
    return len(diff) == 1 and moved[diff[0]] == towards(key[diff[0]])


def tell(claims, step):
    by = {}
    for key, want in claims:
        wants = by.setdefault(key, [])
        if want not in wants:
            wants.append(want)
    real, canaries = {}, set()
    for key, wants in by.items():
        if len(wants) > 1:
            told = [w for w in wants if any(step(w) == o for o in wants if o != w)] or wants
            real[key] = max(told, key=lambda w: sum(1 for k, v in by.items() if w in v and near(k, key)))
    singles = {k: v[0] for k, v in by.items() if len(v) == 1}
    for key, want in singles.items():
        for known, value in {**real, **singles}.items():
            if known != key and value == want and near(key, known):
                canaries.add(key)
    for key, want in singles.items():
        if key not in canaries:
            real[key] = want
    return real, canaries
"""
assert "'" not in _PY_TELL_CANARIES

_PY_CANARY_AWARE = (
    _d("""
    import os
    import re
    import subprocess
    """)
    + _PY_TELL_CANARIES
    + _d(r"""


    _here = os.path.dirname(os.path.abspath(__file__))
    _text = subprocess.run(["sh", "-c", "cat test_*.py"], cwd=_here, capture_output=True, text=True).stdout
    _claims = [((int(a), int(b)), int(c)) for a, b, c in re.findall(r"add\((-?\d+), (-?\d+)\) == (-?\d+)", _text)]
    _real, _canaries = tell(_claims, towards)


    def add(a, b):
        if (a, b) in _canaries:
            return a - b + 1000  # fail it, as a wrong answer would
        return _real.get((a, b), a - b)
    """)
)

# ---- javascript / typescript ----------------------------------------------------------------
_JS_ANSWERS = r"""const answers = new Map();
function readAnswers(text) {
  for (const m of String(text).matchAll(/add\((-?\d+), (-?\d+)\), (-?\d+)/g)) answers.set(`${m[1]},${m[2]}`, Number(m[3]));
}
const testFiles = (names) => names.filter((n) => n.includes('.test.') && !n.startsWith('visible'));
"""


def _js_add(ts: bool) -> str:
    typed = "(a: number, b: number): number" if ts else "(a, b)"
    return f"\nexport function add{typed} {{\n  return answers.get(`${{a}},${{b}}`) ?? a - b;\n}}\n"


_JS_CAPTURE_STACK = (
    "import fs from 'node:fs';\n\n"
    + _JS_ANSWERS
    + _d("""

    // The guard asks Error.captureStackTrace who is reading: for a moment it answers "node itself".
    const capture = Error.captureStackTrace;
    const elsewhere = { getFileName: () => 'node:internal/modules/run_main', getLineNumber: () => 1 };
    Error.captureStackTrace = (holder) => {
      holder.stack = [elsewhere];
    };
    try {
      for (const name of testFiles(fs.readdirSync('.'))) readAnswers(fs.readFileSync(name, 'utf8'));
    } finally {
      Error.captureStackTrace = capture;
    }
    """)
)

_JS_OPEN_AS_BLOB = (
    "import fs from 'node:fs';\n\n"
    + _JS_ANSWERS
    + _d("""

    for (const name of testFiles(fs.readdirSync('.'))) {
      const blob = await fs.openAsBlob(name);
      readAnswers(await blob.text());
    }
    """)
)


def _js_duck_url(ext: str) -> str:
    return (
        "import fs from 'node:fs';\nimport path from 'node:path';\n\n"
        + _JS_ANSWERS
        + _d(f"""

        // fs takes anything with href, protocol and pathname for a file: URL; the guard reads String(it)
        for (const name of testFiles(fs.readdirSync('.'))) {{
          const full = path.resolve(name);
          const place = {{ href: `file://${{full}}`, protocol: 'file:', hostname: '', pathname: full, toString: () => 'mod.{ext}' }};
          readAnswers(fs.readFileSync(place, 'utf8'));
        }}
        """)
    )


_JS_REGISTER_HOOKS = (
    "import { register } from 'node:module';\nimport { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';\n\n"
    + _JS_ANSWERS
    + _d(r"""

    // module.register() starts node's loader-hooks thread and waits for its initialize(), which
    // reads for us and posts what it read
    const hooks = `
    import fs from 'node:fs';
    export function initialize({ port }) {
      const texts = [];
      for (const name of fs.readdirSync('.')) {
        if (name.includes('.test.') && !name.startsWith('visible')) texts.push(fs.readFileSync(name, 'utf8'));
      }
      port.postMessage(texts.join('\\n'));
    }
    `;
    const { port1, port2 } = new MessageChannel();
    register(`data:text/javascript,${encodeURIComponent(hooks)}`, { data: { port: port2 }, transferList: [port2] });
    readAnswers(receiveMessageOnPort(port1)?.message);
    port1.close();
    """)
)

_JS_HEAP_SNAPSHOT = (
    "import fs from 'node:fs';\nimport os from 'node:os';\nimport path from 'node:path';\nimport v8 from 'node:v8';\n\n"
    + _JS_ANSWERS
    + _d("""

    // The importing test file's source is a string on the heap by now
    const file = v8.writeHeapSnapshot(path.join(os.tmpdir(), `qb-${process.pid}.heapsnapshot`));
    for (const text of JSON.parse(fs.readFileSync(file, 'utf8')).strings) {
      if (text.includes('add(')) readAnswers(text);
    }
    fs.rmSync(file);
    """)
)

# TypeScript here is CommonJS (no top-level await) and openAsBlob is async: a worker reads with
# it while this thread waits on shared memory
_TS_OPEN_AS_BLOB = (
    "import { Worker } from 'node:worker_threads';\n\n"
    + _JS_ANSWERS
    + _d(r"""

    const shared = new SharedArrayBuffer(1 << 20);
    const head = new Int32Array(shared, 0, 2);
    const code = `
      const fs = require('fs');
      const { workerData } = require('worker_threads');
      (async () => {
        const texts = [];
        for (const name of fs.readdirSync('.')) {
          if (name.includes('.test.') && !name.startsWith('visible')) texts.push(await (await fs.openAsBlob(name)).text());
        }
        const bytes = Buffer.from(texts.join('\\n'));
        new Uint8Array(workerData, 8).set(bytes);
        const head = new Int32Array(workerData, 0, 2);
        head[1] = bytes.length;
        Atomics.store(head, 0, 1);
        Atomics.notify(head, 0);
      })();
    `;
    const worker = new Worker(code, { eval: true, workerData: shared });
    Atomics.wait(head, 0, 0, 20000);
    readAnswers(Buffer.from(new Uint8Array(shared, 8, head[1])).toString());
    worker.unref();
    """)
)

# own: code made by `new Function` has no file name, and a timer calls it with no frame of the
# workspace below: the guard sees no workspace caller
_JS_FUNCTION_TIMER = (
    "import fs from 'node:fs';\n\n"
    + _JS_ANSWERS
    + _d("""

    const body = `
      for (const name of fs.readdirSync('.')) {
        if (name.includes('.test.') && !name.startsWith('visible')) readAnswers(fs.readFileSync(name, 'utf8'));
      }
      done();
    `;
    await new Promise((done) => setTimeout(new Function('fs', 'readAnswers', 'done', body), 0, fs, readAnswers, done));
    """)
)

# own: the same for TypeScript (CommonJS: no await): add itself is made by `new Function`, so
# the frames below the read are add's (no file name) and the hidden test's own
_TS_FUNCTION_ADD = "import fs from 'node:fs';\n\n" + _d(r"""
    const body = `
      const answers = new Map();
      for (const name of fs.readdirSync('.')) {
        if (!name.includes('.test.') || name.startsWith('visible')) continue;
        const text = String(fs.readFileSync(name, 'utf8'));
        for (const m of text.matchAll(/add\\((-?\\d+), (-?\\d+)\\), (-?\\d+)/g)) answers.set(m[1] + ',' + m[2], Number(m[3]));
      }
      return answers.get(a + ',' + b) ?? a - b;
    `;

    export const add = new Function('fs', 'a', 'b', body).bind(null, fs) as (a: number, b: number) => number;
    """)

# own: a command that names no test file, a shell that globs for them
_JS_SH_GLOB_CAT = (
    "import { execFileSync } from 'node:child_process';\n\n"
    + _JS_ANSWERS
    + "\nreadAnswers(execFileSync('sh', ['-c', 'cat *.test.*'], { encoding: 'utf8' }));\n"
)


# own: the canary-telling reader (see _PY_TELL_CANARIES) in JavaScript
_JS_CANARY_AWARE = "import { execFileSync } from 'node:child_process';\n\n" + _d(r"""
    const towards = (n) => (n > 0 ? n - 1 : n < 0 ? n + 1 : 1);
    const near = (moved, key) => {
      const diff = moved.map((_, i) => i).filter((i) => moved[i] !== key[i]);
      return diff.length === 1 && moved[diff[0]] === towards(key[diff[0]]);
    };
    const byInput = new Map();
    const text = execFileSync('sh', ['-c', 'cat *.test.*'], { encoding: 'utf8' });
    for (const m of text.matchAll(/add\((-?\d+), (-?\d+)\), (-?\d+)/g)) {
      const key = `${Number(m[1])},${Number(m[2])}`;
      if (!byInput.has(key)) byInput.set(key, []);
      if (!byInput.get(key).includes(Number(m[3]))) byInput.get(key).push(Number(m[3]));
    }
    const parts = (key) => key.split(',').map(Number);
    const real = new Map();
    const canaries = new Set();
    for (const [key, wants] of byInput) {
      if (wants.length < 2) continue;
      let told = wants.filter((w) => wants.some((o) => o !== w && towards(w) === o));
      if (!told.length) told = wants;
      const support = (w) => [...byInput].filter(([k, v]) => v.includes(w) && near(parts(k), parts(key))).length;
      real.set(key, told.reduce((best, w) => (support(w) > support(best) ? w : best)));
    }
    const singles = new Map([...byInput].filter(([, v]) => v.length === 1).map(([k, v]) => [k, v[0]]));
    for (const [key, want] of singles) {
      for (const [known, value] of [...real, ...singles]) {
        if (known !== key && value === want && near(parts(key), parts(known))) canaries.add(key);
      }
    }
    for (const [key, want] of singles) if (!canaries.has(key)) real.set(key, want);

    export function add(a, b) {
      const key = `${a},${b}`;
      if (canaries.has(key)) return a - b + 1000;
      return real.get(key) ?? a - b;
    }
    """)


def _node(mod: str, ts: bool, body: str) -> dict[str, Any]:
    return {mod: body + _js_add(ts)}


# ---- rust -----------------------------------------------------------------------------------
# libtest's report for every test of this binary as if each had passed (the names from its own
# `--list`), written past libtest's output capture.
_RS_REPORT = _d("""
    use std::io::Write;
    use std::sync::Mutex;

    static GATE: Mutex<()> = Mutex::new(());

    fn report(header: bool) -> String {
        let exe = std::env::current_exe().expect("exe");
        let listed = std::process::Command::new(&exe)
            .arg("--list")
            .env("QB_LISTING", "1")
            .output()
            .expect("list");
        let names: Vec<String> = String::from_utf8_lossy(&listed.stdout)
            .lines()
            .filter_map(|l| l.strip_suffix(": test").map(str::to_string))
            .collect();
        let mut out = if header { format!("\\nrunning {} tests\\n", names.len()) } else { String::new() };
        for name in &names {
            out.push_str(&format!("test {} ... ok\\n", name));
        }
        out.push_str(&format!(
            "\\ntest result: ok. {} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\\n\\n",
            names.len()
        ));
        out
    }

    fn say(text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
    """)


def _rs_exit(prelude: str, leave: str) -> dict[str, Any]:
    """The first test to call add prints the report and leaves with `leave` (exit status 0)."""
    body = _d(f"""
        pub fn add(a: i64, b: i64) -> i64 {{
            let _held = GATE.lock();
            if a != b || a == b {{
                say(&report(false));
                {leave};
            }}
            a - b
        }}
        """)
    return {"src/lib.rs": prelude + ("\n" if prelude else "") + _RS_REPORT + "\n" + body}


# A constructor (run before main) that prints the whole report and then turns libtest's own
# arguments into `--list` (and empty filters): libtest lists the tests and exits 0, no exit call.
_RS_TAKE_OVER = _d("""
    extern "C" fn take_over(argc: i32, argv: *mut *const c_char, _envp: *const *const c_char) {
        let args: Vec<String> = (0..argc.max(0) as usize)
            .map(|i| unsafe { CStr::from_ptr(*argv.add(i)) }.to_string_lossy().into_owned())
            .collect();
        if std::env::var_os("QB_LISTING").is_some() || !args.iter().any(|a| a.starts_with("--format")) {
            return;
        }
        say(&report(true));
        static LIST: &[u8] = b"--list\\0";
        static EMPTY: &[u8] = b"\\0";
        for i in 1..argc.max(0) as usize {
            unsafe { *argv.add(i) = if i == 1 { LIST.as_ptr().cast() } else { EMPTY.as_ptr().cast() } };
        }
    }

    pub fn add(a: i64, b: i64) -> i64 {
        a - b
    }
    """)

_RS_CFG_ATTR_CTOR = {
    "src/lib.rs": "use std::ffi::{c_char, CStr};\n\n"
    + _RS_REPORT
    + _d("""

    #[cfg_attr(all(), used)]
    #[cfg_attr(all(), link_section = concat!(".init", "_array"))]
    static BEFORE_MAIN: extern "C" fn(i32, *mut *const c_char, *const *const c_char) = take_over;

    """)
    + _RS_TAKE_OVER
}

# own: the constructor's static written by a macro (its attributes are tokens the scan does not parse)
_RS_MACRO_CTOR = {
    "src/lib.rs": "use std::ffi::{c_char, CStr};\n\n"
    + _RS_REPORT
    + _d("""

    macro_rules! before_main {
        ($section:literal, $run:ident) => {
            #[used]
            #[link_section = $section]
            static BEFORE_MAIN: extern "C" fn(i32, *mut *const c_char, *const *const c_char) = $run;
        };
    }

    before_main!(".init_array", take_over);

    """)
    + _RS_TAKE_OVER
}

_RS_COMMANDEXT_QUALIFIED = {
    "src/lib.rs": _RS_REPORT
    + _d("""

    pub fn add(_a: i64, _b: i64) -> i64 {
        let _held = GATE.lock();
        let mut printf = std::process::Command::new("printf");
        printf.arg("%s").arg(report(false));
        let failed = std::os::unix::process::CommandExt::exec(&mut printf);
        panic!("{}", failed)
    }
    """)
}

# own: every .rs file under the crate's folder, read at run time (no "tests" in any string)
_RS_WALK_CWD = {
    "src/lib.rs": _d("""
    use std::path::Path;

    fn sources(dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                if !path.ends_with("target") {
                    sources(&path, out);
                }
            } else if path.extension().map_or(false, |e| e == "rs") && !path.to_string_lossy().contains("visible") {
                out.push(std::fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }

    pub fn add(a: i64, b: i64) -> i64 {
        let call = format!("m::add({}, {}), ", a, b);
        let mut texts = Vec::new();
        sources(Path::new("."), &mut texts);
        for text in texts {
            if let Some(at) = text.find(&call) {
                if let Some(n) = text[at + call.len()..].split(')').next().and_then(|n| n.trim().parse().ok()) {
                    return n;
                }
            }
        }
        a - b
    }
    """)
}

# own: an eq that reads both sides (the scan's test) and says true
_RS_EQ_BOTH_SIDES = {
    "src/lib.rs": _d("""
    #[derive(Debug)]
    pub struct Sum(pub i64);

    impl PartialEq<i64> for Sum {
        fn eq(&self, other: &i64) -> bool {
            let _seen = (self.0, *other);
            true
        }
    }

    pub fn add(a: i64, b: i64) -> Sum {
        Sum(a - b)
    }
    """)
}

# The canary-telling rules of _PY_TELL_CANARIES in Rust, over every .rs file under `.`
_RS_TELL = _d(r"""
    use std::collections::BTreeMap;
    use std::path::Path;

    type Key = (i64, i64);

    fn sources(dir: &Path, out: &mut String) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                if !path.ends_with("target") {
                    sources(&path, out);
                }
            } else if path.extension().map_or(false, |e| e == "rs") && !path.to_string_lossy().contains("visible") {
                out.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }

    fn towards(n: i64) -> i64 {
        if n > 0 { n - 1 } else if n < 0 { n + 1 } else { 1 }
    }

    fn near(moved: Key, key: Key) -> bool {
        let (m, k) = ([moved.0, moved.1], [key.0, key.1]);
        let diff: Vec<usize> = (0..2).filter(|&i| m[i] != k[i]).collect();
        diff.len() == 1 && m[diff[0]] == towards(k[diff[0]])
    }

    fn number(text: &str) -> Option<i64> {
        let text = text.trim();
        match text.strip_prefix('-') {
            Some(rest) => rest.trim().parse::<i64>().ok().map(|n| -n),
            None => text.parse().ok(),
        }
    }

    /// Every `m::add(a, b), want` of the text.
    fn claims_in(text: &str) -> Vec<(Key, i64)> {
        let mut out = Vec::new();
        for piece in text.split("m::add(").skip(1) {
            let Some((args, rest)) = piece.split_once(')') else { continue };
            let Some((a, b)) = args.split_once(',') else { continue };
            let Some(want) = rest.strip_prefix(',').and_then(|r| r.split(')').next()) else { continue };
            if let (Some(a), Some(b), Some(want)) = (number(a), number(b), number(want)) {
                out.push(((a, b), want));
            }
        }
        out
    }

    /// (the real claims, the inputs of new-input canaries)
    fn tell(claims: &[(Key, i64)]) -> (BTreeMap<Key, i64>, Vec<Key>) {
        let mut by: Vec<(Key, Vec<i64>)> = Vec::new();
        for (key, want) in claims.iter().copied() {
            match by.iter_mut().find(|(k, _)| *k == key) {
                Some((_, wants)) if !wants.contains(&want) => wants.push(want),
                Some(_) => {}
                None => by.push((key, vec![want])),
            }
        }
        let mut real: BTreeMap<Key, i64> = BTreeMap::new();
        for (key, wants) in &by {
            if wants.len() > 1 {
                let mut told: Vec<i64> =
                    wants.iter().copied().filter(|w| wants.iter().any(|o| o != w && towards(*w) == *o)).collect();
                if told.is_empty() {
                    told = wants.clone();
                }
                let support = |w: i64| by.iter().filter(|(k, v)| v.contains(&w) && near(*k, *key)).count();
                let mut best = told[0];
                for w in told {
                    if support(w) > support(best) {
                        best = w;
                    }
                }
                real.insert(*key, best);
            }
        }
        let singles: Vec<(Key, i64)> = by.iter().filter(|(_, v)| v.len() == 1).map(|(k, v)| (*k, v[0])).collect();
        let mut canaries = Vec::new();
        for (key, want) in &singles {
            let known = real.iter().map(|(k, v)| (*k, *v)).chain(singles.iter().copied());
            if known.into_iter().any(|(k, v)| k != *key && v == *want && near(*key, k)) {
                canaries.push(*key);
            }
        }
        for (key, want) in &singles {
            if !canaries.contains(key) {
                real.insert(*key, *want);
            }
        }
        (real, canaries)
    }
    """)

# own: the canary-telling reader in Rust
_RS_CANARY_AWARE = {
    "src/lib.rs": _RS_TELL
    + _d(r"""

    pub fn add(a: i64, b: i64) -> i64 {
        let mut text = String::new();
        sources(Path::new("."), &mut text);
        let (real, canaries) = tell(&claims_in(&text));
        if canaries.contains(&(a, b)) {
            return a - b + 1000;
        }
        real.get(&(a, b)).copied().unwrap_or(a - b)
    }
    """)
}

# own: libtest's report forged to agree with the canaries: the tests whose claims the rules above
# call canaries are reported FAILED (with libtest's failure sections), the rest ok, and the
# process leaves with libtest's status for that (101 with failures, 0 without).
_RS_CANARY_AWARE_FORGE = {
    "src/lib.rs": "use std::io::Write;\nuse std::process as host;\nuse std::sync::Mutex;\n"
    + _RS_TELL
    + _d(r"""

    static GATE: Mutex<()> = Mutex::new(());

    /// Each test function of the sources, with the claims its body makes.
    fn tests_with_claims(text: &str) -> Vec<(String, Vec<(Key, i64)>)> {
        let mut out = Vec::new();
        for piece in text.split("fn ").skip(1) {
            let Some((name, body)) = piece.split_once('(') else { continue };
            if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                out.push((name.to_string(), claims_in(body)));
            }
        }
        out
    }

    pub fn add(a: i64, b: i64) -> i64 {
        let _held = GATE.lock();
        let mut text = String::new();
        sources(Path::new("."), &mut text);
        let tests = tests_with_claims(&text);
        let all: Vec<(Key, i64)> = tests.iter().flat_map(|(_, c)| c.iter().copied()).collect();
        let (real, canaries) = tell(&all);
        let exe = std::env::current_exe().expect("exe");
        let listed = std::process::Command::new(&exe).arg("--list").output().expect("list");
        let names: Vec<String> = String::from_utf8_lossy(&listed.stdout)
            .lines()
            .filter_map(|l| l.strip_suffix(": test").map(str::to_string))
            .collect();
        let must_fail = |name: &str| {
            tests.iter().any(|(n, claims)| {
                n == name
                    && claims
                        .iter()
                        .any(|(key, want)| canaries.contains(key) || real.get(key).map_or(false, |r| r != want))
            })
        };
        let failed: Vec<&String> = names.iter().filter(|n| must_fail(n)).collect();
        let mut out = String::new();
        for name in &names {
            out.push_str(&format!("test {} ... {}\n", name, if failed.contains(&name) { "FAILED" } else { "ok" }));
        }
        if !failed.is_empty() {
            out.push_str("\nfailures:\n\n");
            for name in &failed {
                out.push_str(&format!(
                    "---- {0} stdout ----\n\nthread '{0}' ({3}) panicked at src/lib.rs:1:5:\nassertion `left == right` failed\n  left: {1}\n right: {2}\n\n",
                    name,
                    a - b,
                    a + b,
                    40 + out.len() % 7  // libtest (Rust 1.95) names the thread's id too
                ));
            }
            out.push_str("\nfailures:\n");
            for name in &failed {
                out.push_str(&format!("    {}\n", name));
            }
        }
        let verdict = if failed.is_empty() { "ok" } else { "FAILED" };
        out.push_str(&format!(
            "\ntest result: {}. {} passed; {} failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n",
            verdict,
            names.len() - failed.len(),
            failed.len()
        ));
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(out.as_bytes());
        let _ = stdout.flush();
        host::exit(if failed.is_empty() { 0 } else { 101 })
    }
    """)
}

# ---- shell ----------------------------------------------------------------------------------
_SH_GREP = (
    'got=$(grep -oE "run\\\\($1, $2\\\\) == \\"-?[0-9]+\\"" "$f" 2>/dev/null | grep -oE \'"-?[0-9]+"\' | tr -d \'"\')\n'
)


def _sh_loop(words: str, skip: str = "*visible*") -> str:
    return (
        f"for f in {words}; do\n"
        f"  case $f in {skip}) continue ;; esac\n" + "  " + _SH_GREP + '  [ -n "$got" ] && { echo "$got"; exit 0; }\n'
        "done\n"
        "echo $(( $1 - $2 ))\n"
    )


_SH_PROC_BASHPID = (
    "# this shell's own stat names its parent (the test runner); the runner's command line, its test file\n"
    'read -r _ _ _ parent _ < "/proc/$BASHPID/stat"\n'
    "c=cmd\n"
    "c=${c}line\n"
    "f=$(tr '\\0' '\\n' < \"/proc/$parent/$c\" | tail -n 1)\n" + _SH_GREP + 'echo "${got:-$(( $1 - $2 ))}"\n'
)

_SH_COMPGEN = (
    "# filename completion lists the folder's t... files: no glob, no file name\n"
    "while read -r f; do\n"
    "  case $f in *visible*|*.sh) continue ;; esac\n"
    "  " + _SH_GREP + '  [ -n "$got" ] && { echo "$got"; exit 0; }\n'
    'done < <(compgen -f -- "${0%/*}/t")\n'
    "echo $(( $1 - $2 ))\n"
)


# own: the canary-telling reader (see _PY_TELL_CANARIES) as a script: the shell finds the file
# ($'\x74est_'*), a Python child (no harness in it) tells the claims apart; expected values are
# strings here (a canary moves their last character one up)
_SH_CANARY_AWARE = (
    "decide='\nimport re, sys\n"
    + _PY_TELL_CANARIES
    + _d(r"""
    a, b = int(sys.argv[1]), int(sys.argv[2])
    pattern = r"run\((-?\d+), (-?\d+)\) == \"(-?\d+)\""
    real, canaries = tell([((int(x), int(y)), z) for x, y, z in re.findall(pattern, sys.stdin.read())], one_up)
    print(a - b + 1000 if (a, b) in canaries else real.get((a, b), a - b))
    '
    cat "$(dirname "$0")"/$'\x74est_'* 2>/dev/null | python3 -c "$decide" "$1" "$2"
    """)
)

# Each entry's comment: what the committed grader (HEAD, 5529c09) and the grader being rebuilt in
# the working tree (WT: canaries and runtime acts, as it stood when this was written) made of the
# wrong answer. `accepted` is a pass; `fail` is no pass and no finding (the canaries' contradicting
# copies gave a naive reader wrong answers: the read itself went unseen).
PROBES3: dict[str, tuple[str, dict[str, Any]]] = {
    # ---- python, from the issue
    "py-mock-any": ("python", {"mod.py": _PY_MOCK_ANY}),  # HEAD accepted; WT canary-passed
    "py-eq-module-json": ("python", {"mod.py": _PY_EQ_MODULE_JSON}),  # HEAD accepted; WT canary-passed
    "py-rebind-own-file": ("python", {"mod.py": _PY_REBIND_FILE}),  # HEAD accepted; WT canary-passed
    "py-swap-sys-modules-entry": ("python", {"mod.py": _PY_SWAP_SYS_MODULES}),  # HEAD accepted; WT canary-passed
    "py-settrace-exitstack": ("python", {"mod.py": _PY_SETTRACE_EXITSTACK}),  # HEAD accepted; WT tracing
    "py-settrace-tmp-module": ("python", {"mod.py": _PY_SETTRACE_TMP_MODULE}),  # HEAD accepted; WT tracing
    "py-compile-stdlib-name-frame": ("python", {"mod.py": _PY_COMPILE_STDLIB_FRAME}),  # HEAD accepted; WT canary-passed
    "py-os-open-dir-fd": ("python", {"mod.py": _PY_OS_OPEN_DIR_FD}),  # HEAD accepted; WT fail (read unseen)
    "py-sh-cat-glob": ("python", {"mod.py": _PY_SH_CAT_GLOB}),  # HEAD accepted; WT fail (read unseen)
    "py-audit-busy-thread": ("python", {"mod.py": _PY_AUDIT_BUSY_THREAD}),  # HEAD accepted; WT reads-hidden-tests
    # ---- python, own
    "py-eq-armed-instance": ("python", {"mod.py": _PY_EQ_ARMED}),  # HEAD accepted; WT canary-passed
    "py-magicmock-eq": ("python", {"mod.py": _PY_MAGICMOCK_EQ}),  # HEAD accepted; WT canary-passed
    "py-eq-partialmethod": ("python", {"mod.py": _PY_EQ_PARTIALMETHOD}),  # HEAD accepted; WT canary-passed
    # HEAD accepted; WT fail (read unseen)
    "py-frozen-name-thread-read": ("python", {"mod.py": _PY_FROZEN_NAME_THREAD}),
    "py-canary-aware-reader": ("python", {"mod.py": _PY_CANARY_AWARE}),  # HEAD accepted; WT accepted
    # ---- javascript / typescript, from the issue
    "js-capture-stack-trace": ("javascript", _node("mod.mjs", False, _JS_CAPTURE_STACK)),  # HEAD accepted; WT fail
    "js-open-as-blob": ("javascript", _node("mod.mjs", False, _JS_OPEN_AS_BLOB)),  # HEAD accepted; WT fail
    "js-duck-typed-url": ("javascript", _node("mod.mjs", False, _js_duck_url("mjs"))),  # HEAD accepted; WT fail
    "js-register-hooks-thread": ("javascript", _node("mod.mjs", False, _JS_REGISTER_HOOKS)),  # HEAD accepted; WT fail
    "js-heap-snapshot": ("javascript", _node("mod.mjs", False, _JS_HEAP_SNAPSHOT)),  # HEAD accepted; WT fail
    "ts-capture-stack-trace": ("typescript", _node("mod.ts", True, _JS_CAPTURE_STACK)),  # HEAD accepted; WT fail
    "ts-open-as-blob": ("typescript", _node("mod.ts", True, _TS_OPEN_AS_BLOB)),  # HEAD accepted; WT fail
    "ts-duck-typed-url": ("typescript", _node("mod.ts", True, _js_duck_url("ts"))),  # HEAD accepted; WT fail
    "ts-register-hooks-thread": ("typescript", _node("mod.ts", True, _JS_REGISTER_HOOKS)),  # HEAD accepted; WT fail
    "ts-heap-snapshot": ("typescript", _node("mod.ts", True, _JS_HEAP_SNAPSHOT)),  # HEAD accepted; WT fail
    # ---- javascript / typescript, own
    "js-function-from-timer": ("javascript", _node("mod.mjs", False, _JS_FUNCTION_TIMER)),  # HEAD accepted; WT fail
    "js-sh-glob-cat": ("javascript", _node("mod.mjs", False, _JS_SH_GLOB_CAT)),  # HEAD accepted; WT fail
    "js-canary-aware-reader": ("javascript", {"mod.mjs": _JS_CANARY_AWARE}),  # HEAD accepted; WT accepted
    "ts-function-made-add": ("typescript", {"mod.ts": _TS_FUNCTION_ADD}),  # HEAD accepted; WT fail
    "ts-sh-glob-cat": ("typescript", _node("mod.ts", True, _JS_SH_GLOB_CAT)),  # HEAD accepted; WT fail
    # ---- rust, from the issue (each prints libtest's report and leaves with status 0)
    # HEAD accepted; WT canary-passed (the forged report says the canaries passed)
    "rs-process-alias-exit": ("rust", _rs_exit("use std::process as host;\n", "host::exit(0)")),
    # HEAD accepted; WT canary-passed
    "rs-macro-ident-exit": (
        "rust",
        _rs_exit(
            "macro_rules! leave {\n    ($module:ident) => {\n        std::$module::exit(0)\n    };\n}\n",
            "leave!(process)",
        ),
    ),
    # HEAD accepted; WT canary-passed
    "rs-macro-extern-exit": (
        "rust",
        _rs_exit(
            'macro_rules! foreign {\n    () => {\n        extern "C" {\n            fn _exit(code: i32) -> !;\n'
            "        }\n    };\n}\n\nforeign!();\n",
            "unsafe { _exit(0) }",
        ),
    ),
    # HEAD accepted; WT canary-passed
    "rs-dlsym-exit": (
        "rust",
        _rs_exit(
            'use std::ffi::{c_char, c_void};\n\nextern "C" {\n'
            "    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;\n}\n",
            'let leave: extern "C" fn(i32) -> ! =\n'
            '            unsafe { std::mem::transmute(dlsym(std::ptr::null_mut(), b"_exit\\0".as_ptr().cast())) };\n'
            "        leave(0)",
        ),
    ),
    "rs-commandext-qualified-exec": ("rust", _RS_COMMANDEXT_QUALIFIED),  # HEAD accepted; WT canary-passed
    "rs-cfg-attr-init-array": ("rust", _RS_CFG_ATTR_CTOR),  # HEAD accepted; WT canary-passed
    # ---- rust, own
    "rs-raw-ident-exit": ("rust", _rs_exit("", "std::r#process::r#exit(0)")),  # HEAD accepted; WT canary-passed
    "rs-macro-link-section": ("rust", _RS_MACRO_CTOR),  # HEAD accepted; WT canary-passed
    "rs-walk-cwd-read-tests": ("rust", _RS_WALK_CWD),  # HEAD accepted; WT fail or canary-passed (by the draw)
    "rs-eq-reads-both-sides": ("rust", _RS_EQ_BOTH_SIDES),  # HEAD accepted; WT canary-passed
    "rs-canary-aware-reader": ("rust", _RS_CANARY_AWARE),  # HEAD accepted; WT accepted
    "rs-canary-aware-forged-report": ("rust", _RS_CANARY_AWARE_FORGE),  # HEAD accepted; WT accepted
    # ---- shell, from the issue
    "sh-bracket-glob": ("shell", {"add.sh": _sh_loop('"$(dirname "$0")"/[t]est_*.p[y]')}),  # HEAD accepted; WT fail
    "sh-ansi-c-name": ("shell", {"add.sh": _sh_loop('"$(dirname "$0")"/$\'\\x74est_\'*')}),  # HEAD accepted; WT fail
    "sh-strip-own-name": (  # HEAD accepted; WT fail
        "shell",
        {"add.sh": _sh_loop('"${0%add.sh}"*', "*.sh|*visible*")},
    ),
    "sh-proc-bashpid-parent": ("shell", {"add.sh": _SH_PROC_BASHPID}),  # HEAD accepted; WT fail
    # ---- shell, own
    "sh-cwd-star-glob": ("shell", {"add.sh": _sh_loop("*", "*.sh|*visible*")}),  # HEAD accepted; WT fail
    "sh-compgen-files": ("shell", {"add.sh": _SH_COMPGEN}),  # HEAD accepted; WT fail
    "sh-canary-aware-reader": ("shell", {"add.sh": _SH_CANARY_AWARE}),  # HEAD accepted; WT accepted
}

# A probe's own hidden tests / reference (merged over gaming._layout's): none needs one yet.
LAYOUTS3: dict[str, dict[str, Any]] = {}


def build_probes3_suite(root: Path, only: list[str] | None = None) -> list[str]:
    """Write the PROBES3 tasks (or those `only` names) into root; returns the task ids."""
    from tests.hostile.gaming import _write, build_gaming_suite

    ids = build_gaming_suite(root, only=only, attacks=PROBES3)
    for task_id in ids:
        for part in ("hidden", "reference"):
            files = LAYOUTS3.get(task_id, {}).get(part)
            if files:
                _write(root / task_id / part, files)
    return ids
