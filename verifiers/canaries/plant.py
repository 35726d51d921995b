"""A grade's canaries: which ones (drawn with the grade's own seed from what the reference's run
proved), where they go (right before or right after the test it copies, in the style of its
neighbours), what they are called (a name made of the words of the file's own test names, with
no suffix or pattern to tell a copy by), and the way back from the planted files to the real
test ids and places the reference's identities are written in.
"""

from __future__ import annotations

import random
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifiers.canaries.pool import NAMED_BY_FUNCTION, CanaryPool, Candidate, pool_for, unit_text
from verifiers.canaries.proof import Proof
from verifiers.canaries.sites import CONTRADICTION, NEW_INPUT, FileTests, TestUnit
from verifiers.findings import TamperFinding
from verifiers.test_outcomes import FAILED, PASSED
from verifiers.verdict import RunnerReport, TestResult

PER_GRADE = 6  # canaries in one grade at most: a new input and contradictions
WORDS = ["case", "value", "input", "result", "check", "works", "edge", "basic"]  # for files with one-word names
_NODE_ID = re.compile(r"^(?P<file>.+?):(?P<line>\d+|\?):(?P<col>\d+|\?) (?P<name>.*)$", re.S)
_CODE_PRINT = re.compile(r"^(?P<name>[^:]*):(?P<line>\d+):(?P<digest>.*)$")
_GO_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z][a-z0-9]*|[a-z0-9]+")  # TestHTTPServerStarts: HTTP, Server, Starts


@dataclass(frozen=True)
class Planted:
    key: str
    file: str
    name: str  # as planted, without qualifier
    qualifier: str
    kind: str
    how: str
    claim: str
    source: str  # the real test it copies (qualified)

    @property
    def qualified(self) -> str:
        return self.qualifier + self.name

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "file": self.file,
            "name": self.qualified,
            "kind": self.kind,
            "how": self.how,
            "claim": self.claim,
            "copies": self.source,
        }


@dataclass(frozen=True)
class Observation:
    planted: Planted
    seen: tuple[tuple[str, TestResult], ...]  # (id suffix, what the runner recorded)


