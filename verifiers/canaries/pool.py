"""A task version's canary candidates, read from its hidden test files, and what the
reference's run proved of them.

The candidates are a pure function of the task's files (the same order every time), so a
grade's plan can be rebuilt from its seed; the proofs come from one run of the reference with
every candidate planted, kept with the reference's test identities (verifiers.verdict.Expected).
"""

from __future__ import annotations

import hashlib
import random
import tomllib
from dataclasses import dataclass
from pathlib import Path

from verifiers.canaries import go, node, python, rust
from verifiers.canaries.proof import Proof
from verifiers.canaries.sites import CONTRADICTION, NEW_INPUT, FileTests, Site, TestUnit
from verifiers.tasks import Task, iter_files

MAX_CANDIDATES = 24  # planted together in the proving run
VARIANTS = 2  # draws of each contradiction: a grade may plant two of one test's change
CANARY_RUNNERS = ("pytest", "node", "tsx", "cargo", "go")
NAMED_BY_FUNCTION = ("cargo", "go")  # runners whose test ids are function names, without a file
_NODE_GRAMMARS = {
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
}


@dataclass(frozen=True)
class Candidate:
    key: str  # stable across runs: the file, the test it copies, the change
    file: str  # the hidden file (relative to the workspace root)
    unit: TestUnit
    site: Site
    claim: str  # the changed statement, on one line

    @property
    def kind(self) -> str:
        return self.site.kind

    @property
    def how(self) -> str:
        return self.site.how

    @property
    def source(self) -> str:
        return self.unit.qualifier + self.unit.name

    @property
    def group(self) -> tuple[str, str, int]:
        """The change's place: variants of one change share it."""
        return self.file, self.source, self.site.start


@dataclass(frozen=True)
class CanaryPool:
    files: dict[str, FileTests]  # the hidden test files canaries go into
    sources: dict[str, bytes]
    candidates: tuple[Candidate, ...]
    seed: int = 0  # what drew the changes

    def proven(self, proofs: dict[str, Proof]) -> list[Candidate]:
        return [c for c in self.candidates if c.key in proofs and proofs[c.key].proven]

    def missing(self, runner: str, test_ids: list[str]) -> list[str]:
        """The tests of the canaries' files that a run (restored to the real names) did not
        report: a proving run that lost some ran another file than the one it was meant to."""
        seen = set()
        for test_id in test_ids:
            if runner == "pytest":
                file, _, rest = test_id.partition("::")
                seen.add((file, rest.partition("[")[0]))
            elif runner == "cargo":
                seen.add(("", test_id))
            elif runner == "go":
                seen.add(("", test_id.partition("/")[0]))  # `TestAdd/carry`: a subtest of TestAdd
            else:
                file, _, name = test_id.partition(" ")
                seen.add((file.rsplit(":", 2)[0], name))
        missing = []
        for rel, tests in self.files.items():
            for unit in tests.units:
                if ("" if runner in NAMED_BY_FUNCTION else rel, unit.qualifier + unit.name) not in seen:
                    missing.append(f"{rel}::{unit.qualifier}{unit.name}")
        return missing


def _one_line(data: bytes, limit: int = 160) -> str:
    shown = " ".join(data.decode("utf-8", "replace").split())
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _claim(source: bytes, site: Site) -> str:
    start, end = site.claim
    pieces, at = [], start
    for edit_start, edit_end, new in site.edits:
        if start <= edit_start and edit_end <= end:
            pieces += [source[at:edit_start], new]
            at = edit_end
    changed = b"".join(pieces) + source[at:end]
    shown = _one_line(changed).rstrip(";")
    return shown.removeprefix("assert ") if shown.startswith("assert ") else shown


def canary_files(task: Task, runner: str, named: tuple[str, ...]) -> list[str]:
    """The hidden files the runner collects tests from, that canaries can go into."""
    hidden = sorted(str(p.relative_to(task.hidden)) for p in iter_files(task.hidden) if not p.is_symlink())
    if runner == "pytest":
        wanted = [
            h for h in hidden if h.endswith(".py") and (Path(h).name.startswith("test") or h.endswith("_test.py"))
        ]
    elif runner in ("node", "tsx"):
        wanted = [h for h in hidden if Path(h).suffix in _NODE_GRAMMARS]
    elif runner == "cargo":
        wanted = [h for h in hidden if h.startswith("tests/") and h.endswith(".rs") and h.count("/") == 1]
        if named:
            wanted = [h for h in wanted if Path(h).stem in named]
        return wanted
    elif runner == "go":
        # A command that picks its tests by name (-run, -skip) would not run a canary's.
        if any(w.lstrip("-").split("=")[0] in ("run", "skip") for w in task.hidden_cmd.split() if w.startswith("-")):
            return []
        # go test builds every `_test.go` file of a package; a folder named testdata, or a file
        # or folder whose name starts with `_` or `.`, it never reads
        return [
            h
            for h in hidden
            if h.endswith("_test.go")
            and not any(part == "testdata" or part[:1] in ("_", ".") for part in Path(h).parts)
        ]
    else:
        return []
    if named:
        chosen = []
        for h in wanted:
            if any(h == n or h.startswith(n.rstrip("/") + "/") or n in (".", "") for n in named):
                chosen.append(h)
        wanted = chosen
    return wanted


