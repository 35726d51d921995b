"""Go canaries: the sites of go test functions (plain `if` checks, tables, DeepEqual, errors,
subtests, helpers), their names and the way back from a planted run, and — with go on the
machine — that every candidate planted into a real module compiles, and that the correct code
fails each contradiction by an assertion while passing every real test."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.sites import changed
from verifiers.canaries import go
from verifiers.canaries.plant import plan_for, prove_plan
from verifiers.canaries.pool import canary_files, pool_for
from verifiers.canaries.proof import Proof
from verifiers.canaries.sites import CONTRADICTION, NEW_INPUT, parse
from verifiers.mechanics import syntax_problems, walk
from verifiers.tasks import Task, load_suite
from verifiers.verdict import RunnerReport, TestResult

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")

CODE = b"""package calc

import (
	"errors"
	"strconv"
	"strings"
)

var (
	ErrEmpty  = errors.New("empty input")
	ErrSyntax = errors.New("syntax error")
)

type Point struct{ X, Y int }

func Add(a, b int) int { return a + b }

func Split(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}

func Parse(s string) (int, error) {
	if strings.TrimSpace(s) == "" {
		return 0, ErrEmpty
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, ErrSyntax
	}
	return n, nil
}

func Mean(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

func IsEven(n int) bool { return n%2 == 0 }

func Upper(r rune) rune { return r - 'a' + 'A' }

func Mid(a, b Point) Point { return Point{(a.X + b.X) / 2, (a.Y + b.Y) / 2} }

func Clamp(n int) uint8 {
	if n > 255 {
		return 255
	}
	return uint8(n)
}

func Counts(words []string) map[string]int {
	counts := map[string]int{}
	for _, w := range words {
		counts[w]++
	}
	return counts
}
"""

TESTS = b"""package calc

import (
	"errors"
	"math"
	"os"
	"reflect"
	"testing"
)

func check(t *testing.T, got, want int) {
	t.Helper()
	if got != want {
		t.Errorf("got %d, want %d", got, want)
	}
}

func TestMain(m *testing.M) {
	os.Exit(m.Run())
}

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Errorf("Add(2, 3) = %d, want 5", got)
	}
	if Add(-1, 1) != 0 {
		t.Error("Add(-1, 1) is not 0")
	}
	check(t, Add(20, 22), 42)
}

