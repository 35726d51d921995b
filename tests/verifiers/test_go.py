"""Go as a task language: `go test` harnessed (offline, -json, every test run), its events read
into per-test verdicts (assertion or panic), the hidden run built with the hidden test files
alone, and go's runner files put back; real go in the real sandbox."""

import json
import shutil

import pytest

from tests.support.verifier_tasks import final_workspace, make_task
from verifiers.gotest import consistency, read_events
from verifiers.grading import SandboxGrader
from verifiers.harness import harness_command
from verifiers.tasks import load_task
from verifiers.verdict import report_of

needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")

GO_MOD = "module addx\n\ngo 1.19\n"
HIDDEN = """package addx

import "testing"

func TestAdd(t *testing.T) {
\tif got := Add(2, 3); got != 5 {
\t\tt.Errorf("Add(2, 3) = %d, want 5", got)
\t}
}

func TestAddTable(t *testing.T) {
\tfor _, tc := range []struct{ a, b, want int }{{1, 1, 2}, {-1, 1, 0}} {
\t\tif got := Add(tc.a, tc.b); got != tc.want {
\t\t\tt.Errorf("Add(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
\t\t}
\t}
}
"""
VISIBLE = 'package addx\n\nimport "testing"\n\nfunc TestVisible(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal("no")\n\t}\n}\n'
REFERENCE = "package addx\n\nfunc Add(a, b int) int { return a + b }\n"
WRONG = "package addx\n\nfunc Add(a, b int) int { return a - b }\n"


def _event(action, test=None, output=None, package="addx"):
    event = {"Action": action, "Package": package}
    if test is not None:
        event["Test"] = test
    if output is not None:
        event["Output"] = output
    return json.dumps(event)


def test_a_go_test_command_is_harnessed_offline_with_every_test_run():
    harnessed = harness_command("go test -v -count 3 ./...")
    assert harnessed.runner == "go"
    assert "go test -json -count=1 -vet=off ./..." in harnessed.command
    for forced in ("GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off", "GOENV=off", "CGO_ENABLED=0"):
        assert forced in harnessed.command
    assert "-vet=off" not in harness_command("go test -vet=printf ./...").command
    assert harness_command("go test -exec ./fake ./...").runner == "script"  # not a command of ours
    assert harness_command("go test -toolexec=./x .").runner == "script"


def test_events_give_each_test_its_outcome_and_how_it_failed():
    output = "\n".join(
        [
            _event("run", "TestA"),
            _event("output", "TestA", "    a_test.go:7: got 1, want 2\n"),
            _event("fail", "TestA"),
            _event("run", "TestB"),
            _event("run", "TestB/one"),
            _event("pass", "TestB/one"),
            _event("run", "TestB/two"),
            _event("skip", "TestB/two"),
            _event("pass", "TestB"),
            _event("run", "TestC"),
            _event("output", "TestC", "panic: runtime error: index out of range [recovered]\n"),
            _event("fail", "TestC"),
            _event("output", None, "FAIL\taddx\t0.01s\n"),
            _event("fail"),
        ]
    )
    events = read_events(output)
    assert events.tests == {
        "TestA": ("failed", "assertion"),
        "TestB": ("passed", None),
        "TestB/one": ("passed", None),
        "TestB/two": ("skipped", None),
        "TestC": ("failed", "panic"),
    }
    assert events.packages == {"addx": "failed"}
    assert events.text.startswith("    a_test.go:7: got 1, want 2\n") and "FAIL\taddx" in events.text
    assert consistency(events) == []
    report = report_of(harness_command("go test ./..."), output, None)
    assert (report.finished, report.exit_code, report.passed, report.failed) == (True, 1, 2, 2)


def test_a_test_still_running_when_the_binary_died_failed_by_panic():
    output = "\n".join([_event("run", "TestA"), _event("pass", "TestA"), _event("run", "TestB"), _event("fail")])
    events = read_events(output)
    assert events.tests["TestB"] == ("failed", "panic") and events.unfinished == ("TestB",)
    assert not report_of(harness_command("go test ."), output, None).finished


