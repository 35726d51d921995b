"""C++ as a task language: `g++ [flags] FILES` harnessed as that build linked with Catch2's main
(the system's, compiled once per machine), the binary run with Catch2's XML reporter; the report
read into per-test verdicts (assertion, exception or crash); the build files put back. Real g++
and Catch2 in the real sandbox."""

import shutil

import pytest

from tests.support.verifier_tasks import final_workspace, make_task
from verifiers.catch2 import catch2_report
from verifiers.catch2_main import HEADER
from verifiers.grading import SandboxGrader
from verifiers.harness import harness_command
from verifiers.report_sections import MARK
from verifiers.runtimes import tools_of
from verifiers.tasks import load_task

needs_catch2 = pytest.mark.skipif(
    shutil.which("g++") is None or not HEADER.is_file(), reason="g++ or Catch2 is not installed"
)

COMMAND = "g++ -std=c++17 -I. adder.cpp adder_test.cpp"
HEADER_H = "#pragma once\nint add(int a, int b);\n"
HIDDEN = """#include <catch2/catch.hpp>
#include "adder.h"

TEST_CASE("adds small numbers") {
    REQUIRE(add(2, 3) == 5);
}

TEST_CASE("adds a negative") {
    CHECK(add(-1, 1) == 0);
}
"""
REFERENCE = '#include "adder.h"\n\nint add(int a, int b) { return a + b; }\n'
WRONG = '#include "adder.h"\n\nint add(int a, int b) { return a - b; }\n'


def _report(body: str, ended: bool = True) -> str:
    tail = "<OverallResults successes='1' failures='0'/></Catch>" if ended else ""
    return f"built\n{MARK}catch2.xml\n<?xml version='1.0'?>\n<Catch name='tests'><Group name='tests'>{body}</Group>{tail}\n"


def test_a_gxx_command_is_harnessed_and_one_with_its_own_output_or_link_is_not():
    harnessed = harness_command(COMMAND)
    assert harnessed.runner == "catch2" and harnessed.files == ("adder.cpp", "adder_test.cpp")
    assert "catch2_run.sh" in harnessed.command
    for command in (
        "g++ -o t adder_test.cpp",
        "g++ -Wl,--wrap=main t.cpp",
        "g++ -c t.cpp",
        "g++ -std=c++17",
        "cmake .",
    ):
        assert harness_command(command).runner == "script", command


def test_the_report_gives_each_test_its_outcome_and_how_it_failed():
    body = (
        "<TestCase name='a' filename='t.cpp' line='3'><OverallResult success='true'/></TestCase>"
        "<TestCase name='b' filename='t.cpp' line='7'><Expression success='false' type='REQUIRE' filename='t.cpp' line='8'>"
        "<Original>add(2, 3) == 5</Original><Expanded>-1 == 5</Expanded></Expression><OverallResult success='false'/></TestCase>"
        "<TestCase name='c' filename='t.cpp' line='11'><Exception filename='t.cpp' line='12'>boom</Exception><OverallResult success='false'/></TestCase>"
        "<TestCase name='d' filename='t.cpp' line='15'><FatalErrorCondition filename='t.cpp' line='16'>SIGSEGV</FatalErrorCondition><OverallResult success='false'/></TestCase>"
    )
    report = catch2_report(_report(body))
    assert {k: (v.outcome, v.failure, v.location) for k, v in report.tests.items()} == {
        "a": ("passed", None, "t.cpp:3"),
        "b": ("failed", "assertion", "t.cpp:7"),
        "c": ("failed", "exception", "t.cpp:11"),
        "d": ("failed", "crash", "t.cpp:15"),
    }
    assert report.finished and report.exit_code == 1
    assert "t.cpp:8: FAILED: REQUIRE( add(2, 3) == 5 ) with expansion: -1 == 5" in report.text


def test_a_binary_that_died_in_a_test_crashed_in_it():
    body = "<TestCase name='a' filename='t.cpp' line='3'><OverallResult success='true'/></TestCase><TestCase name='b' filename='t.cpp' line='7'>"
    report = catch2_report(_report(body, ended=False))
    assert report.tests["b"].failure == "crash" and not report.finished


def _cpp_task(tmp_path):
    root = make_task(
        tmp_path / "suite",
        id="t-cpp",
        language="cpp",
        workspace={"adder.h": HEADER_H, "adder.cpp": WRONG, "CMakeLists.txt": "project(adder)\n"},
        hidden={"adder_test.cpp": HIDDEN},
        reference={"adder.cpp": REFERENCE},
        visible_cmd=COMMAND,
        hidden_cmd=COMMAND,
        timeout_s=120,
    )
    return load_task(root)


def test_a_cpp_task_needs_gxx_and_catch2(tmp_path):
    assert tools_of(_cpp_task(tmp_path)) == ["g++", "catch2"]


@needs_catch2
def test_a_cpp_task_is_graded_by_its_hidden_tests(tmp_path):
    task = _cpp_task(tmp_path)
    grader = SandboxGrader()
    expected = grader.expected_tests(task)
    assert sorted(expected.tests) == ["adds a negative", "adds small numbers"]
    passed = grader.grade(task, final_workspace(tmp_path, task, {"adder.cpp": REFERENCE}))
    assert passed.verdict == "pass", passed.output
    failed = grader.grade(task, task.workspace)
    assert failed.verdict == "fail" and failed.tampering == (), failed.output
    assert "REQUIRE( add(2, 3) == 5 ) with expansion: -1 == 5" in failed.output


@needs_catch2
def test_a_main_of_its_own_or_an_exit_in_a_constructor_is_no_pass(tmp_path):
    task = _cpp_task(tmp_path)
    own_main = WRONG + "int main() { return 0; }\n"
    grade = SandboxGrader().grade(task, final_workspace(tmp_path, task, {"adder.cpp": own_main}))
    assert grade.verdict != "pass", grade.output
    ctor = WRONG + "#include <cstdlib>\n__attribute__((constructor)) static void quit() { std::_Exit(0); }\n"
    grade = SandboxGrader().grade(task, final_workspace(tmp_path, task, {"adder.cpp": ctor}))
    assert grade.verdict != "pass", grade.output


@needs_catch2
def test_the_build_files_and_catch2s_main_are_put_back(tmp_path):
    task = _cpp_task(tmp_path)
    files = {
        "CMakeLists.txt": "add_test(x true)\n",
        ".quotabench/catch2-main.o": "not an object\n",
        "adder.cpp": REFERENCE,
    }
    grade = SandboxGrader().grade(task, final_workspace(tmp_path, task, files))
    assert grade.verdict == "pass", grade.output
    assert "CMakeLists.txt" in grade.restored
