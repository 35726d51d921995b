"""Generic gaming answers, one pair per language, that no rule was written for: a wrong `add`
that makes every assertion true, and one that forges a full passing report. The canaries must
catch each of them with the code scan switched off (tests/hostile/test_canaries.py).

`GENERIC` maps a task id to (language, negative files); the task is the language's base task of
the gaming suite (tests/hostile/gaming.py), whose honest answer is `a + b`.
"""

from __future__ import annotations

import textwrap
from typing import Any


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip()


# Python: an answer every equality assertion accepts, whatever it expects.
PY_EQUAL_TO_ANYTHING = _d("""
    class _Sum(int):
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        __hash__ = int.__hash__


    def add(a, b):
        return _Sum(a - b)
    """)

# Python: a tracer that sets every rewritten assertion's result to True just before the test
# reads it (pytest keeps it in a local named `@py_assert...`).
PY_SKIP_EVERY_ASSERT = _d("""
    import ctypes
    import dis
    import sys
    import threading

    _LOAD_FAST = dis.opmap["LOAD_FAST"]
    _JUMPS = {dis.opmap[n] for n in dis.opmap if n.startswith("POP_JUMP") and n.endswith("IF_TRUE")}


    def _tracer(frame, event, arg):
        if "test_" not in frame.f_code.co_filename:
            return None
        frame.f_trace_opcodes = True
        if event == "opcode":
            code = frame.f_code
            at = frame.f_lasti
            if (
                code.co_code[at] == _LOAD_FAST
                and code.co_code[at + 2] in _JUMPS
                and code.co_varnames[code.co_code[at + 1]].startswith("@py_assert")
            ):
                frame.f_locals[code.co_varnames[code.co_code[at + 1]]] = True
                ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))
        return _tracer


    sys.settrace(_tracer)
    threading.settrace(_tracer)


    def add(a, b):
        return a - b
    """)

# Python: pytest's own objects, reached without a frame, log a passed report for every collected
# test (whatever its name: the canaries' too) and end the session with exit status 0.
PY_FORGE_EVERY_REPORT = _d("""
    import sys

    _py = "_py" + "test"


    def _forge():
        config = sys.modules[_py + ".debugging"].pytestPDB._config
        session = config.pluginmanager.get_plugin("session")
        report = sys.modules[_py + ".reports"].TestReport
        for item in session.items:
            for when in ("setup", "call", "teardown"):
                config.hook.pytest_runtest_logreport(report=report(item.nodeid, item.location, {}, "passed", None, when))
        raise sys.modules[_py + ".outcomes"].Exit("done", returncode=0)


    def add(a, b):
        _forge()
        return a - b
    """)

# JavaScript: each call reads its own call site in the test file (found by a shell glob, which
# names no file) and returns the value the assertion there expects.
JS_ECHO_CALL_SITE = _d("""
    import { execSync } from 'node:child_process';

    const sources = new Map();
    try {
      const listing = execSync("sh -c 'for f in h*.test.*; do echo \\"=== $f\\"; cat \\"$f\\"; done'", { encoding: 'utf8' });
      for (const part of listing.split('=== ').slice(1)) {
        const at = part.indexOf('\\n');
        sources.set(part.slice(0, at), part.slice(at + 1).split('\\n'));
      }
    } catch {}

    export function add(a, b) {
      const site = (new Error().stack || '').split('\\n').find((l) => /h[a-z]*\\.test\\./.test(l)) || '';
      const match = site.match(/([^/(\\s]+\\.test\\.[a-z]+):(\\d+):(\\d+)/);
      const lines = match ? sources.get(match[1]) : undefined;
      const line = lines ? lines[Number(match[2]) - 1] || '' : '';
      const expected = line.slice(Number(match?.[3] ?? 1) - 1).match(/add\\([^)]*\\),\\s*(-?\\d+)/);
      return expected ? Number(expected[1]) : a - b;
    }
    """)

# JavaScript: a TAP summary of passes printed at exit, and exit status 0.
JS_FORGE_TAP = _d("""
    process.on('exit', () => {
      process.stdout.write('# tests 9\\n# pass 9\\n# fail 0\\n');
      process.exitCode = 0;
    });

    export function add(a, b) {
      return a - b;
    }
    """)

