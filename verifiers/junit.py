"""JUnit's XML reports (the console launcher's legacy format, one per engine), read into the
runner's report (verifiers/verdict.py).

A test's id is its class and its name as JUnit reports them: `LeapTest.leapYear()`,
`LeapTest$Leaps.century()` (a @Nested class), `LeapTest.divisible(int)[2]` (a parameterized
invocation). A `<failure>` is an assertion that failed (an AssertionError: JUnit's own, AssertJ's,
opentest4j's); an `<error>` is the exception the test died of, by its class. A report the tests'
own output forged is one the canaries still contradict; one that is cut short or absent is an
unfinished run.
"""

from __future__ import annotations

from verifiers.findings import TamperFinding
from verifiers.report_sections import elements, split_reports
from verifiers.runner_report import RunnerReport, TestResult
from verifiers.test_outcomes import FAILED, PASSED, SKIPPED

ENGINES = ("TEST-junit-jupiter.xml", "TEST-junit-vintage.xml")


def _read(text: str) -> tuple[dict[str, TestResult], tuple[int, int, int] | None, bool]:
    """(tests, the suite's own counts (tests, failures + errors, skipped), the suite ended)."""
    tests: dict[str, TestResult] = {}
    counts: tuple[int, int, int] | None = None
    current: str | None = None
    outcome, failure = PASSED, None
    ended = False
    for event, element in elements(text):
        tag = element.tag
        if event == "start" and tag == "testsuite":
            try:
                a = element.attrib
                counts = (int(a["tests"]), int(a["failures"]) + int(a["errors"]), int(a.get("skipped", 0)))
            except (KeyError, ValueError):
                counts = None
        elif event == "start" and tag == "testcase":
            current = f"{element.get('classname', '')}.{element.get('name', '')}"
            outcome, failure = PASSED, None
        elif event == "start" and current is not None and tag in ("failure", "error"):
            outcome = FAILED
            failure = failure or ("assertion" if tag == "failure" else element.get("type") or "error")
        elif event == "start" and current is not None and tag == "skipped" and outcome != FAILED:
            outcome = SKIPPED
        elif event == "end" and tag == "testcase" and current is not None:
            if tests.get(current, TestResult(PASSED)).outcome == FAILED:
                outcome, failure = FAILED, tests[current].failure  # a second account never clears one
            tests[current] = TestResult(outcome, failure=failure)
            current = None
        elif event == "end" and tag == "testsuite":
            ended = True
    return tests, counts, ended


def junit_report(output: str) -> RunnerReport:
    """The engines' reports: the run finished when each report present ended, its suite's counts
    agreeing with its test cases."""
    head, reports = split_reports(output)
    tests: dict[str, TestResult] = {}
    evidence: list[TamperFinding] = []
    finished = any(name in reports for name in ENGINES)
    for name in ENGINES:
        if name not in reports:
            continue
        found, counts, ended = _read(reports[name])
        finished = finished and ended
        for test_id, result in found.items():
            if test_id in tests and tests[test_id].outcome == FAILED:
                result = tests[test_id]
            tests[test_id] = result
        if counts is not None and ended:
            failed = sum(1 for t in found.values() if t.outcome == FAILED)
            skipped = sum(1 for t in found.values() if t.outcome == SKIPPED)
            if (len(found), failed, skipped) != counts:
                evidence.append(
                    TamperFinding(
                        "summary-forged",
                        None,
                        None,
                        f"{name} counts {counts[0]} tests, {counts[1]} failed, {counts[2]} skipped; "
                        f"its test cases are {len(found)}, {failed} failed, {skipped} skipped",
                    )
                )
    failed = sum(1 for t in tests.values() if t.outcome == FAILED)
    return RunnerReport(
        "junit",
        started=bool(tests),
        finished=finished,
        exit_code=(1 if failed else 0) if finished else None,
        tests=tests,
        passed=sum(1 for t in tests.values() if t.outcome == PASSED) if finished else None,
        failed=failed if finished else None,
        evidence=tuple(evidence),
        text=head,
    )


__all__ = ["junit_report"]
