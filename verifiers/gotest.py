"""`go test -json`'s events, read into the runner's report (verifiers/verdict.py) and back into
the text `go test -v` prints, which is what a person reads of the run.

Each test is its own events (`run`, then `pass`, `fail` or `skip`); a package ends with one of
its own. A test that failed through t.Error/t.Fatal failed by assertion; one whose output holds
a `panic:` line (its own, or the test binary's timeout) panicked. Events come from go's own
test2json, which reads the test binary's framing lines: what a test writes of its own is
`output` of that test, so a forged pass is one the canaries still contradict.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

from verifiers.findings import TamperFinding
from verifiers.runner_report import RunnerReport, TestResult
from verifiers.test_outcomes import FAILED, PASSED, SKIPPED

_OUTCOMES = {"pass": PASSED, "fail": FAILED, "skip": SKIPPED}


@dataclass(frozen=True)
class GoEvents:
    """What one run's events say: per test (`Test` or `Test/sub`) its outcome and how it failed,
    per package how it ended, and the text a person reads."""

    tests: dict[str, tuple[str, str | None]]  # id -> (outcome, "assertion" | "panic" | None)
    packages: dict[str, str]  # import path -> passed | failed | skipped ("no test files")
    started: bool  # some test ran
    text: str
    unfinished: tuple[str, ...] = ()  # tests that ran and never ended (the binary died)


def _events(output: str) -> Iterator[dict[str, object] | str]:
    for line in output.splitlines():
        if line.startswith("{"):
            try:
                event = json.loads(line)
            except ValueError:
                yield line
                continue
            if isinstance(event, dict) and isinstance(event.get("Action"), str):
                yield event
                continue
        yield line


def read_events(output: str) -> GoEvents:
    tests: dict[str, tuple[str, str | None]] = {}
    packages: dict[str, str] = {}
    running: dict[str, None] = {}
    panicked: set[str] = set()
    text: list[str] = []
    for event in _events(output):
        if isinstance(event, str):
            text.append(event + "\n")  # go's own lines: build errors, vet
            continue
        action, test, package = event.get("Action"), event.get("Test"), event.get("Package")
        printed = event.get("Output")
        if isinstance(printed, str):
            text.append(printed)
            if isinstance(test, str) and printed.lstrip().startswith("panic:"):
                panicked.add(test)
        if action == "run" and isinstance(test, str):
            running[test] = None
        elif action in _OUTCOMES and isinstance(test, str):
            running.pop(test, None)
            outcome = _OUTCOMES[str(action)]
            if tests.get(test, (outcome, None))[0] == FAILED:
                outcome = FAILED  # a second account of one test never clears a failure
            tests[test] = (outcome, None)
        elif action in _OUTCOMES and isinstance(package, str) and test is None:
            packages[package] = _OUTCOMES[str(action)]
    for test in running:  # the binary died (a panic, a timeout) with these still running
        panicked.add(test)
        tests[test] = (FAILED, None)
    for test, (outcome, _) in list(tests.items()):
        if outcome == FAILED:
            root = test.split("/")[0]
            died = test in panicked or root in panicked
            tests[test] = (FAILED, "panic" if died else "assertion")
    return GoEvents(tests, packages, bool(tests or running), "".join(text), tuple(running))


def consistency(events: GoEvents) -> list[TamperFinding]:
    """A package that says it passed with a failed test of its own, or a failed test's parent
    that passed: go's own accounts do not contradict each other."""
    found = []
    failed = [t for t, (outcome, _) in events.tests.items() if outcome == FAILED]
    if failed and events.packages and all(p == PASSED for p in events.packages.values()):
        shown = ", ".join(failed[:8])
        found.append(TamperFinding("summary-forged", None, None, f"every package passed, and tests failed: {shown}"))
    for test in failed:
        parent = test.rsplit("/", 1)[0] if "/" in test else None
        if parent is not None and events.tests.get(parent, (FAILED, None))[0] == PASSED:
            found.append(TamperFinding("summary-forged", None, None, f"{parent} passed with its subtest {test} failed"))
            break
    return found


def go_report(output: str) -> RunnerReport:
    """`go test -json`'s events : a package's own end is the runner's."""
    events = read_events(output)
    tests = {i: TestResult(outcome, failure=how) for i, (outcome, how) in events.tests.items()}
    finished = bool(events.packages) and not events.unfinished
    ok = finished and all(p in (PASSED, SKIPPED) for p in events.packages.values())
    return RunnerReport(
        "go",
        started=events.started,
        finished=finished,
        exit_code=(0 if ok else 1) if finished else None,
        tests=tests,
        passed=sum(1 for t in tests.values() if t.outcome == PASSED) if finished else None,
        failed=sum(1 for t in tests.values() if t.outcome == FAILED) if finished else None,
        evidence=tuple(consistency(events)),
        text=events.text,
    )


__all__ = ["GoEvents", "consistency", "go_report", "read_events"]
