"""The runner harness: how a task's test command is run so that only quotabench's own runner
configuration is read and the verdict comes from a channel the tests' code cannot forge.

The files beside this module are what the sandbox mounts read-only at `$QB_HARNESS`:

    pytest_run.py      pytest in safe-path mode, workspace last on sys.path, harness config;
                       loads the four below from their files
    pytest_sign.py     the channel's signer: refuses records offered by any code but the harness's
    pytest_watch.py    the audit hook: what workspace code does, reported; the harness's state, refused
    pytest_plugin.py   per-test signed records, a witness of each test function that returned,
                       the checks before each test and at the end
    pytest_guard.py    fingerprints (runner, the tests' stdlib oracles, the hidden modules' own
                       names), code prints, the equality probe
    pytest.ini         the harness's pytest config (a task's own config is used where it has one)
    node_preload.mjs   loaded by `--import` before any workspace module; in the graded process
                       (not a child forked with its flags) it loads node_harness.mjs
    node_harness.mjs   freezes node:assert,
                       node:assert/strict and node:test, signs the records of node_reporter.mjs
    node_guard.cjs     hidden-test reads, the inspector, internal bindings: refused and recorded;
                       every worker thread runs it first
    node_intrinsics.mjs  the built-ins (Number.isNaN, TypeError[Symbol.hasInstance]...) snapshotted
    node_reporter.mjs  a node:test reporter writing per-test records (name, file:line:column),
                       checking the event stream's classes at every event, the built-ins at the end
    junit_run.sh       Gradle's layout compiled by javac, run by JUnit 5's console launcher, its
                       XML reports after the run (`gradle test`, `./gradlew test`, `mvn test`)
    catch2_run.sh      the command's g++ line linked with Catch2's main, the binary's XML report
                       after the run (`g++ ... FILES`)
    node_run.mjs       imports the test files in one process (node and tsx)
    node_jest.mjs      jest-style specs (`jest FILE`): the jest globals over node:test's own
                       functions, fixed; node_expect.mjs's `expect`; node_jest_hooks.mjs
                       (extensionless relative imports), registered before the guard

`harness_command` turns a task's command into the harnessed one; a command quotabench does not
recognise (a custom verifier script) runs as written and is graded by its exit status.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

HARNESS_DIR = Path(__file__).resolve().parent
# Part of a task version's key for its reference test identities: a new harness re-counts them.
HARNESS_VERSION = "4"  # 4: jest commands, once scripts, run on node:test
RUNNERS = ("pytest", "node", "tsx", "cargo", "go", "junit", "catch2", "script")
_SHELL = set(";|&<>`$(){}\n*?")
# jest flags that take a separate value, and those that pick which tests run: a command using
# them means more than its files, and runs as written.
JEST_VALUE_FLAGS = frozenset({"-c", "--config", "-t", "--testNamePattern", "--testTimeout", "--reporters", "-w"})
JEST_PICKS = frozenset({"-t", "--testNamePattern", "-o", "--onlyChanged", "--changedSince", "--findRelatedTests"})
# Values the sandbox's cargo is forced to: no flags, wrappers or linkers from anywhere else.
CARGO_ENV = (
    "CARGO_ENCODED_RUSTFLAGS=",
    "CARGO_ENCODED_RUSTDOCFLAGS=",
    "RUSTC_WRAPPER=",
    "RUSTC_WORKSPACE_WRAPPER=",
    "CARGO_BUILD_RUSTC_WRAPPER=",
    "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER=",
    "CARGO_TARGET_DIR=target",
    "CARGO_INCREMENTAL=0",
)

# Values the sandbox's go is forced to: offline, no workspace, toolchain switch, user config or
# cgo (no C constructor in a test binary), and every test run, never a cached result.
GO_ENV = (
    "GOFLAGS=-mod=mod",
    "GOPROXY=off",
    "GOSUMDB=off",
    "GOWORK=off",
    "GOENV=off",
    "GOTOOLCHAIN=local",
    "CGO_ENABLED=0",
    "GOEXPERIMENT=",
    "GODEBUG=",
)
# go test flags that change what judges or what runs (an exec wrapper, an overlay, another
# build's flags or module file) make the command not ours.
GO_FOREIGN = frozenset({"-exec", "-overlay", "-toolexec", "-o", "-c", "-modfile", "-pgo", "-C", "-ldflags", "-gcflags"})

# The build tools whose `test` runs a Java project's JUnit tests: quotabench runs their layout
# (src/main/java, src/test/java) itself, offline. `--offline`, `-q` and friends change nothing.
JUNIT_HEADS = frozenset({"gradle", "./gradlew", "gradlew", "mvn", "./mvnw"})
JUNIT_QUIET = frozenset({"--offline", "-q", "--quiet", "-i", "--info", "--console=plain", "-o", "-B", "--batch-mode"})
CXX_HEADS = frozenset({"g++", "c++"})
# g++ flags that would put another program, output or link step between the command and the
# test binary the harness runs: a command with them is not ours.
CXX_FOREIGN = ("-o", "-c", "-S", "-E", "-B", "-wrapper", "-fplugin", "-specs", "--specs", "-Wl,", "-Xlinker", "-shared")


@dataclass(frozen=True)
class Harnessed:
    runner: str  # one of RUNNERS
    command: str  # what the sandbox runs
    channel: bool  # the command writes signed records (pytest, node, tsx)
    files: tuple[str, ...] = ()  # the test files it names


def harness_command(command: str) -> Harnessed:
    """The harnessed form of a task's test command (see the module docstring)."""
    if any(ch in _SHELL for ch in command):
        return Harnessed("script", command, False)
    try:
        words = shlex.split(command)
    except ValueError:
        return Harnessed("script", command, False)
    if not words or "=" in words[0]:
        return Harnessed("script", command, False)
    head = words[0]
    if head in ("python", "python3") and words[1:3] == ["-m", "pytest"]:
        return _pytest(head, words[3:])
    if head == "pytest":
        return _pytest("python", words[1:])
    if head in ("node", "tsx") and "--test" in words[1:]:
        return _node(head, words[1:])
    if head == "jest" or (head == "npx" and words[1:2] == ["jest"]):
        return _jest(words[1:] if head == "jest" else words[2:])
    if head == "cargo" and words[1:2] == ["test"]:
        return _cargo(words)
    if head == "go" and words[1:2] == ["test"]:
        return _go(words[2:], command)
    if head in JUNIT_HEADS and words[1:2] == ["test"]:
        return _junit(words[2:], command)
    if head in CXX_HEADS:
        return _catch2(words, command)
    return Harnessed("script", command, False)


