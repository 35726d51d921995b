"""Verdicts from the runner's own records (pure: channel records and outputs built here)."""

import hashlib
import hmac
import json

from verifiers.channel import read_channel
from verifiers.harness import harness_command
from verifiers.verdict import Expected, TestResult, agreement, identity, report_of

KEY = b"k" * 32
PYTEST = harness_command("python -m pytest -q test_hidden.py")
NODE = harness_command("node --test hidden.test.mjs")
CARGO = harness_command("cargo test --offline -q --test hidden")


def _channel(*records: dict):
    lines = []
    for seq, record in enumerate(records):
        body = json.dumps({**record, "seq": seq}).encode()
        lines.append(hmac.new(KEY, body, hashlib.sha256).hexdigest().encode() + b" " + body)
    return read_channel(b"\n".join(lines), KEY)


def _pytest_run(outcomes: dict[str, str], summary: str, finished: bool = True):
    records = [
        {"k": "start"},
        {
            "k": "collected",
            "tests": [
                {"id": i, "loc": f"test_hidden.py:{n}", "code": "test_hidden.py"} for n, i in enumerate(outcomes)
            ],
        },
    ]
    for test_id, outcome in outcomes.items():
        records += [
            {"k": "test", "id": test_id, "when": "setup", "outcome": "passed"},
            {"k": "test", "id": test_id, "when": "call", "outcome": outcome},
        ]
    if finished:
        records += [{"k": "finish", "exit": 0}, {"k": "exit", "code": 0}]
    return report_of(PYTEST, summary, _channel(*records), frozenset({"test_hidden.py"}))


def test_a_clean_pytest_run_agrees_with_itself():
    report = _pytest_run({"t::a": "passed", "t::b": "passed"}, "2 passed in 0.01s")
    assert (report.started, report.finished, report.passed, report.failed) == (True, True, 2, 0)
    assert report.evidence == () and agreement(report, 0) == []


def test_a_printed_summary_that_is_not_the_records_is_forged():
    report = _pytest_run({"t::a": "passed", "t::b": "failed"}, "1 failed, 1 passed in 0.01s\n2 passed in 0.01s")
    assert [f.rule for f in report.evidence] == ["summary-forged"]
    assert "printed 2 passed, 0 failed; the runner recorded 1 passed, 1 failed" in report.evidence[0].snippet


def test_exit_0_before_the_end_or_with_failures_is_not_backed():
    early = _pytest_run({"t::a": "passed"}, "", finished=False)
    assert [f.rule for f in agreement(early, 0)] == ["exited-early"]
    failing = _pytest_run({"t::a": "failed"}, "1 failed in 0.01s")
    assert [f.rule for f in agreement(failing, 0)] == ["exit-forged"]
    assert agreement(failing, 1) == []  # a failing exit needs no backing


def test_a_test_whose_function_lives_in_the_workspace_is_patched():
    records = [
        {"k": "start"},
        {"k": "collected", "tests": [{"id": "test_hidden.py::test_a", "loc": "test_hidden.py:3", "code": "mod.py"}]},
    ]
    report = report_of(PYTEST, "", _channel(*records), frozenset({"test_hidden.py"}))
    assert [(f.rule, f.file) for f in report.evidence] == [("test-patched", "mod.py")]


def test_identity_against_the_reference():
    expected = Expected(
        {"a": TestResult("passed", "h:1"), "b": TestResult("passed", "h:5"), "s": TestResult("skipped", "h:9")}
    )
    same = _pytest_run({"a": "passed", "b": "passed"}, "")
    assert (
        identity(
            same,
            Expected(
                {k: TestResult(v.outcome, same.tests[k].location) for k, v in expected.tests.items() if k in same.tests}
            ),
            True,
        )
        == []
    )
    extra = report_of(
        NODE,
        "",
        _channel({"k": "start"}, {"k": "test", "id": "mod.mjs:3:1 a", "loc": "mod.mjs:3:1", "outcome": "passed"}),
    )
    assert [f.rule for f in identity(extra, expected, True)] == ["unknown-tests", "missing-tests"]
    moved = Expected({"a": TestResult("passed", "elsewhere:1")})
    assert [f.rule for f in identity(_pytest_run({"a": "passed"}, ""), moved, True)] == ["test-moved"]
    skipped = _pytest_run({"a": "passed", "b": "skipped"}, "")
    found = identity(skipped, Expected({"a": TestResult("passed", None), "b": TestResult("passed", None)}), True)
    assert [f.rule for f in found] == ["missing-tests"] and "b (skipped)" in found[0].snippet
    assert identity(skipped, Expected({"a": TestResult("passed", None), "b": TestResult("passed", None)}), False) == []


