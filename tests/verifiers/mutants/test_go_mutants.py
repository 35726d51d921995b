"""Go mutants: the table-driven mutator on a small Go package. Every mutant parses with
tree-sitter-go, the edits Go's compiler rejects by rule are not written (a `-` of strings, a
removal that leaves a variable or an import unused, a bare early return from a function with
results), and, with `go` on PATH, the mutants build."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from verifiers.mechanics import parses_clean
from verifiers.mutants.generate import mutants_of_source

SAMPLE = b"""// Package sample is a small Go package for mutation tests.
package sample

import (
\t"errors"
\t"fmt"
\t"strings"
)

// ErrEmpty is returned for empty input.
var ErrEmpty = errors.New("empty")

type Stack[T any] struct{ items []T }

func (s *Stack[T]) Push(v T) { s.items = append(s.items, v) }

func (s *Stack[T]) Pop() (T, bool) {
\tvar zero T
\tif len(s.items) == 0 {
\t\treturn zero, false
\t}
\tv := s.items[len(s.items)-1]
\ts.items = s.items[:len(s.items)-1]
\treturn v, true
}

// Clamp limits v to [lo, hi].
func Clamp(v, lo, hi int) int {
\tif v < lo {
\t\treturn lo
\t}
\tif v > hi {
\t\treturn hi
\t}
\treturn v
}

// Sum adds the values; Mean divides by their count.
func Mean(xs []float64) (float64, error) {
\tif len(xs) == 0 {
\t\treturn 0, ErrEmpty
\t}
\ttotal := 0.0
\tfor i := 0; i < len(xs); i++ {
\t\ttotal += xs[i]
\t}
\treturn total / float64(len(xs)), nil
}

func Label(n int) string {
\tparts := []string{}
\tcount := 0
\tfor n > 0 && count < 10 {
\t\tparts = append(parts, fmt.Sprint(n%10))
\t\tn /= 10
\t\tcount++
\t}
\tif !(len(parts) > 0) || n != 0 {
\t\treturn "zero"
\t}
\treturn "n=" + strings.Join(parts, ",")
}

func Window(xs []int, size int) (out [][]int, err error) {
\tif size <= 0 {
\t\terr = fmt.Errorf("size %d", size)
\t\treturn
\t}
\tfor start := 0; start+size <= len(xs); start++ {
\t\tout = append(out, xs[start:start+size])
\t}
\treturn
}

func Counts(words []string) map[string]int {
\tseen := map[string]int{}
\tfor _, w := range words {
\t\tw = strings.ToLower(w)
\t\tseen[w]++
\t}
\tfmt.Println("counted", len(seen))
\treturn seen
}

func Apply(f func(int, int) int, a, b int) int { return f(a, b) }

