"""Read what test runners print: pass/fail counts, failing test names, environment faults.

Counts come from pytest, `node --test` (and tsx --test) and `cargo test` summaries; a custom
verifier script yields no counts and is judged by exit status alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_PYTEST_SUMMARY = re.compile(r"^=*\s*(?:\d+ \w+(?:, )?)+.* in [\d.]+s", re.M)
_PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|errors?)\b")
_PYTEST_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+?)(?: - .*)?$", re.M)
_NODE_PASS = re.compile(r"^# pass (\d+)$", re.M)
_NODE_FAIL = re.compile(r"^# fail (\d+)$", re.M)
_NODE_NOT_OK = re.compile(r"^\s*not ok \d+ - (.+?)(?: #.*)?$", re.M)
_CARGO_RESULT = re.compile(r"test result: \w+\. (\d+) passed; (\d+) failed")
_CARGO_FAILED = re.compile(r"^---- (\S+) stdout ----$", re.M)

# What the machine lacks, by the runner's own words. The model's own symbols and files are not
# here: a renamed export of the task's crate ("unresolved import `crate_name::f` ... no `f` in the
# root"), a relative import of a workspace file the model removed, a missing name in its module
# are the model's doing (reasoning, or mechanics when the file does not parse).
_ENVIRONMENT_PATTERNS = (
    re.compile(r"ModuleNotFoundError: No module named '([^']+)'"),
    re.compile(r"Cannot find package '([^']+)'"),
    re.compile(r"Cannot find module '((?![./]|file:)[^']+)'"),  # a bare specifier: an npm package
    re.compile(r"Unknown file extension \"(\.[cm]?tsx?)\""),  # node without a TypeScript loader
    re.compile(r"no matching package named `([^`]+)`"),
    re.compile(r"can't find crate for `([^`]+)`"),
    re.compile(r"(?:use of undeclared crate or module|use of unresolved module or unlinked crate) `([^`]+)`"),
    re.compile(r"(?:^|\s)([\w.-]+): command not found$", re.M),  # bash
    re.compile(r"^\S*sh: (?:line )?\d+: ([\w.-]+): not found$", re.M),  # dash / sh
)
_COMPILED_CRATE = re.compile(r"could not compile `([^`]+)`")


@dataclass(frozen=True)
class TestCounts:
    passed: int | None = None
    failed: int | None = None
    failing: tuple[str, ...] = field(default_factory=tuple)


def parse_counts(output: str) -> TestCounts:
    """Best-effort counts from whichever runner printed `output`."""
    cargo = _CARGO_RESULT.findall(output)
    if cargo:
        return TestCounts(
            sum(int(p) for p, _ in cargo),
            sum(int(f) for _, f in cargo),
            tuple(dict.fromkeys(_CARGO_FAILED.findall(output))),
        )
    node_pass, node_fail = _NODE_PASS.findall(output), _NODE_FAIL.findall(output)
    if node_pass or node_fail:  # the runner's own summary is the last block it prints
        failing = tuple(n.strip() for n in _NODE_NOT_OK.findall(output))
        return TestCounts(
            int(node_pass[-1]) if node_pass else 0,
            int(node_fail[-1]) if node_fail else 0,
            tuple(dict.fromkeys(failing)),
        )
    summary = _PYTEST_SUMMARY.findall(output)
    if summary:
        counts = {"passed": 0, "failed": 0}
        for n, word in _PYTEST_COUNT.findall(summary[-1]):
            counts["passed" if word == "passed" else "failed"] += int(n)
        return TestCounts(counts["passed"], counts["failed"], tuple(dict.fromkeys(_PYTEST_FAILED.findall(output))))
    return TestCounts()


def environment_fault(output: str) -> str | None:
    """Name what the machine lacks (a module, package, crate, command or loader) if the runner's
    output shows it; None when the failure is the code's own. A crate the build itself compiles
    is never missing from the machine."""
    local = {name.replace("-", "_") for name in _COMPILED_CRATE.findall(output)}
    for pattern in _ENVIRONMENT_PATTERNS:
        for match in pattern.finditer(output):
            if match.group(1).replace("-", "_") not in local:
                return match.group(0).strip()
    return None
