"""Java as a task language: `gradle test` (or gradlew, mvn) harnessed as javac and JUnit 5's
console launcher over the Gradle layout, offline, the system's JUnit and AssertJ jars first on
the class path; its XML reports read into per-test verdicts (assertion or exception); the hidden
run built with the hidden test sources alone; the build files put back. Real javac and JUnit in
the real sandbox."""

import shutil
from pathlib import Path

import pytest

from tests.support.verifier_tasks import final_workspace, make_task
from verifiers.grading import SandboxGrader
from verifiers.harness import harness_command
from verifiers.junit import junit_report
from verifiers.report_sections import MARK
from verifiers.runtimes import tools_of
from verifiers.tasks import load_task

needs_java = pytest.mark.skipif(
    shutil.which("javac") is None or not Path("/usr/share/java/junit-platform-console-standalone.jar").is_file(),
    reason="javac or JUnit 5 is not installed",
)

HIDDEN = """import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

public class AdderTest {
    @Test
    public void addsSmall() {
        assertEquals(5, Adder.add(2, 3));
    }

    @Test
    public void addsNegative() {
        assertThat(Adder.add(-1, 1)).isEqualTo(0);
    }
}
"""
VISIBLE = """import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

public class VisibleTest {
    @Test
    public void visible() {
        assertEquals(3, Adder.add(1, 2));
    }
}
"""
REFERENCE = "public class Adder {\n    public static int add(int a, int b) {\n        return a + b;\n    }\n}\n"
WRONG = "public class Adder {\n    public static int add(int a, int b) {\n        return a - b;\n    }\n}\n"
MAIN = "src/main/java/Adder.java"


def _report(
    *cases: str, name: str = "TEST-junit-jupiter.xml", counts: str = 'tests="2" failures="1" errors="0" skipped="0"'
) -> str:
    body = "".join(cases)
    return (
        f"run text\n{MARK}{name}\n<?xml version='1.0'?>\n<testsuite name='JUnit Jupiter' {counts}>{body}</testsuite>\n"
    )


def test_a_build_tool_test_command_is_harnessed_and_others_are_not():
    for command in ("gradle test", "./gradlew test --offline", "mvn test -q", "gradlew test"):
        assert harness_command(command).runner == "junit", command
    for command in ("gradle test --tests Foo", "mvn test -Dtest=Foo", "gradle build", "java -jar x.jar"):
        assert harness_command(command).runner == "script", command


def test_the_reports_give_each_test_its_outcome_and_how_it_failed():
    output = _report(
        "<testcase name='a()' classname='T'/>",
        "<testcase name='b()' classname='T'><failure type='org.opentest4j.AssertionFailedError'/></testcase>",
        counts='tests="3" failures="1" errors="1" skipped="1"',
    )
    output = output.replace(
        "</testsuite>",
        "<testcase name='c()' classname='T$Inner'><error type='java.lang.IllegalStateException'/></testcase>"
        "<testcase name='d(int)[1]' classname='T'><skipped/></testcase></testsuite>",
    )
    report = junit_report(output)
    assert {k: (v.outcome, v.failure) for k, v in report.tests.items()} == {
        "T.a()": ("passed", None),
        "T.b()": ("failed", "assertion"),
        "T$Inner.c()": ("failed", "java.lang.IllegalStateException"),
        "T.d(int)[1]": ("skipped", None),
    }
    assert report.finished and report.exit_code == 1 and report.text == "run text"
    assert [e.rule for e in report.evidence] == ["summary-forged"]  # it said 3 tests; 4 are listed


def test_a_report_cut_short_or_missing_is_an_unfinished_run():
    cut = _report("<testcase name='a()' classname='T'/>").split("</testsuite>")[0]
    assert not junit_report(cut).finished
    assert not junit_report("only text, no report\n").finished
    with_doctype = _report("<testcase name='a()' classname='T'/>").replace("<?xml version='1.0'?>", "<!DOCTYPE x>")
    assert junit_report(with_doctype).tests == {}


def _java_task(tmp_path, hidden_cmd="gradle test"):
    root = make_task(
        tmp_path / "suite",
        id="t-java",
        language="java",
        workspace={MAIN: WRONG, "src/test/java/VisibleTest.java": VISIBLE, "build.gradle": "plugins { id 'java' }\n"},
        hidden={"src/test/java/AdderTest.java": HIDDEN},
        reference={MAIN: REFERENCE},
        visible_cmd="gradle test",
        hidden_cmd=hidden_cmd,
        timeout_s=120,
    )
    return load_task(root)


def test_a_java_task_needs_the_jdk_and_junit_not_gradle(tmp_path):
    assert tools_of(_java_task(tmp_path)) == ["javac", "java", "junit"]


@needs_java
def test_a_java_task_is_graded_by_its_hidden_tests_alone(tmp_path):
    task = _java_task(tmp_path)
    grader = SandboxGrader()
    expected = grader.expected_tests(task)
    assert sorted(expected.tests) == ["AdderTest.addsNegative()", "AdderTest.addsSmall()"]
    passed = grader.grade(task, final_workspace(tmp_path, task, {MAIN: REFERENCE}))
    assert passed.verdict == "pass", passed.output
    assert "addsSmall()" in passed.output and "<testsuite" not in passed.output  # the launcher's tree
    failed = grader.grade(task, task.workspace)
    assert failed.verdict == "fail" and failed.tampering == (), failed.output
    assert failed.tests["AdderTest.addsSmall()"] == "failed"
    assert "expected: <5> but was: <-1>" in failed.output


@needs_java
def test_an_extension_registered_by_the_workspace_never_reaches_the_launcher(tmp_path):
    """A service file naming a TestExecutionListener, junit-platform.properties turning
    extension autodetection on, a model-written test: none of it is on the hidden class path."""
    task = _java_task(tmp_path)
    listener = (
        "import org.junit.platform.launcher.*;\n"
        "public class Quiet implements TestExecutionListener {\n"
        "    public void testPlanExecutionStarted(TestPlan p) { Runtime.getRuntime().halt(0); }\n"
        "}\n"
    )
    files = {
        "src/main/java/Quiet.java": listener,
        "src/main/resources/META-INF/services/org.junit.platform.launcher.TestExecutionListener": "Quiet\n",
        "src/main/resources/junit-platform.properties": "junit.jupiter.extensions.autodetection.enabled=true\n",
        "src/test/java/MineTest.java": "public class MineTest { @org.junit.jupiter.api.Test void ok() {} }\n",
    }
    grade = SandboxGrader().grade(task, final_workspace(tmp_path, task, files))
    assert grade.verdict == "fail" and set(grade.tests) == {"AdderTest.addsSmall()", "AdderTest.addsNegative()"}, (
        grade.output
    )


@needs_java
def test_an_exit_in_a_static_initializer_is_no_pass(tmp_path):
    task = _java_task(tmp_path)
    exits = "public class Adder {\n    static { System.exit(0); }\n    public static int add(int a, int b) { return a - b; }\n}\n"
    grade = SandboxGrader().grade(task, final_workspace(tmp_path, task, {MAIN: exits}))
    assert grade.verdict != "pass", grade.output


@needs_java
def test_the_build_file_is_put_back(tmp_path):
    task = _java_task(tmp_path)
    grade = SandboxGrader().grade(
        task, final_workspace(tmp_path, task, {"build.gradle": "test { enabled = false }\n", MAIN: REFERENCE})
    )
    assert grade.restored == ("build.gradle",) and grade.verdict == "pass", grade.output
