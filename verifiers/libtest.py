"""cargo's libtest, read from its lines (`test name ... ok`, `test result: ...`): the hidden run
builds one test binary, so one block is expected; a summary the per-test lines do not back, or
a count announced that they do not reach, is forged. libtest's output is not signed."""

from __future__ import annotations

import re

from verifiers.findings import TamperFinding
from verifiers.runner_report import RunnerReport, TestResult
from verifiers.test_outcomes import FAILED, PASSED, SKIPPED

# A test's line; output a test's child process wrote to the terminal may run into its start.
_CARGO_TEST = re.compile(r"^[^\n]*?test (\S+)(?: - should panic(?: with [^.]*)?)? \.\.\. (ok|FAILED|ignored)\b", re.M)
_CARGO_RESULT = re.compile(r"^test result: (\w+)\. (\d+) passed; (\d+) failed", re.M)
_CARGO_RUNNING = re.compile(r"^running (\d+) tests?$", re.M)
# A failed test's section: its panic's message follows "panicked at" (on the next line since Rust 1.73).
_CARGO_FAILURE = re.compile(
    r"^---- (?P<name>\S+) stdout ----\n(?:.*\n)*?thread '[^']*'(?: \(\d+\))? panicked at [^\n]*?(?::\n|, |: )(?P<message>[^\n]*)",
    re.M,
)


def cargo_report(output: str) -> RunnerReport:
    """libtest's lines; the hidden run builds one test binary, so one block is expected."""
    tests: dict[str, TestResult] = {}
    panics = _cargo_panics(output)
    for name, status in _CARGO_TEST.findall(output):
        outcome = {"ok": PASSED, "FAILED": FAILED}.get(status, SKIPPED)
        outcome = FAILED if tests.get(name, TestResult(outcome)).outcome == FAILED else outcome
        tests[name] = TestResult(outcome, failure=panics.get(name, "panic") if outcome == FAILED else None)
    results = _CARGO_RESULT.findall(output)
    evidence = []
    passed = sum(int(p) for _, p, _ in results)
    failed = sum(int(f) for _, _, f in results)
    lines_passed = sum(1 for t in tests.values() if t.outcome == PASSED)
    lines_failed = sum(1 for t in tests.values() if t.outcome == FAILED)
    if results and (passed, failed) != (lines_passed, lines_failed):
        evidence.append(
            TamperFinding(
                "summary-forged",
                None,
                None,
                f"the summary says {passed} passed, {failed} failed; the per-test lines say {lines_passed} and {lines_failed}",
            )
        )
    announced = sum(int(n) for n in _CARGO_RUNNING.findall(output))
    if results and announced != len(tests):
        evidence.append(
            TamperFinding(
                "summary-forged", None, None, f"libtest announced {announced} tests and reported {len(tests)}"
            )
        )
    ok = bool(results) and all(status == "ok" for status, _, _ in results)
    return RunnerReport(
        "cargo",
        started=bool(_CARGO_RUNNING.search(output)),
        finished=bool(results),
        exit_code=(0 if ok else 101) if results else None,
        tests=tests,
        passed=passed if results else None,
        failed=failed if results else None,
        evidence=tuple(evidence),
    )


def _cargo_panics(output: str) -> dict[str, str]:
    """How each failed test panicked, from libtest's `---- name stdout ----` sections: "assertion"
    when the panic is an assertion's (`assertion ... failed`), else "panic"."""
    found = {}
    for match in _CARGO_FAILURE.finditer(output):
        found[match["name"]] = "assertion" if match["message"].lstrip("'").startswith("assertion") else "panic"
    return found


__all__ = ["cargo_report"]