def _quote(words: list[str]) -> str:
    return " ".join(shlex.quote(w) for w in words)


def _pytest(python: str, args: list[str]) -> Harnessed:
    files = tuple(a.split("::")[0] for a in args if not a.startswith("-"))
    return Harnessed("pytest", f'{python} -P -s -B "$QB_HARNESS/pytest_run.py" {_quote(args)}'.rstrip(), True, files)


def _jest(args: list[str]) -> Harnessed:
    """`jest FILE...` runs on node:test with quotabench's jest layer (node_jest.mjs): no jest
    package, and the same harness as `node --test`. jest's own flags change nothing here and are
    dropped; one that takes a value or picks tests (`-t`), or no file named, is not ours."""
    if any(a in JEST_VALUE_FLAGS or a.split("=")[0] in JEST_PICKS for a in args):
        return Harnessed("script", _quote(["jest", *args]), False)
    files = [a for a in args if not a.startswith("-")]
    if not files:  # jest alone searches the tree for spec files
        return Harnessed("script", _quote(["jest", *args]), False)
    typed = any(Path(f).suffix in (".ts", ".mts", ".cts", ".tsx") for f in files)
    return _node("tsx" if typed else "node", ["--test", *files], jest=True)


def _node(head: str, args: list[str], jest: bool = False) -> Harnessed:
    flags = [a for a in args if a.startswith("-") and a != "--test" and not a.startswith("--test-reporter")]
    files = [a for a in args if not a.startswith("-")]
    if not files:  # `node --test` alone searches the tree for test files: not a command we own
        return Harnessed("script", _quote([head, *args]), False)
    # tsx's own CLI runs node in a child process that does not inherit the channel's pipes: run
    # node with tsx's loader instead (QB_TSX_LOADER, found beside the tsx on PATH).
    # Source maps: a test's place (its identity) is its line in the .ts file, not in tsx's output.
    loader = ["--enable-source-maps", '--import="$QB_TSX_LOADER"'] if head == "tsx" else []
    harness = [
        *loader,
        '--import="$QB_HARNESS/node_preload.mjs"',
        "--test-reporter=tap",
        "--test-reporter-destination=stdout",
        '--test-reporter="$QB_HARNESS/node_reporter.mjs"',
        "--test-reporter-destination=/dev/null",
    ]
    entry = ['"$QB_HARNESS/node_run.mjs"', *(["--jest"] if jest else [])]
    command = " ".join(["node", *harness, _quote(flags), *entry, _quote(files)])
    return Harnessed(head, " ".join(command.split()), True, tuple(files))