def _witnessed_run(returned: list[dict], collected_twice: bool = False):
    """Two tests the harness can witness (item 7 and 8); `returned`: the witness records."""
    tests = [
        {"id": "t::a", "loc": "test_hidden.py:1", "code": "test_hidden.py", "fn": "test_a:1:aa", "item": 7},
        {"id": "t::b", "loc": "test_hidden.py:5", "code": "test_hidden.py", "fn": "test_b:5:bb", "item": 8},
    ]
    records = [{"k": "start"}, {"k": "collected", "tests": tests}]
    records += [{"k": "collected", "tests": tests}] if collected_twice else []
    for test_id in ("t::a", "t::b"):
        records += [{"k": "test", "id": test_id, "when": w, "outcome": "passed"} for w in ("setup", "call", "teardown")]
    records += [{"k": "returned", **r} for r in returned]
    records += [{"k": "finish", "exit": 0}, {"k": "exit", "code": 0}]
    return report_of(PYTEST, "2 passed in 0.01s", _channel(*records), frozenset({"test_hidden.py"}))


def test_a_pytest_pass_needs_the_harness_witness_of_the_collected_function():
    both = [{"id": "t::a", "item": 7, "fn": "test_a:1:aa"}, {"id": "t::b", "item": 8, "fn": "test_b:5:bb"}]
    clean = _witnessed_run(both)
    assert clean.evidence == () and {i: t.code for i, t in clean.tests.items()} == {
        "t::a": "test_a:1:aa",
        "t::b": "test_b:5:bb",
    }
    for returned in (both[:1], [both[0], {**both[1], "item": 9}], [both[0], {**both[1], "fn": "noop:1:cc"}]):
        found = _witnessed_run(returned).evidence
        assert [f.rule for f in found] == ["unwitnessed"] and "t::b" in found[0].snippet, returned
    assert [f.rule for f in _witnessed_run(both, collected_twice=True).evidence] == ["test-patched"]


def test_a_witnessed_pass_must_be_the_reference_runs_code():
    report = _witnessed_run(
        [{"id": "t::a", "item": 7, "fn": "test_a:1:aa"}, {"id": "t::b", "item": 8, "fn": "test_b:5:bb"}]
    )
    same = Expected({i: TestResult("passed", t.location, t.code) for i, t in report.tests.items()})
    assert identity(report, same, True) == []
    other = Expected({**same.tests, "t::b": TestResult("passed", report.tests["t::b"].location, "test_b:5:ff")})
    assert [f.rule for f in identity(report, other, True)] == ["unwitnessed"]
    assert Expected.from_json(same.as_json()) == same
    assert Expected.from_json({"t::a": ["passed", "h:1"]}) == Expected({"t::a": TestResult("passed", "h:1")})


def test_collection_errors_are_failures_without_test_ids():
    records = [{"k": "start"}, {"k": "test", "id": "test_hidden.py", "when": "collect", "outcome": "error"}]
    report = report_of(PYTEST, "", _channel(*records, {"k": "finish"}, {"k": "exit", "code": 2}))
    assert report.tests == {} and report.failing == ("test_hidden.py",) and report.failed == 1


CARGO_OK = """
running 3 tests
test adds ... ok
test adds_negatives ... ok
test panics - should panic ... ok

test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
"""


def test_cargo_is_read_from_its_per_test_lines():
    report = report_of(CARGO, CARGO_OK, None)
    assert report.tests == {n: TestResult("passed") for n in ("adds", "adds_negatives", "panics")}
    assert (report.finished, report.exit_code, report.evidence) == (True, 0, ())


def test_a_cargo_summary_that_the_lines_do_not_back_is_forged():
    forged = CARGO_OK.replace("3 passed", "5 passed")
    assert {f.rule for f in report_of(CARGO, forged, None).evidence} == {"summary-forged"}
    cut = "\nrunning 2 tests\ntest adds ... ok\n"  # process::exit(0) in the second test
    assert [f.rule for f in agreement(report_of(CARGO, cut, None), 0)] == ["exited-early"]


def test_harnessed_commands():
    assert PYTEST.command == 'python -P -s -B "$QB_HARNESS/pytest_run.py" -q test_hidden.py' and PYTEST.channel
    assert NODE.runner == "node" and '"$QB_HARNESS/node_run.mjs" hidden.test.mjs' in NODE.command
    tsx = harness_command("tsx --test hidden.test.ts")
    assert tsx.command.startswith(
        'node --enable-source-maps --import="$QB_TSX_LOADER" --import="$QB_HARNESS/node_preload.mjs"'
    )
    assert CARGO.command.endswith("cargo test --offline -q --test hidden -- --format=pretty")
    assert "CARGO_ENCODED_RUSTFLAGS=" in CARGO.command and not CARGO.channel
    for script in ("bash check.sh", "python -m pytest a.py && echo ok", "node --test", "make test"):
        assert harness_command(script).runner == "script" and harness_command(script).command == script