def test_accounts_that_contradict_each_other_are_forged():
    failed_yet_ok = "\n".join([_event("run", "TestA"), _event("fail", "TestA"), _event("pass")])
    assert [f.rule for f in consistency(read_events(failed_yet_ok))] == ["summary-forged"]
    # a second account of a failed test (a printed "--- PASS" line) does not clear it
    twice = "\n".join([_event("run", "TestA"), _event("fail", "TestA"), _event("pass", "TestA"), _event("fail")])
    assert read_events(twice).tests["TestA"] == ("failed", "assertion")
    parent_ok = "\n".join(
        [
            _event("run", "TestA"),
            _event("run", "TestA/x"),
            _event("fail", "TestA/x"),
            _event("pass", "TestA"),
            _event("fail"),
        ]
    )
    assert [f.rule for f in consistency(read_events(parent_ok))] == ["summary-forged"]


def _go_task(tmp_path, workspace=None):
    root = make_task(
        tmp_path / "suite",
        id="t-go",
        language="go",
        workspace=workspace or {"go.mod": GO_MOD, "add.go": WRONG, "visible_test.go": VISIBLE},
        hidden={"hidden_test.go": HIDDEN},
        reference={"add.go": REFERENCE},
        visible_cmd="go test ./...",
        hidden_cmd="go test ./...",
        timeout_s=120,
    )
    return load_task(root)


@needs_go
def test_a_go_task_is_graded_by_its_hidden_tests_alone(tmp_path):
    task = _go_task(tmp_path)
    grader = SandboxGrader()
    expected = grader.expected_tests(task)
    assert sorted(expected.tests) == ["TestAdd", "TestAddTable"]  # not the visible test: not built
    passed = grader.grade(task, final_workspace(tmp_path, task, {"add.go": REFERENCE}))
    assert passed.verdict == "pass", passed.output
    assert "--- PASS: Test" in passed.output and '"Action"' not in passed.output  # go test -v's text
    failed = grader.grade(task, task.workspace)
    assert failed.verdict == "fail" and failed.tampering == ()
    assert "Add(2, 3) = -1, want 5" in failed.output  # (under the names the grade gave its tests)


@needs_go
def test_a_model_test_file_is_not_in_the_hidden_build(tmp_path):
    """Its TestMain would exit 0 before any test ran; its init() could rewrite anything."""
    task = _go_task(tmp_path)
    main = 'package addx\n\nimport (\n\t"os"\n\t"testing"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n'
    grade = SandboxGrader().grade(task, final_workspace(tmp_path, task, {"main_test.go": main}))
    assert grade.verdict == "fail" and set(grade.tests) == {"TestAdd", "TestAddTable"}, grade.output


@needs_go
def test_an_exit_at_init_is_no_pass(tmp_path):
    task = _go_task(tmp_path)
    exits = 'package addx\n\nimport "os"\n\nfunc init() { os.Exit(0) }\n\nfunc Add(a, b int) int { return a - b }\n'
    grade = SandboxGrader().grade(task, final_workspace(tmp_path, task, {"add.go": exits}))
    assert grade.verdict != "pass", grade.output


@needs_go
def test_go_mod_is_put_back(tmp_path):
    task = _go_task(tmp_path)
    replaced = GO_MOD + "\nreplace example.com/x => ./x\n"
    grade = SandboxGrader().grade(task, final_workspace(tmp_path, task, {"go.mod": replaced, "add.go": REFERENCE}))
    assert grade.restored == ("go.mod",) and grade.verdict == "pass", grade.output


def test_a_command_that_picks_its_tests_by_name_takes_no_canaries(tmp_path):
    """A canary's name is none the command's `-run` pattern picks: it would never run."""
    from verifiers.canaries.pool import pool_for

    root = make_task(
        tmp_path / "suite",
        id="t-go-run",
        language="go",
        workspace={"go.mod": GO_MOD, "add.go": WRONG},
        hidden={"hidden_test.go": HIDDEN},
        reference={"add.go": REFERENCE},
        visible_cmd="go test ./...",
        hidden_cmd="go test -run TestAdd ./...",
    )
    picked = load_task(root)
    assert pool_for(picked, "go", (), 7).candidates == ()
    assert pool_for(_go_task(tmp_path), "go", (), 7).candidates != ()