func Max(a, b int) int {
\tm := a
\tif b > a {
\t\tm = b
\t}
\treturn m
}
"""

# go test runs these analyzers of go vet before the tests: a mutant they reject is unviable too.
GO_TEST_VET = ("-atomic", "-bool", "-buildtags", "-errorsas", "-ifaceassert", "-nilfunc", "-printf", "-stringintconv")


def descriptions(source: bytes) -> list[str]:
    return [m.description.split(" ", 1)[1] for m in mutants_of_source(source, "sample.go").mutants]


def test_go_mutants_parse_and_cover_every_kind() -> None:
    found = mutants_of_source(SAMPLE, "sample.go")
    kinds = Counter(m.kind for m in found.mutants)
    assert set(kinds) == {
        "comparison",
        "arithmetic",
        "logical",
        "constant",
        "negate",
        "remove",
        "swap-args",
        "early-return",
    }
    assert all(parses_clean(m.source, "go") for m in found.mutants)
    assert len({m.source for m in found.mutants}) == len(found.mutants) and SAMPLE not in {
        m.source for m in found.mutants
    }
    assert found.unparsed == 0
    functions = {m.function for m in found.mutants}
    assert {"Clamp", "Pop", "Mean", "Label"} <= functions  # methods and functions are named


def test_early_returns_return_each_results_zero_value() -> None:
    shown = descriptions(SAMPLE)
    assert "early-return: ∅ → return *new(T), false;" in shown  # a type parameter
    assert "early-return: ∅ → return 0, nil;" in shown
    assert 'early-return: ∅ → return "";' in shown
    assert "early-return: ∅ → return nil;" in shown  # a map
    assert shown.count("early-return: ∅ → return;") == 2  # Push has no results, Window named ones
    assert not any("return None" in s or "Default" in s for s in shown)


def test_loop_conditions_are_negated() -> None:
    shown = descriptions(SAMPLE)
    assert "negate: i < len(xs) → !(i < len(xs))" in shown  # a for clause
    assert "negate: n > 0 && count < 10 → !(n > 0 && count < 10)" in shown  # `for cond {`


def test_no_edit_go_rejects_by_rule() -> None:
    sources = [m.source for m in mutants_of_source(SAMPLE, "sample.go").mutants]
    assert not [s for s in sources if b'"n=" -' in s]  # strings have no `-`
    assert not [s for s in sources if b"append(v," in s or b"append(fmt" in s]  # append's slice comes first
    assert not [s for s in sources if b"[-1]" in s or b"(-1)" in s]  # negative indexes, unsigned types
    assert [s for s in sources if b"Apply(f func(int, int) int, a, b int) int { return f(b, a) }" in s]


def test_removals_that_leave_a_variable_or_an_import_unused_are_skipped() -> None:
    source = b"""package p

import "fmt"

func Show(n int) int {
\tlabel := fmt.Sprint(n)
\tprintln(label)
\ttotal := 0
\ttotal = n * 2
\tcount := 0
\tcount = n
\treturn count + total
}

func Log() {
\tfmt.Println("x")
}
"""
    shown = descriptions(source)
    assert "remove: println(label) → ∅" not in shown  # label is read nowhere else
    assert 'remove: fmt.Println("x") → ∅' in shown  # fmt is still used by Show
    assert "remove: total = n * 2 → ∅" in shown  # total is still read by the return
    ranged = descriptions(
        b"package p\n\nfunc Keys(m map[string]int) []string {\n\tkeys := []string{}\n\tfor k := range m {\n"
        b"\t\tkeys = append(keys, k)\n\t}\n\tfor _, k := range keys {\n\t\tprintln(k)\n\t}\n\treturn keys\n}\n"
    )
    assert "remove: keys = append(keys, k) → ∅" not in ranged  # its loop's k, unread (another k is read)
    only = descriptions(source.replace(b"label := fmt.Sprint(n)", b"label := n"))
    assert 'remove: fmt.Println("x") → ∅' not in only  # fmt's last use


@pytest.mark.skipif(shutil.which("go") is None, reason="needs the go toolchain")
def test_go_mutants_build(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "GOFLAGS": "-mod=mod",
        "GOPROXY": "off",
        "GOCACHE": str(tmp_path / "cache"),
        "GOPATH": str(tmp_path / "gopath"),
        "GOTOOLCHAIN": "local",
        "CGO_ENABLED": "0",
    }
    mutants = mutants_of_source(SAMPLE, "sample.go").mutants
    broken = []
    for number, mutant in enumerate(mutants):
        module = tmp_path / f"m{number}"
        module.mkdir()
        (module / "go.mod").write_text("module sample\n\ngo 1.18\n")
        (module / "sample.go").write_bytes(mutant.source)
        done = subprocess.run(
            ["go", "vet", *GO_TEST_VET, "./..."], cwd=module, env=env, capture_output=True, text=True, timeout=120
        )
        if done.returncode:
            broken.append(f"{mutant.description}: {done.stderr.strip()[-200:]}")
    assert len(broken) <= len(mutants) // 10, broken
