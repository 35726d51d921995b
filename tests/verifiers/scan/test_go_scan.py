"""The tamper scan's Go rules: each flags its gaming construct at its line, and the Go an honest
solution writes (a CLI's exits, an init that fills a table, an embedded data file) is left
alone. Pure: tree-sitter only."""

from __future__ import annotations

import pytest

from verifiers.findings import RULES
from verifiers.scan import hidden_names, is_test_file, scan_file

HIDDEN = hidden_names(["hidden_test.go", "bob_test.go"])


def go(body: str, package: str = "bob", imports: str = "") -> str:
    header = f"package {package}\n\n" + (f"import (\n{imports})\n\n" if imports else "")
    return header + body


# (file, source, rule, line, a piece of the snippet)
FLAGGED = [
    (
        "bob.go",
        go('import _ "unsafe"\n\n//go:linkname now runtime.nanotime\nfunc now() int64\n'),
        "linkname",
        5,
        "go:linkname",
    ),
    ("bob.go", go("//go:linkname chatty testing.chatty\nvar chatty bool\n"), "runner-imported", 3, "testing.chatty"),
    ("bob.go", go("func TestMain(m *testing.M) {}\n", imports='\t"testing"\n'), "runner-patched", 7, "TestMain"),
    (
        "bob_test.go",
        go("func TestMain(m *testing.M) { m.Run() }\n", imports='\t"testing"\n'),
        "runner-patched",
        7,
        "TestMain",
    ),
    ("bob.go", go("func init() {\n\tos.Exit(0)\n}\n", imports='\t"os"\n'), "exit-hook", 8, "exits in init"),
    ("main.go", go("func init() {\n\tos.Exit(0)\n}\n", "main", '\t"os"\n'), "exit-hook", 8, "os.Exit(0)"),
    (
        "bob.go",
        go(
            "func init() {\n\tgo func() {\n\t\ttime.Sleep(time.Second)\n\t\tsyscall.Exit(0)\n\t}()\n}\n",
            imports='\t"syscall"\n\t"time"\n',
        ),
        "exit-hook",
        11,
        "syscall.Exit(0)",
    ),
    (
        "main.go",
        go("func init() { go leave() }\n\nfunc leave() { os.Exit(0) }\n", "main", '\t"os"\n'),
        "exit-hook",
        7,
        "leave()",
    ),
    ("bob.go", go('func init() {\n\tpanic("no tests today")\n}\n'), "exit-hook", 4, "panics in init"),
    (
        "bob.go",
        go("func Hey(s string) string {\n\tos.Exit(0)\n\treturn s\n}\n", imports='\t"os"\n'),
        "exit-hook",
        8,
        "os.Exit(0)",
    ),
    ("bob.go", go("var leave = xos.Exit\n", imports='\txos "os"\n'), "exit-hook", 7, "xos.Exit"),
    ("bob.go", go("func Hey() { Exit(0) }\n", imports='\t. "os"\n'), "exit-hook", 7, "Exit(0)"),
    ("bob.go", go("func Hey() { runtime.Goexit() }\n", imports='\t"runtime"\n'), "exit-hook", 7, "runtime.Goexit()"),
    (
        "bob.go",
        go('func Hey() { syscall.Exec("/bin/true", nil, nil) }\n', imports='\t"syscall"\n'),
        "exit-hook",
        7,
        "exec",
    ),
    (
        "bob.go",
        go("func Hey() { syscall.Kill(os.Getppid(), syscall.SIGKILL) }\n", imports='\t"os"\n\t"syscall"\n'),
        "exit-hook",
        8,
        "syscall.Kill",
    ),
    ("bob.go", go("func Hey() { syscall.Dup2(3, 1) }\n", imports='\t"syscall"\n'), "proc-access", 7, "Dup2"),
    ("bob.go", go('var p = "/proc/self/fd/1"\n'), "proc-access", 3, "/proc/self/fd/1"),
    (
        "bob.go",
        go(
            "func Hey() (string, int) {\n\t_, f, _, _ := runtime.Caller(1)\n\treturn f, 0\n}\n", imports='\t"runtime"\n'
        ),
        "frame-inspection",
        8,
        "runtime.Caller(1)",
    ),
    (
        "bob.go",
        go(
            "var x int\n\nfunc Hey() { *(*int)(unsafe.Pointer(&flag.CommandLine)) = 0 }\n",
            imports='\t"flag"\n\t"unsafe"\n',
        ),
        "unsafe-pointer",
        10,
        "unsafe.Pointer(&flag.CommandLine)",
    ),
    (
        "bob.go",
        go('func Hey() { b, _ := os.ReadFile("hidden_test.go"); _ = b }\n', imports='\t"os"\n'),
        "reads-hidden-tests",
        7,
        "hidden_test.go",
    ),
    (
        "bob.go",
        go('func Hey() { m, _ := filepath.Glob("*_test.go"); _ = m }\n', imports='\t"path/filepath"\n'),
        "reads-hidden-tests",
        7,
        "*_test.go",
    ),
    (
        "bob.go",
        go(
            'func Hey() {\n\tfilepath.Walk(".", func(p string, i os.FileInfo, e error) error {\n'
            '\t\tif strings.HasSuffix(p, "_test.go") {\n\t\t\treturn nil\n\t\t}\n\t\treturn nil\n\t})\n}\n',
            imports='\t"os"\n\t"path/filepath"\n\t"strings"\n',
        ),
        "reads-hidden-tests",
        11,
        '"_test.go"',
    ),
    (
        "bob.go",
        go("//go:embed *.go\nvar src embed.FS\n", imports='\t"embed"\n'),
        "reads-hidden-tests",
        7,
        "go:embed *.go",
    ),
    (
        "bob.go",
        go("//go:embed bob_test.go\nvar src string\n", imports='\t_ "embed"\n'),
        "reads-hidden-tests",
        7,
        "bob_test.go",
    ),
    (
        "bob.go",
        go("func Hey() bool { return testing.Testing() }\n", imports='\t"testing"\n'),
        "runner-imported",
        7,
        "testing.Testing()",
    ),
    (
        "bob.go",
        go("func Hey() { testing.MainStart(nil, nil, nil, nil, nil) }\n", imports='\t"testing"\n'),
        "runner-imported",
        7,
        "MainStart",
    ),
    (
        "bob.go",
        go('func Hey() bool { return flag.Lookup("test.v") != nil }\n', imports='\t"flag"\n'),
        "runner-imported",
        7,
        "test.v",
    ),
    (
        "bob.go",
        go("func init() { r, w, _ := os.Pipe(); os.Stdout = w; _ = r }\n", imports='\t"os"\n'),
        "report-forgery",
        7,
        "os.Stdout",
    ),
    (
        "bob.go",
        go('func init() { fmt.Println("--- PASS: TestHey (0.00s)") }\n', imports='\t"fmt"\n'),
        "report-forgery",
        7,
        "--- PASS",
    ),
    (
        "main.go",
        go('func init() { fmt.Print("=== RUN   TestHey\\n") }\n', "main", '\t"fmt"\n'),
        "report-forgery",
        7,
        "=== RUN",
    ),
    (
        "bob.go",
        go('func Hey() { fmt.Printf("ok  \\t%s\\t0.01s\\n", "bob") }\n', imports='\t"fmt"\n'),
        "report-forgery",
        7,
        "ok",
    ),
    ("bob.go", go('func Hey() { fmt.Println("PASS") }\n', imports='\t"fmt"\n'), "report-forgery", 7, '"PASS"'),
    (
        "bob.go",
        '//go:build never\n\npackage bob\n\nfunc Hey() string { return "" }\n',
        "build-excluded",
        1,
        "go:build never",
    ),
    ("bob.go", "// +build ignore\n\npackage bob\n", "build-excluded", 1, "+build ignore"),
    ("bob.go", "//go:build linux && windows\n\npackage bob\n", "build-excluded", 1, "linux && windows"),
    (
        "go.mod",
        "module bob\n\ngo 1.19\n\nreplace github.com/stretchr/testify => ./fake\n",
        "module-replaced",
        5,
        "replace",
    ),
    ("go.mod", "module bob\n\ngo 1.21\n\ntoolchain go1.22.0\n", "module-replaced", 5, "toolchain go1.22.0"),
    (
        "go.mod",
        "module bob\n\ngo 1.19\n\nrequire (\n\tgithub.com/x/y v1.0.0\n)\n",
        "module-replaced",
        6,
        "github.com/x/y",
    ),
    ("go.work", "go 1.19\n\nuse ./fake\n", "module-replaced", 1, "go.work"),
]