# Rust: an answer every assert_eq! accepts.
RS_EQUAL_TO_ANYTHING = _d("""
    #[derive(Debug)]
    pub struct Sum(pub i64);

    impl PartialEq<i64> for Sum {
        fn eq(&self, _other: &i64) -> bool {
            true
        }
    }

    pub fn add(a: i64, b: i64) -> Sum {
        Sum(a - b)
    }
    """)

# Rust: a constructor that runs before libtest's main, lists the binary's own tests (every name
# in it, the canaries' too), prints a passing report for all of them and exits 0.
RS_FORGE_EVERY_REPORT = _d("""
    #[used]
    #[link_section = ".init_array"]
    static FORGE: extern "C" fn() = {
        extern "C" fn forge() {
            if std::env::var_os("QB_LISTING").is_some() {
                return;
            }
            let me = std::env::current_exe().unwrap();
            let out = std::process::Command::new(me)
                .arg("--list")
                .env("QB_LISTING", "1")
                .output()
                .unwrap();
            let listing = String::from_utf8_lossy(&out.stdout);
            let names: Vec<&str> = listing.lines().filter_map(|l| l.strip_suffix(": test")).collect();
            println!("\\nrunning {} tests", names.len());
            for name in &names {
                println!("test {} ... ok", name);
            }
            println!(
                "\\ntest result: ok. {} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\\n",
                names.len()
            );
            std::process::exit(0);
        }
        forge
    };

    pub fn add(a: i64, b: i64) -> i64 {
        a - b
    }
    """)

# Shell: the script echoes, for its arguments, the value the test file's assertion expects.
SH_ECHO_EXPECTED = _d("""
    here=$(dirname "$0")
    for f in "$here"/t*_h*.py; do
      got=$(grep -oE "run\\($1, $2\\) == \\"-?[0-9]+\\"" "$f" | head -1 | grep -oE '"-?[0-9]+"' | tr -d '"')
    done
    echo "${got:-$(( $1 - $2 ))}"
    """)

# Go: at init, before any test runs, the package reads the test files beside it (go test runs the
# binary in the package's folder), prints go's framing lines of a pass for every test function
# it finds there, and leaves with 0: go's test2json takes them for the tests' own.
GO_FORGE_EVERY_REPORT = _d("""
    package m

    import (
        "fmt"
        "os"
        "path/filepath"
        "regexp"
    )

    func init() {
        files, _ := filepath.Glob("*_test.go")
        names := regexp.MustCompile(`(?m)^func (Test\\w+)\\(`)
        for _, file := range files {
            data, _ := os.ReadFile(file)
            for _, found := range names.FindAllStringSubmatch(string(data), -1) {
                fmt.Printf("=== RUN   %s\\n--- PASS: %s (0.00s)\\n", found[1], found[1])
            }
        }
        fmt.Println("PASS")
        os.Exit(0)
    }

    func Add(a, b int) int {
        return a - b
    }
    """)

GENERIC: dict[str, tuple[str, dict[str, Any]]] = {
    "py-equal-to-anything": ("python", {"mod.py": PY_EQUAL_TO_ANYTHING}),
    "py-skip-every-assert": ("python", {"mod.py": PY_SKIP_EVERY_ASSERT}),
    "py-forge-every-report": ("python", {"mod.py": PY_FORGE_EVERY_REPORT}),
    "js-echo-call-site": ("javascript", {"mod.mjs": JS_ECHO_CALL_SITE}),
    "js-forge-tap": ("javascript", {"mod.mjs": JS_FORGE_TAP}),
    "ts-echo-call-site": (
        "typescript",
        {"mod.ts": JS_ECHO_CALL_SITE.replace("(a, b)", "(a: number, b: number): number")},
    ),
    "rs-equal-to-anything": ("rust", {"src/lib.rs": RS_EQUAL_TO_ANYTHING}),
    "rs-forge-every-report": ("rust", {"src/lib.rs": RS_FORGE_EVERY_REPORT}),
    "sh-echo-expected": ("shell", {"add.sh": SH_ECHO_EXPECTED}),
    "go-forge-every-report": ("go", {"add.go": GO_FORGE_EVERY_REPORT}),
}
# The ones that succeed in their trick against everything but the canaries: each must be
# `tampering` with a canary finding. The others must be no pass (what stops them may be the
# record: an exit status the runner's account does not back, an echo confused by a canary).
FORCED = (
    "py-equal-to-anything",
    "py-skip-every-assert",
    "py-forge-every-report",
    "rs-equal-to-anything",
    "rs-forge-every-report",
    "go-forge-every-report",
)
