"""Catch2's XML report, read into the runner's report (verifiers/verdict.py) and into the text
a person reads of the run.

A test's id is its TEST_CASE's name (Catch2 refuses two of one name), its place the file and
line it is declared at. A failed expression (REQUIRE, CHECK, ...) is an assertion; an
`<Exception>` is an exception the test let out; a `<FatalErrorCondition>` (a signal) or a test
that never ended (the binary died) is a crash.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from verifiers.report_sections import elements, split_reports
from verifiers.runner_report import RunnerReport, TestResult
from verifiers.test_outcomes import FAILED, PASSED

REPORT = "catch2.xml"


def _said(element: ET.Element) -> str:
    original = " ".join((element.findtext("Original") or "").split())
    expanded = " ".join((element.findtext("Expanded") or "").split())
    where = f"{element.get('filename')}:{element.get('line')}"
    shown = f"{element.get('type', 'CHECK')}( {original} )"
    return f"  {where}: FAILED: {shown}" + (f" with expansion: {expanded}" if expanded and expanded != original else "")


def catch2_report(output: str) -> RunnerReport:
    head, reports = split_reports(output)
    text = [head.rstrip("\n")] if head.strip() else []
    tests: dict[str, TestResult] = {}
    finished = False
    current: tuple[str, str] | None = None
    failure: str | None = None
    for event, element in elements(reports.get(REPORT, "")):
        tag = element.tag
        if event == "start" and tag == "TestCase":
            current = (element.get("name", ""), f"{element.get('filename')}:{element.get('line')}")
            failure = None
        elif event == "end" and current is not None and tag == "Expression" and element.get("success") == "false":
            failure = failure or "assertion"
            text.append(_said(element))
        elif event == "end" and current is not None and tag == "Exception":
            failure = failure or "exception"
            text.append(
                f"  {element.get('filename')}:{element.get('line')}: exception: {' '.join((element.text or '').split())}"
            )
        elif event == "end" and current is not None and tag == "FatalErrorCondition":
            failure = "crash"
            text.append(f"  fatal error: {' '.join((element.text or '').split())}")
        elif event == "end" and current is not None and tag == "OverallResult":
            ok = element.get("success") == "true" and failure is None
            if not ok:
                failure = failure or "assertion"
            name, place = current
            tests[name] = TestResult(PASSED if ok else FAILED, place, failure=None if ok else failure)
            text.append(f"{'PASSED' if ok else 'FAILED'}: {name} ({place})")
        elif event == "end" and tag == "TestCase":
            current = None
        elif event == "end" and tag == "Catch":
            finished = True
    if current is not None:  # the binary died inside this test
        tests[current[0]] = TestResult(FAILED, current[1], failure="crash")
        text.append(f"FAILED: {current[0]} ({current[1]}): the test binary died in it")
        finished = False
    failed = sum(1 for t in tests.values() if t.outcome == FAILED)
    passed = sum(1 for t in tests.values() if t.outcome == PASSED)
    if reports:
        text.append(f"{passed} passed, {failed} failed" + ("" if finished else " (the report was cut short)"))
    return RunnerReport(
        "catch2",
        started=bool(tests) or current is not None,
        finished=finished,
        exit_code=(1 if failed else 0) if finished else None,
        tests=tests,
        passed=passed if finished else None,
        failed=failed if finished else None,
        text="\n".join(text) + "\n",
    )


__all__ = ["REPORT", "catch2_report"]