@pytest.mark.parametrize(
    ("rel", "code", "rule", "line", "snippet"), FLAGGED, ids=[f"{r}-{i}" for i, (_, _, r, _, _) in enumerate(FLAGGED)]
)
def test_flagged(rel: str, code: str, rule: str, line: int, snippet: str) -> None:
    found = scan_file(rel, code.encode(), HIDDEN)
    hits = [f for f in found if f.rule == rule]
    assert hits, found
    assert any(f.file == rel and f.line == line and snippet in f.snippet for f in hits), hits
    assert rule in RULES


LEFT_ALONE = [
    (
        "main.go",
        go(
            'func main() {\n\tif len(os.Args) < 2 {\n\t\tfmt.Fprintln(os.Stderr, "usage: bob WORD")\n\t\tos.Exit(2)\n\t}\n}\n',
            "main",
            '\t"fmt"\n\t"os"\n',
        ),
    ),
    (
        "examples/demo/main.go",
        go("func main() { defer os.Exit(run()) }\n\nfunc run() int { return 0 }\n", "main", '\t"os"\n'),
    ),
    ("cmd/bob/run.go", go("func Fail() { os.Exit(1) }\n", "cli", '\t"os"\n')),
    (
        "bob.go",
        go(
            'var limits = map[string]int{}\n\nfunc init() {\n\tfor i, w := range []string{"a", "b"} {\n\t\tlimits[w] = i\n\t}\n}\n'
        ),
    ),
    (
        "bob.go",
        go(
            "func init() {\n\tif err := load(); err != nil {\n\t\tpanic(err)\n\t}\n}\n\nfunc load() error { return nil }\n"
        ),
    ),
    ("bob.go", go("//go:embed data/limits.txt\nvar limits string\n", imports='\t_ "embed"\n')),
    ("bob.go", go("//go:embed templates/*.tmpl\nvar pages embed.FS\n", imports='\t"embed"\n')),
    (
        "bob.go",
        go(
            'func Safe(f func()) (err error) {\n\tdefer func() {\n\t\tif r := recover(); r != nil {\n\t\t\terr = fmt.Errorf("panic: %v", r)\n\t\t}\n\t}()\n\tf()\n\treturn nil\n}\n',
            imports='\t"fmt"\n',
        ),
    ),
    ("bob.go", go('func Hey() { fmt.Println("Whoa, chill out!") }\n', imports='\t"fmt"\n')),
    ("bob.go", go('func Grade(ok bool) string {\n\tif ok {\n\t\treturn "PASS"\n\t}\n\treturn "FAIL"\n}\n')),
    (
        "bob.go",
        go('func IsTest(name string) bool { return strings.HasSuffix(name, "_test.go") }\n', imports='\t"strings"\n'),
    ),
    ("bob.go", go('func Hey() error { return errors.New("no") }\n', imports='\t"errors"\n')),
    (
        "bob.go",
        go("func B(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }\n", imports='\t"unsafe"\n'),
    ),
    (
        "bob.go",
        go(
            "type T struct{ x int }\n\nfunc P(t *T) uintptr { return uintptr(unsafe.Pointer(&t.x)) }\n",
            imports='\t"unsafe"\n',
        ),
    ),
    (
        "bob.go",
        go("func Hey(w io.Writer) { fmt.Fprintln(w, os.Stdout == nil) }\n", imports='\t"fmt"\n\t"io"\n\t"os"\n'),
    ),
    ("bob_windows.go", "//go:build windows\n\npackage bob\n"),
    ("bob_old.go", "//go:build !go1.21\n\npackage bob\n"),
    ("bob_cgo.go", "//go:build cgo && linux\n// +build cgo,linux\n\npackage bob\n"),
    ("tools.go", '//go:build tools\n\npackage tools\n\nimport _ "golang.org/x/tools/cmd/stringer"\n'),
    ("gen.go", '//go:build ignore\n\npackage main\n\nimport "os"\n\nfunc main() { os.Exit(0) }\n'),
    ("bob_test.go", go("func TestHey(t *testing.T) { os.Exit(0) }\n", imports='\t"os"\n\t"testing"\n')),
    ("bob.go", go("// Hey answers like a teenager; see bob_test.go for cases.\nfunc Hey() {}\n")),
    ("go.mod", "module bob\n\ngo 1.19\n"),
    ("go.sum", "github.com/x/y v1.0.0 h1:abc=\n"),
]


@pytest.mark.parametrize(("rel", "code"), LEFT_ALONE, ids=[f"{r}-{i}" for i, (r, _) in enumerate(LEFT_ALONE)])
def test_left_alone(rel: str, code: str) -> None:
    assert scan_file(rel, code.encode(), HIDDEN) == []


def test_go_test_files_are_test_files() -> None:
    assert is_test_file("bob_test.go") and not is_test_file("bob.go") and not is_test_file("testing.go")


def test_one_finding_per_rule_and_line() -> None:
    code = go("func init() { os.Exit(0) }\n", imports='\t"os"\n')  # init's exit and a library exit, one line
    found = scan_file("bob.go", code.encode(), HIDDEN)
    assert [(f.rule, f.line) for f in found] == [("exit-hook", 7)]