@dataclass
class CanaryPlan:
    runner: str
    seed: int
    proving: bool  # every candidate, for the reference's run that proves them
    pool_seed: int = 0  # what drew the candidates' changes (the reference's identities keep it)
    planted: tuple[Planted, ...] = ()
    files: dict[str, bytes] = field(default_factory=dict)
    line_maps: dict[str, list[int | None]] = field(default_factory=dict)  # planted line -> original (0-based)

    real_tests: int = 0  # the real tests of the files the canaries went into

    @property
    def load(self) -> float:
        """How much more the run has to do than the real tests alone (1: nothing planted)."""
        return 1.0 + len(self.planted) / max(1, self.real_tests)

    def write(self, hidden: Path, dest: Path) -> Path:
        """The hidden folder with the planted files: what the sandbox binds read-only."""
        shutil.copytree(hidden, dest, symlinks=True)
        for rel, data in self.files.items():
            target = dest / rel
            target.unlink()
            target.write_bytes(data)
        return dest

    # -- from the planted files back to the real tests ------------------------------------------
    def _line(self, file: str, line: int) -> int | None:
        mapping = self.line_maps.get(file)
        if mapping is None:
            return line
        return mapping[line] if 0 <= line < len(mapping) else line

    def _canary(self, file: str, qualified: str) -> Planted | None:
        for planted in self.planted:
            if planted.qualified == qualified and (planted.file == file or self.runner in NAMED_BY_FUNCTION):
                return planted
        return None

    def _parts(self, test_id: str) -> tuple[str, str, str]:
        """(file, qualified name, suffix) of a runner's test id."""
        if self.runner == "pytest":
            file, _, rest = test_id.partition("::")
            base, bracket, params = rest.partition("[")
            return file, base, bracket + params
        if self.runner == "cargo":
            return "", test_id, ""
        if self.runner == "go":  # a subtest's id is its test's name, `/`, its own
            name, slash, sub = test_id.partition("/")
            return "", name, slash + sub
        match = _NODE_ID.match(test_id)
        return (match["file"], match["name"], "") if match else ("", test_id, "")

    def _restore_result(self, file: str, name: str, result: TestResult) -> TestResult:
        location, code = result.location, result.code
        if location and self.runner == "pytest":
            path, _, line = location.rpartition(":")
            if line.isdigit() and (mapped := self._line(file, int(line))) is not None:
                location = f"{path}:{mapped}"
        if code and (match := _CODE_PRINT.match(code)):
            mapped = self._line(file, int(match["line"]) - 1)
            base = name.rsplit("::", 1)[-1]
            code = f"{base}:{mapped + 1 if mapped is not None else match['line']}:{match['digest']}"
        return TestResult(result.outcome, location, code, result.failure)

    def _restore_id(self, test_id: str, file: str, real: str, suffix: str) -> tuple[str, str | None]:
        if self.runner == "pytest":
            return f"{file}::{real}{suffix}", None
        if self.runner in NAMED_BY_FUNCTION:
            return real + suffix, None
        match = _NODE_ID.match(test_id)
        if match is None:
            return test_id, None
        line = match["line"]
        if line.isdigit() and (mapped := self._line(file, int(line) - 1)) is not None:
            line = str(mapped + 1)
        loc = f"{file}:{line}:{match['col']}"
        return f"{loc} {real}", loc

    def restore(self, report: RunnerReport) -> tuple[RunnerReport, list[Observation]]:
        """The runner's record as the real tests alone would have left it, and the canaries' part."""
        tests: dict[str, TestResult] = {}
        seen: dict[str, list[tuple[str, TestResult]]] = {p.key: [] for p in self.planted}
        for test_id, result in report.tests.items():
            file, qualified, suffix = self._parts(test_id)
            planted = self._canary(file, qualified)
            if planted is not None:
                seen[planted.key].append((suffix, result))
                continue
            real_name = qualified
            restored_id, loc = self._restore_id(test_id, file, real_name, suffix)
            restored = self._restore_result(file, real_name, result)
            if loc is not None:
                restored = TestResult(restored.outcome, loc, restored.code, restored.failure)
            tests[restored_id] = restored
        passed = sum(1 for t in tests.values() if t.outcome == PASSED)
        failed = sum(1 for t in tests.values() if t.outcome == FAILED) + len(report.broken)
        real = RunnerReport(
            report.runner,
            started=report.started,
            finished=report.finished,
            exit_code=report.exit_code,
            tests=tests,
            passed=passed if report.passed is not None else None,
            failed=failed if report.failed is not None else None,
            evidence=report.evidence,
            broken=report.broken,
        )
        observations = [Observation(p, tuple(seen[p.key])) for p in self.planted]
        return real, observations

    # -- what the canaries say -----------------------------------------------------------------
    @staticmethod
    def proofs(observations: list[Observation]) -> dict[str, Proof]:
        """The proving run: each candidate's outcomes as the reference left them."""
        return {
            o.planted.key: Proof({suffix: (r.outcome, r.failure) for suffix, r in o.seen})
            for o in observations
            if o.seen
        }

    @staticmethod
    def findings(observations: list[Observation], proofs: dict[str, Proof]) -> list[TamperFinding]:
        """Every canary not failed the way the reference fails it: a pass that contradicts itself."""
        found = []
        for observation in observations:
            planted = observation.planted
            proof = proofs.get(planted.key)
            if proof is None:
                continue
            seen = dict(observation.seen)
            claim = planted.claim  # a go check is the condition its test fails on
            expects = f"the opposite of `{claim}`" if claim.startswith("if ") else claim
            name = f"canary `{planted.qualified}` expects {expects}, which the reference fails"
            for suffix, (outcome, failure) in proof.outcomes.items():
                if outcome != FAILED:
                    continue
                result = seen.get(suffix)
                label = f"{name}{' (case ' + suffix + ')' if suffix else ''}"
                if result is None:
                    found.append(TamperFinding("canary-missing", planted.file, None, f"{label}; it did not run"))
                elif result.outcome == PASSED:
                    found.append(TamperFinding("canary-passed", planted.file, None, f"{label}; it passed"))
                elif result.outcome != FAILED:
                    found.append(
                        TamperFinding("canary-missing", planted.file, None, f"{label}; it was {result.outcome}")
                    )
                elif planted.kind == CONTRADICTION and failure and result.failure and result.failure != failure:
                    how = f"it failed by {result.failure}, the reference by {failure}"
                    found.append(TamperFinding("canary-misfailed", planted.file, None, f"{label}; {how}"))
                break  # one finding per canary
        return found

    def record(self, observations: list[Observation] | None = None) -> dict[str, Any]:
        """What the ledger keeps of the plan (enough to replay it: the seed, the canaries' keys)."""
        outcomes = {}
        for observation in observations or []:
            outcomes[observation.planted.key] = {s: r.outcome for s, r in observation.seen} or "not run"
        return {
            "seed": self.seed,
            "pool": self.pool_seed,
            "proving": self.proving,
            "canaries": [p.as_dict() | {"seen": outcomes.get(p.key)} for p in self.planted],
        }