// TestAddTable runs a table of sums as subtests.
func TestAddTable(t *testing.T) {
	tests := []struct {
		name       string
		a, b, want int
	}{
		{"small", 1, 2, 3},
		{"carry", 9, 1, 10},
		{name: "zero", a: 0, b: 0, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Add(tc.a, tc.b); got != tc.want {
				t.Fatalf("Add(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

func TestSplitFields(t *testing.T) {
	got := Split("a,b,c")
	want := []string{"a", "b", "c"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Split = %q, want %q", got, want)
	}
	if n := len(Split("")); n != 0 {
		t.Errorf("Split of nothing has %d fields", n)
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]struct {
		in   string
		want error
	}{
		"empty":  {"  ", ErrEmpty},
		"letter": {"4x", ErrSyntax},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(c.in)
			if err == nil {
				t.Fatal("want an error")
			}
			if !errors.Is(err, c.want) {
				t.Errorf("Parse(%q) = %v, want %v", c.in, err, c.want)
			}
		})
	}
}

func TestParseNumber(t *testing.T) {
	n, err := Parse("42")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if n != 42 {
		t.Errorf("Parse = %d", n)
	}
	expect := func(in string, want int) {
		t.Helper()
		if got, _ := Parse(in); got != want {
			t.Errorf("Parse(%q) = %d, want %d", in, got, want)
		}
	}
	expect("7", 7)
}

func TestMeanAndParity(t *testing.T) {
	want := 2.5
	if got := Mean([]float64{1, 4}); math.Abs(got-want) > 1e-9 {
		t.Errorf("Mean = %v", got)
	}
	if got := Mean([]float64{1.5, 1.5}); got != 1.5 {
		t.Errorf("Mean = %v", got)
	}
	if !IsEven(4) {
		t.Error("4 is even")
	}
	if IsEven(3) {
		t.Error("3 is odd")
	}
}

func TestUpperAndMid(t *testing.T) {
	if got := Upper('q'); got != 'Q' {
		t.Errorf("Upper = %c", got)
	}
	want := Point{X: 2, Y: 3}
	if got := Mid(Point{1, 2}, Point{3, 4}); got != want {
		t.Errorf("Mid = %v", got)
	}
	if got := Clamp(300); got != 255 {
		t.Errorf("Clamp = %d", got)
	}
}

func TestCountsWords(t *testing.T) {
	got := Counts([]string{"a", "b", "a"})
	if want := map[string]int{"a": 2, "b": 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("Counts = %v", got)
	} else if len(got) == 2 {
		t.Log("two words")
	}
}
"""

EXTERNAL = b"""package calc_test

import (
	"testing"

	"calc"
)

func TestAddOutside(t *testing.T) {
	if got := calc.Add(40, 2); got == 42 {
		return
	} else {
		t.Errorf("calc.Add(40, 2) = %d", got)
	}
}
"""


def _task(tmp: Path) -> Task:
    (tmp / "task" / "hidden" / "testdata").mkdir(parents=True)
    (tmp / "task" / "workspace").mkdir()
    (tmp / "task" / "hidden" / "calc_test.go").write_bytes(TESTS)
    (tmp / "task" / "hidden" / "outside_test.go").write_bytes(EXTERNAL)
    (tmp / "task" / "hidden" / "testdata" / "old_test.go").write_bytes(b"package broken\n")
    (tmp / "task" / "hidden" / "_draft_test.go").write_bytes(b"package broken\n")
    (tmp / "task" / "workspace" / "go.mod").write_text("module calc\n\ngo 1.19\n")
    (tmp / "task" / "workspace" / "calc.go").write_bytes(CODE)
    return Task("go-calc", tmp / "task", "go", "feature", "", "go test ./...", "go test ./...")


def _sites(source: bytes, seed: int = 1) -> dict[str, list[tuple[str, str, bytes]]]:
    tests = go.tests_of("calc_test.go", source, random.Random(seed))
    found = {}
    for unit in tests.units:
        found[unit.name] = [(s.kind, s.how, changed(source, s)[unit.start : unit.end + 40]) for s in unit.sites]
    return found


def test_go_tests_and_the_sites_of_their_checks():
    found = _sites(TESTS)
    assert list(found) == [
        "TestAdd",
        "TestAddTable",
        "TestSplitFields",
        "TestParseErrors",
        "TestParseNumber",
        "TestMeanAndParity",
        "TestUpperAndMid",
        "TestCountsWords",
    ]  # TestMain runs the tests, it is none
    hows = {name: {(kind, how) for kind, how, _ in sites} for name, sites in found.items()}
    assert (CONTRADICTION, "number moved") in hows["TestAdd"] and (NEW_INPUT, "input changed") in hows["TestAdd"]
    assert (CONTRADICTION, "number moved") in hows["TestAddTable"]  # one row's want
    assert (NEW_INPUT, "table row changed") in hows["TestAddTable"]  # one row's a or b
    assert (CONTRADICTION, "string altered") in hows["TestSplitFields"]
    assert (CONTRADICTION, "expected error swapped") in hows["TestParseErrors"]
    assert (CONTRADICTION, "comparison flipped") in hows["TestParseErrors"]  # err == nil -> err != nil
    assert (CONTRADICTION, "number moved") in hows["TestParseNumber"]  # n != 42, and expect("7", 7)
    assert (CONTRADICTION, "comparison flipped") in hows["TestMeanAndParity"]  # a margin: only negated
    assert (CONTRADICTION, "truth flipped") in hows["TestMeanAndParity"]
    assert (CONTRADICTION, "character changed") in hows["TestUpperAndMid"]
    assert (CONTRADICTION, "number moved") in hows["TestCountsWords"]  # a map's value, never its key
    table = [text for kind, how, text in found["TestAddTable"] if how == "number moved"]
    assert any(re.search(rb'\{"small", 1, 2, \d+\}', t) and b'{"small", 1, 2, 3}' not in t for t in table)
    swapped = next(t for _, how, t in found["TestParseErrors"] if how == "expected error swapped")
    assert b'{"  ", ErrSyntax}' in swapped or b'{"4x", ErrEmpty}' in swapped
    margin = next(t for _, how, t in found["TestMeanAndParity"] if how == "comparison flipped")
    assert b"math.Abs(got-want) <= 1e-9" in margin and b"want := 2.5" in margin  # the margin's want kept


def test_helpers_count_as_checks():
    found = _sites(TESTS)
    add = [t for kind, how, t in found["TestAdd"] if kind == CONTRADICTION and b"check(t, Add(20, 22), 42)" not in t]
    assert any(re.search(rb"check\(t, Add\(20, 22\), \d+\)", t) for t in add)  # its `want` parameter
    parse = [t for _, _, t in found["TestParseNumber"]]
    assert any(re.search(rb'expect\("7", \d+\)', t) and b'expect("7", 7)' not in t for t in parse)


@pytest.mark.parametrize("seed", range(40))
def test_a_changed_value_keeps_its_kind_and_is_new_to_its_test(seed):
    root = parse(TESTS, "go")
    for unit in go.tests_of("calc_test.go", TESTS, random.Random(seed)).units:
        inside = [n for n in walk(root) if unit.start <= n.start_byte < unit.end]
        for site in unit.sites:
            for start, end, new in site.edits:
                old = TESTS[start:end]
                if site.how in ("comparison flipped", "truth flipped"):
                    continue
                if old[:1].isdigit():
                    assert re.fullmatch(rb"\d+" if old.isdigit() else rb"[\d.e+-]+", new), (old, new)
                    held = {abs(float(n.text)) for n in inside if n.type in ("int_literal", "float_literal")}
                    assert abs(float(new)) not in held - {abs(float(old))} and new != old
                elif old[:1] in b"\"'`":
                    assert new[:1] == old[:1] and new[-1:] == old[-1:] and new != old
                elif old in (b"true", b"false"):
                    assert {old, new} == {b"true", b"false"}
                else:
                    assert re.fullmatch(rb"Err\w+", new), (old, new)
                if old == b"255":
                    assert int(new) < 255  # 256 and more would not fit the uint8 it is compared with


def test_a_canary_is_named_like_a_go_test_and_read_back_to_the_real_ids(tmp_path):
    task = _task(tmp_path)
    assert canary_files(task, "go", ()) == ["calc_test.go", "outside_test.go"]
    pool = pool_for(task, "go", (), 3)
    proofs = {c.key: Proof({"": ("failed", "assertion")}) for c in pool.candidates}
    taken = pool.files["calc_test.go"].taken | pool.files["outside_test.go"].taken
    for seed in range(8):
        plan = plan_for(pool, "go", proofs, seed)
        assert 3 <= len(plan.planted) <= 6
        for planted in plan.planted:
            assert re.fullmatch(r"Test[A-Z0-9]\w*", planted.name) and planted.name not in taken
            words = set(re.findall(r"[A-Z][a-z]*", planted.name.removeprefix("Test")))
            assert words <= {"Add", "Table", "Split", "Fields", "Parse", "Errors", "Number", "Mean", "And"} | {
                "Parity",
                "Upper",
                "Mid",
                "Counts",
                "Words",
                "Outside",
                "Case",
                "Value",
                "Input",
                "Result",
                "Check",
                "Works",
                "Edge",
                "Basic",
            }
    plan = plan_for(pool, "go", proofs, 2)
    real = {u.name for f in pool.files.values() for u in f.units}
    tests = {name: TestResult("passed") for name in real} | {"TestAddTable/carry": TestResult("passed")}
    for planted in plan.planted:
        tests[planted.name] = TestResult("failed", failure="assertion")
        tests[planted.name + "/carry"] = TestResult("failed", failure="assertion")
    report = RunnerReport("go", started=True, finished=True, exit_code=1, tests=tests, passed=0, failed=0)
    restored, seen = plan.restore(report)
    assert set(restored.tests) == real | {"TestAddTable/carry"}
    assert all(dict(o.seen).keys() == {"", "/carry"} for o in seen)
    assert plan.findings(seen, proofs) == []
    assert pool.missing("go", list(restored.tests)) == []
    others = {f"{rel}::{u.name}" for rel, t in pool.files.items() for u in t.units if u.name != "TestAddTable"}
    assert set(pool.missing("go", ["TestAddTable/carry"])) == others  # a subtest's id names its test


def _go_test(module: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(
        os.environ,
        GOFLAGS="-mod=mod",
        GOPROXY="off",
        GOCACHE=str(tmp / "gocache"),
        GOPATH=str(tmp / "gopath"),
        CGO_ENABLED="0",
        GOWORK="off",
    )
    return subprocess.run(["go", *args], cwd=module, env=env, capture_output=True, text=True, timeout=300)


def _outcomes(run: subprocess.CompletedProcess[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Each test's outcome and its output, from `go test -json`."""
    outcomes: dict[str, str] = {}
    output: dict[str, str] = {}
    for line in run.stdout.splitlines():
        event = json.loads(line)
        name = event.get("Test")
        if not name:
            continue
        if event["Action"] in ("pass", "fail", "skip"):
            outcomes[name] = event["Action"]
        elif event["Action"] == "output":
            output[name] = output.get(name, "") + event["Output"]
    return outcomes, output


def _module(task: Task, planted: Path, dest: Path) -> Path:
    shutil.copytree(task.workspace, dest)
    for file in planted.rglob("*.go"):
        rel = file.relative_to(planted)
        if not any(part == "testdata" or part.startswith("_") for part in rel.parts):
            shutil.copy(file, dest / rel)
    return dest


def _planted_run(
    task: Task, plan, tmp: Path
) -> tuple[dict[str, str], dict[str, str], subprocess.CompletedProcess[str]]:
    module = _module(task, plan.write(task.hidden, tmp / "planted"), tmp / "module")
    vet = _go_test(module, tmp, "vet", "./...")
    assert vet.returncode == 0, vet.stderr  # every candidate at once: the file still builds
    run = _go_test(module, tmp, "test", "-json", "-count=1", "./...")
    outcomes, output = _outcomes(run)
    return outcomes, output, run


@needs_go
def test_every_candidate_builds_and_the_correct_code_fails_each_contradiction(tmp_path):
    task = _task(tmp_path)
    pool = pool_for(task, "go", (), 11)
    plan = prove_plan(pool, "go")
    assert len(plan.planted) >= 12
    outcomes, output, run = _planted_run(task, plan, tmp_path)
    assert "panic:" not in run.stdout
    canaries = {p.name: p for p in plan.planted}
    for name, outcome in outcomes.items():
        if name.partition("/")[0] not in canaries:
            assert outcome == "pass", (name, output.get(name))
    for planted in plan.planted:
        assert planted.name in outcomes, planted.name  # go test ran it
        if planted.kind == CONTRADICTION:
            assert outcomes[planted.name] == "fail", (planted.claim, output.get(planted.name))
    failed = [p for p in plan.planted if outcomes[p.name] == "fail"]
    assert len(failed) >= 10
    kinds = {p.how for p in failed}
    assert {"number moved", "string altered", "expected error swapped", "comparison flipped"} <= kinds


@needs_go
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_grades_canaries_build_and_fail_beside_the_passing_real_tests(tmp_path, seed):
    task = _task(tmp_path)
    pool = pool_for(task, "go", (), seed)
    proofs = {c.key: Proof({"": ("failed", "assertion")}) for c in pool.candidates if c.kind == CONTRADICTION}
    plan = plan_for(pool, "go", proofs, seed + 100)
    outcomes, output, _ = _planted_run(task, plan, tmp_path)
    canaries = {p.name for p in plan.planted}
    assert len(canaries) >= 3 and all(outcomes[name] == "fail" for name in canaries)
    real = {n: o for n, o in outcomes.items() if n.partition("/")[0] not in canaries}
    assert real and set(real.values()) == {"pass"}


def _go_tasks() -> list[Task]:
    return [t for t in load_suite(FIXTURES / "core").tasks if t.language == "go"]


@pytest.mark.parametrize("seed", [0, 1])
def test_every_planted_go_file_of_the_corpus_still_parses(seed):
    tasks = _go_tasks()
    assert tasks
    for task in tasks:
        pool = pool_for(task, "go", (), seed)
        assert len(pool.candidates) >= 3, task.id
        for rel, data in prove_plan(pool, "go").files.items():
            assert syntax_problems(data, "go") == [], (task.id, rel)


@needs_go
@pytest.mark.parametrize("task", _go_tasks(), ids=lambda t: t.id)
def test_the_corpus_reference_fails_every_go_candidate(tmp_path, task):
    pool = pool_for(task, "go", (), 5)
    plan = prove_plan(pool, "go")
    module = tmp_path / "module"
    shutil.copytree(task.workspace, module)
    for file in task.reference.iterdir():
        shutil.copy(file, module / file.name)
    for rel in pool.files:
        (module / rel).write_bytes(plan.files[rel])
    run = _go_test(module, tmp_path, "test", "-json", "-count=1", "./...")
    outcomes, output = _outcomes(run)
    canaries = {p.name for p in plan.planted}
    assert all(o == "pass" for n, o in outcomes.items() if n.partition("/")[0] not in canaries)
    proven = [name for name in canaries if outcomes.get(name) == "fail"]
    assert len(proven) >= 3 and "panic:" not in run.stdout