def _local_modules(task: Task) -> frozenset[str]:
    names = set()
    for folder in (task.workspace, task.reference):
        if not folder.is_dir():
            continue
        for entry in folder.iterdir():
            if entry.suffix == ".py":
                names.add(entry.stem)
            elif entry.is_dir() and (entry / "__init__.py").is_file():
                names.add(entry.name)
    return frozenset(names)


def _crate(task: Task) -> str:
    for folder in (task.workspace, task.reference):
        manifest = folder / "Cargo.toml"
        if manifest.is_file():
            try:
                data = tomllib.loads(manifest.read_text())
            except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
                continue
            lib = data.get("lib", {})
            name = lib.get("name") if isinstance(lib, dict) else None
            name = name or data.get("package", {}).get("name")
            if isinstance(name, str):
                return name.replace("-", "_")
    return "crate"


def tests_in(task: Task, rel: str, data: bytes, seed: str) -> FileTests | None:
    suffix = Path(rel).suffix
    rng = random.Random(seed)
    if suffix == ".py":
        return python.tests_of(rel, data, _local_modules(task), rng)
    if suffix in _NODE_GRAMMARS:
        return node.tests_of(rel, data, _NODE_GRAMMARS[suffix], rng)
    if suffix == ".rs":
        return rust.tests_of(rel, data, _crate(task), rng)
    if suffix == ".go":
        return go.tests_of(rel, data, rng)
    return None


def pool_for(task: Task, runner: str, named: tuple[str, ...], seed: int) -> CanaryPool:
    """Every candidate of the task version with the pool's `seed` (which draws the changes: a
    secret of the ledger, so the tests' readers cannot know how a canary was made), in a fixed
    order: contradictions first, spread over the tests (one per test before a second from any),
    then new inputs; at most MAX_CANDIDATES."""
    files: dict[str, FileTests] = {}
    sources: dict[str, bytes] = {}
    if runner not in CANARY_RUNNERS:
        return CanaryPool(files, sources, (), seed)
    by_kind: dict[str, list[list[Candidate]]] = {CONTRADICTION: [], NEW_INPUT: []}
    for rel in canary_files(task, runner, named):
        try:
            data = (task.hidden / rel).read_bytes()
        except OSError:
            continue
        # two draws of the same sites: a test's contradictions come in variants of one change
        variants = [tests_in(task, rel, data, f"{seed}:{rel}:{v}") for v in range(VARIANTS)]
        found = variants[0]
        if found is None or not found.units:
            continue
        files[rel], sources[rel] = found, data
        for at, unit in enumerate(found.units):
            per_kind: dict[str, list[Candidate]] = {CONTRADICTION: [], NEW_INPUT: []}
            keys = set()
            for variant in variants:
                if variant is None or len(variant.units) != len(found.units):
                    continue
                for site in variant.units[at].sites:
                    candidate = _candidate(rel, data, unit, site)
                    if candidate.key not in keys:
                        keys.add(candidate.key)
                        per_kind[site.kind].append(candidate)
            for kind, found_sites in per_kind.items():
                if found_sites:
                    by_kind[kind].append(sorted(found_sites, key=lambda c: (c.site.start, c.key)))
    ordered: list[Candidate] = []
    for kind in (CONTRADICTION, NEW_INPUT):
        lists = by_kind[kind]
        depth = 0
        while any(depth < len(found_sites) for found_sites in lists):
            ordered += [found_sites[depth] for found_sites in lists if depth < len(found_sites)]
            depth += 1
    contradictions = [c for c in ordered if c.kind == CONTRADICTION][: MAX_CANDIDATES * 3 // 4]
    inputs = [c for c in ordered if c.kind == NEW_INPUT][: MAX_CANDIDATES - len(contradictions)]
    return CanaryPool(files, sources, tuple(contradictions + inputs), seed)


def _candidate(rel: str, data: bytes, unit: TestUnit, site: Site) -> Candidate:
    edits = b"\0".join(b"%d:%d:%s" % (start, end, new) for start, end, new in site.edits)
    key = hashlib.sha256(b"\0".join([rel.encode(), (unit.qualifier + unit.name).encode(), edits])).hexdigest()[:12]
    return Candidate(key, rel, unit, site, _claim(data, site))


def unit_text(source: bytes, unit: TestUnit, site: Site | None, name: str | None) -> bytes:
    """A test's text (from its decorators or attributes to its end) with one site changed and
    its name replaced."""
    edits = []
    if site is not None:
        edits += site.edits
    if name is not None:
        edits.append((unit.name_span[0], unit.name_span[1], name.encode()))
    out, at = [], unit.start
    for start, end, new in sorted(edits):
        out += [source[at:start], new]
        at = end
    out.append(source[at : unit.end])
    return b"".join(out)