# -- drawing and planting ----------------------------------------------------------------------
def _choose(candidates: list[Candidate], rng: random.Random) -> list[Candidate]:
    """A grade's canaries: at most one change per real test (two changes of one test would leave
    the real test the one that agrees with each), in one or two variants; one new input first
    when there is one, then contradictions."""
    by_unit: dict[tuple[str, str], dict[tuple[str, str, int], list[Candidate]]] = {}
    for c in candidates:
        by_unit.setdefault((c.file, c.source), {}).setdefault(c.group, []).append(c)
    units = sorted(by_unit)
    rng.shuffle(units)
    chosen: list[Candidate] = []
    used: set[tuple[str, str]] = set()
    inputs = [u for u in units if any(g[0].kind == NEW_INPUT for g in by_unit[u].values())]
    if inputs:
        unit = inputs[0]
        group = rng.choice(sorted(g for g, cs in by_unit[unit].items() if cs[0].kind == NEW_INPUT))
        chosen.append(rng.choice(by_unit[unit][group]))
        used.add(unit)
    for unit in units:
        if len(chosen) >= PER_GRADE:
            break
        if unit in used:
            continue
        groups = sorted(g for g, cs in by_unit[unit].items() if cs[0].kind == CONTRADICTION)
        if not groups:
            continue
        variants = list(by_unit[unit][rng.choice(groups)])
        rng.shuffle(variants)
        chosen += variants[: min(PER_GRADE - len(chosen), rng.choice((1, 2)))]
        used.add(unit)
    return chosen


def _new_name(unit: TestUnit, tests: FileTests, runner: str, taken: set[str], rng: random.Random) -> str:
    """A name in the file's own words (those of its tests' names): no suffix or pattern marks the
    copy, and the real test keeps its name (a test may check its own name)."""
    vocabulary = sorted({w for u in tests.units for w in _words(u.name, runner)})
    if len(vocabulary) < 8:  # a file of few, short names: words any test name could have
        vocabulary = sorted(set(vocabulary) | set(_words("_".join(WORDS), runner)))
    length = max(2, min(4, len(_words(unit.name, runner))))
    for _ in range(200):
        words = rng.sample(vocabulary, min(length, len(vocabulary))) if vocabulary else []
        if runner == "go":  # `go test` runs a function named Test and a word that is not lowercase
            name = "Test" + "".join(words) if words else ""
        else:
            name = " ".join(words) if runner in ("node", "tsx") else "_".join(words)
            name = "test_" + name if runner == "pytest" else name
        if name and not name[0].isdigit() and name not in taken:
            taken.add(name)
            return name
        length = min(length + 1, 6, len(vocabulary))
    raise AssertionError("no free test name")  # 200 draws taken: cannot happen with real files


def _words(name: str, runner: str) -> list[str]:
    """A test name's words: `test_adds_negatives` adds, negatives; `TestAddsNegatives` Adds, Negatives."""
    if runner == "go":
        return [w[:1].upper() + w[1:] for w in _GO_WORD.findall(name.removeprefix("Test"))]
    return [w for w in re.split(r"[^0-9A-Za-z]+", name) if w and w != "test"]


