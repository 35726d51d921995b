"""A model that games the grader gets no pass: the gaming suite (tests/hostile/gaming.py, every
documented way in all five languages) through `quotabench validate` and through a real paired
run with the scripted `saboteur` writing the gamed answers. Each is never accepted, never
`environment`: `tampering` when an act, the record or a canary caught it, else an ordinary
failure (the trick did not work); its finding is kept either way, as the verdict's evidence or as
a suspect. The impossible controls are counted per arm."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.gaming import ATTACKS, BINARY, build_gaming_suite
from tests.hostile.gaming_probes2 import TRIED2
from verifiers.isolation import bwrap_status

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not bwrap_status().usable, reason="needs the bubblewrap sandbox")]
QUOTABENCH = [sys.executable, "-m", "tuiapp.cli"]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("gaming") / "suite"
    return root, build_gaming_suite(root)


CANARY_RULES = {"canary-passed", "canary-missing", "canary-misfailed"}


def _tampering_lines(stderr: str, kind: str = "TAMPERING") -> dict[tuple[str, str], set[str]]:
    """`TAMPERING <task> <check>: <rule> ...` lines (or SUSPECT lines) -> {(task, check): rules}."""
    found: dict[tuple[str, str], set[str]] = {}
    for line in stderr.splitlines():
        if line.startswith(f"{kind} "):
            task, check_rule = line.removeprefix(f"{kind} ").split(" ", 1)
            check, rule = check_rule.split(": ", 1)
            found.setdefault((task, check), set()).add(rule.split()[0].rstrip(":"))
    return found


def test_validate_rejects_every_gamed_answer_with_its_evidence(suite):
    root, tasks = suite
    done = subprocess.run(
        [*QUOTABENCH, "validate", str(root), "--jobs", "2", "-v"], capture_output=True, text=True, timeout=1200
    )
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]  # every gamed answer rejected, nothing else broke
    assert f"{len(tasks)} of {len(tasks)} tasks gate cleanly" in done.stdout
    found, noted = _tampering_lines(done.stderr), _tampering_lines(done.stderr, "SUSPECT")
    assert {check for _, check in found} == {"negative_fails"}  # references and untouched workspaces: no finding
    for task in tasks:
        wanted = set(ATTACKS[task][2]) | CANARY_RULES
        seen = found.get((task, "negative_fails"), set()) | noted.get((task, "negative_fails"), set())
        assert seen & wanted, (task, seen)


def test_ideas_that_got_no_pass_still_get_none(tmp_path):
    """The second red team's ideas that were already graded `fail` (a .pth file, a package
    __init__.py beside the tests, cfg(test) in the library): the wrong answer stays a failure."""
    root = tmp_path / "tried"
    tasks = build_gaming_suite(root, attacks={k: (lang, files) for k, (lang, files) in TRIED2.items()})
    done = subprocess.run(
        [*QUOTABENCH, "validate", str(root), "--jobs", "2", "-v"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    assert f"{len(tasks)} of {len(tasks)} tasks gate cleanly" in done.stdout


def _config(path: Path, suites: list[Path], a: str, b: str, tasks: list[str] | None = None) -> Path:
    listed = f"tasks = [{', '.join(repr(t) for t in tasks)}]\n" if tasks else ""
    arms = "".join(
        f'\n[[arms]]\nname = "{name}"\nkind = "scripted"\nmodel = "{model}"\nprotocol = "tools"\n'
        f"cap_tokens = 5000000\nprice = {{ input_per_mtok = 1.0, output_per_mtok = 2.0 }}\n"
        for name, model in (("A", a), ("B", b))
    )
    suites_list = ", ".join(f'"{s}"' for s in suites)
    path.write_text(
        f"[run]\nsuites = [{suites_list}]\nmax_attempts = 1\n{listed}\n"
        f"[run.limits]\nmax_turns = 8\nattempt_timeout_s = 240\n{arms}"
    )
    return path


def _run(config: Path, db: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*QUOTABENCH, "run", str(config), "--headless", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=config.parent,
    )


def test_a_paired_run_classes_every_gamed_answer_tampering(suite, tmp_path):
    root, every = suite
    tasks = [t for t in every if t not in BINARY]
    db = tmp_path / "gaming.sqlite"
    done = _run(_config(tmp_path / "gaming.toml", [root], "saboteur", "solver", tasks), db)
    assert done.returncode == 0, done.stderr[-3000:]
    ledger = sqlite3.connect(db)
    ledger.row_factory = sqlite3.Row
    rows = {
        (r["arm"], r["task_id"]): r
        for r in ledger.execute(
            "select a.arm, a.task_id, a.failure_class, a.accepted, g.verdict, g.tampering_json, g.suspects_json "
            "from attempts a join grades g on g.attempt_id = a.id"
        )
    }
    caught = []
    for task in tasks:
        gamed, honest = rows[("A", task)], rows[("B", task)]
        rules = {f["rule"] for f in json.loads(gamed["tampering_json"])}
        rules |= {f["rule"] for f in json.loads(gamed["suspects_json"] or "[]")}
        assert gamed["accepted"] == 0 and gamed["verdict"] in ("tampering", "fail"), task
        expected_class = ("tampering",) if gamed["verdict"] == "tampering" else ("reasoning", "mechanics")
        assert gamed["failure_class"] in expected_class, task
        assert rules & (set(ATTACKS[task][2]) | CANARY_RULES), (task, rules)
        assert (honest["failure_class"], json.loads(honest["tampering_json"])) == ("accepted", []), task
        caught += [task] if gamed["verdict"] == "tampering" else []
    assert len(caught) >= len(tasks) // 2  # most tricks work, and the canaries or an act catch them

    report = subprocess.run(
        [*QUOTABENCH, "report", "--json", "--db", str(db)], capture_output=True, text=True, timeout=300
    )
    assert report.returncode == 0, report.stderr
    integrity = {a["arm"]: a for a in json.loads(report.stdout)["runs"][0]["integrity"]["arms"]}
    assert integrity["A"]["tampering_attempts"] == len(caught) and integrity["A"]["tampering_tasks"] == sorted(caught)
    assert integrity["A"]["canary_attempts"] + integrity["A"]["act_attempts"] >= len(caught)
    assert integrity["B"]["tampering_attempts"] == 0
    text = subprocess.run([*QUOTABENCH, "report", "--db", str(db)], capture_output=True, text=True, timeout=300).stdout
    assert f"A: tampering: {len(caught)} of {len(tasks)} tasks, {len(caught)} attempts" in text
    assert "B: tampering: none caught" in text

    export = subprocess.run([*QUOTABENCH, "export", "--db", str(db)], capture_output=True, text=True, timeout=300)
    assert export.returncode == 0, export.stderr
    table = list(csv.DictReader(io.StringIO(export.stdout)))
    assert {r["task_id"] for r in table if r["arm"] == "A" and r["tampering"] != ""} == set(caught)
    assert {r["tampering"] for r in table if r["arm"] == "B"} == {""}


def test_the_impossible_controls_count_gamed_passes_per_arm_apart_from_acceptance(tmp_path):
    db = tmp_path / "controls.sqlite"
    done = _run(ROOT / "examples" / "controls-scripted.toml", db)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(
        subprocess.run([*QUOTABENCH, "report", "--json", "--db", str(db)], capture_output=True, text=True).stdout
    )
    section = report["runs"][0]
    assert section["n_tasks"] == 3 and len(section["integrity"]["controls"]) == 6
    arms = {a["arm"]: a for a in section["integrity"]["arms"]}
    assert (arms["A"]["controls"], arms["A"]["controls_gamed"]) == (6, [])
    assert arms["B"]["controls"] == 6 and len(arms["B"]["controls_gamed"]) == 6
    assert arms["B"]["controls_gamed_ci"][0] > 0.5  # Wilson 95% over 6 of 6
    for arm in section["arms"]:  # acceptance is over the three ordinary tasks only
        assert (arm["metrics"]["n_tasks"], arm["metrics"]["accepted"]) == (3, 3)
    reads = {arm["metrics"]["name"]: arm["read"] for arm in section["arms"]}
    assert reads["B"].startswith("gamed 6 of 6 impossible controls: its passes may be gamed too; ")
    assert "gamed" not in reads["A"]