def _cargo(words: list[str]) -> Harnessed:
    if "--" in words:
        cut = words.index("--")
        libtest = words[cut + 1 :]
        words = words[:cut]
    else:
        libtest = []
    libtest = [a for a in libtest if a not in ("-q", "--quiet") and not a.startswith("--format")]
    command = f"env {' '.join(CARGO_ENV)} {_quote(words)} -- --format=pretty {_quote(libtest)}"
    return Harnessed("cargo", command.rstrip(), False)


def _go(args: list[str], command: str) -> Harnessed:
    """`go test [packages] [flags]` as `go test -json -count=1`: per-test events, and every test
    run (go caches a passing package's result otherwise). `-v`, `-json` and `-count` are its own;
    a flag that puts another program or build between go and the tests leaves it not ours. vet
    is off unless the command asks for it: the tests judge, and vet's type-check of every
    imported package was most of a cold build (2.5 of 3.1 s)."""
    words, drop, vet = [], False, ["-vet=off"]
    for word in args:
        if drop:
            drop = False
            continue
        flag = word.split("=")[0].replace("--", "-", 1)
        if flag in GO_FOREIGN or flag == "-args":
            return Harnessed("script", command, False)
        if flag in ("-v", "-json") or flag.startswith("-test."):
            continue
        if flag == "-vet":
            vet = []
        if flag == "-count":
            drop = "=" not in word
            continue
        words.append(word)
    return Harnessed("go", f"env {' '.join(GO_ENV)} {_quote(['go', 'test', '-json', '-count=1', *vet, *words])}", False)


def _junit(args: list[str], command: str) -> Harnessed:
    """`gradle test` (or gradlew, mvn) as javac and JUnit's console launcher over the Gradle
    layout (junit_run.sh). A flag that picks tests or configures the build leaves it not ours."""
    if any(a not in JUNIT_QUIET for a in args):
        return Harnessed("script", command, False)
    return Harnessed("junit", 'bash "$QB_HARNESS/junit_run.sh"', False)


def _catch2(words: list[str], command: str) -> Harnessed:
    """`g++ [flags] FILES` as that build of a test binary with Catch2's main, run with Catch2's
    XML reporter (catch2_run.sh). The files it names are the ones compiled; no output, link or
    wrapper flag of its own."""
    files = tuple(w for w in words[1:] if not w.startswith("-") and Path(w).suffix in CXX_SOURCES)
    if not files or any(w.startswith(CXX_FOREIGN) for w in words[1:]):
        return Harnessed("script", command, False)
    return Harnessed("catch2", f'bash "$QB_HARNESS/catch2_run.sh" {_quote(words)}', False, files)


CXX_SOURCES = (".cpp", ".cc", ".cxx", ".c++", ".C")


def precompile() -> None:
    """Compile the harness's Python modules on the host, once (an installed package has them
    already; a read-only one is left alone): the sandbox runs `python -B`, which reads bytecode
    but never writes it, and would otherwise compile them for every graded command."""
    import compileall

    try:
        compileall.compile_dir(HARNESS_DIR, maxlevels=0, quiet=2)
    except OSError:
        pass


def protected_names(files: list[str]) -> set[str]:
    """The module names hidden test files are imported under (test_hidden.py -> test_hidden)."""
    names = set()
    for rel in files:
        path = Path(rel)
        if path.suffix == ".py":
            names.add(path.stem)
    return names