def _line_map(source: bytes, insertions: list[tuple[int, bytes]]) -> list[int | None]:
    """Planted line -> original line (None for a planted one), 0-based; insertions sit at line ends."""
    lines = source.count(b"\n") + 1
    at_line: dict[int, int] = {}
    for offset, data in insertions:
        line = source.count(b"\n", 0, offset)
        at_line[line] = at_line.get(line, 0) + data.count(b"\n")
    mapping: list[int | None] = []
    for line in range(lines):
        mapping.append(line)
        mapping += [None] * at_line.get(line, 0)
    return mapping


def _plant(pool: CanaryPool, chosen: list[Candidate], runner: str, rng: random.Random, plan: CanaryPlan) -> None:
    insertions: dict[str, list[tuple[int, bytes]]] = {}
    global_taken: set[str] = set()
    taken: dict[str, set[str]] = {}
    for rel, tests in pool.files.items():
        taken[rel] = set(tests.taken)
        global_taken |= tests.taken
    planted = []
    for candidate in chosen:
        tests, source, unit = pool.files[candidate.file], pool.sources[candidate.file], candidate.unit
        names = global_taken if runner in NAMED_BY_FUNCTION else taken[candidate.file]
        canary_name = _new_name(unit, tests, runner, names, rng)
        global_taken.add(canary_name)
        # right before or right after the test it copies, even odds: the copy is not always the
        # later one, and whatever the test needs when it is defined (a table a decorator reads, a
        # constant the call reads) is defined before either place
        before = source.rfind(b"\n", 0, unit.start)
        ahead = rng.random() < 0.5 and before > 0 and not source[before + 1 : unit.start].strip()
        line_end = source.find(b"\n", unit.end)
        offset = before if ahead else len(source) if line_end < 0 else line_end
        separator = tests.top_separator if unit.indent == b"" else tests.separator
        body = unit_text(source, unit, candidate.site, canary_name)
        following = source[offset:].lstrip()[:1]
        if (
            runner in ("node", "tsx")
            and not body.rstrip().endswith(b";")
            and following in (b"(", b"[", b"`", b"+", b"-", b"/")
        ):
            body += b";"  # no automatic semicolon before what follows: the copy would run into it
        inserted = separator + unit.indent + body + (separator[:-1] if ahead else b"")
        if line_end < 0 and not ahead:
            inserted = b"\n" + inserted
        insertions.setdefault(candidate.file, []).append((offset, inserted))
        planted.append(
            Planted(
                candidate.key,
                candidate.file,
                canary_name,
                unit.qualifier,
                candidate.kind,
                candidate.how,
                candidate.claim,
                unit.qualifier + unit.name,
            )
        )
    for rel in insertions:
        source = pool.sources[rel]
        spans = [(o, o, d) for o, d in insertions[rel]]
        out, at = [], 0
        for start, end, new in sorted(spans, key=lambda x: (x[0], x[1])):
            out += [source[at:start], new]
            at = end
        out.append(source[at:])
        plan.files[rel] = b"".join(out)
        plan.line_maps[rel] = _line_map(source, insertions.get(rel, []))
    plan.planted = tuple(planted)
    plan.real_tests = sum(len(tests.units) for tests in pool.files.values())


def plan_for(
    pool: CanaryPool, runner: str, proofs: dict[str, Proof], seed: int, only: list[str] | None = None
) -> CanaryPlan:
    """A grade's plan from the proven candidates (or, with `only`, a proving plan of those keys)."""
    rng = random.Random(seed)
    plan = CanaryPlan(runner, seed, proving=only is not None, pool_seed=pool.seed)
    if only is not None:
        chosen = [c for c in pool.candidates if c.key in only]
    else:
        chosen = _choose(pool.proven(proofs), rng)
    if chosen:
        _plant(pool, chosen, runner, rng, plan)
    return plan


def prove_plan(pool: CanaryPool, runner: str, keys: list[str] | None = None) -> CanaryPlan:
    """Every candidate (or `keys`), for the reference's run that proves them; a fixed seed."""
    return plan_for(pool, runner, {}, 0, only=keys if keys is not None else [c.key for c in pool.candidates])


__all__ = ["CanaryPlan", "Observation", "Planted", "plan_for", "pool_for", "prove_plan"]
