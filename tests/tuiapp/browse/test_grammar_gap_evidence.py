"""A grammar gap in the browser: its own section beside the attempt's class, apart from the
edit-mechanics evidence (an engine run graded with real cargo, read back from its ledger)."""

from __future__ import annotations

from rich.console import Console

from agent.ledger import Ledger
from tests.support.engine_helpers import arm_toml, run_sync, write_config
from tests.support.verifier_tasks import rust_dyn_lifetime_task
from tuiapp.browse.data import load_attempt
from tuiapp.browse.evidence import render_evidence


def _shown(ledger: Ledger, attempt_id: str) -> str:
    console = Console(width=160, record=True)
    console.print(render_evidence(load_attempt(ledger, attempt_id)))
    return console.export_text()


def test_the_browser_shows_a_grammar_gap_apart_from_edit_mechanics(tmp_path):
    rust_dyn_lifetime_task(tmp_path / "suite")
    arms = [arm_toml("solver", "solver"), arm_toml("cut", "unparseable")]
    cfg = write_config(tmp_path, arms, suites=(str(tmp_path / "suite"),), max_attempts=1, max_turns=4)
    _, run_id, _ = run_sync(cfg, tmp_path / "l.sqlite")
    ledger = Ledger(tmp_path / "l.sqlite")
    ids = {
        a["arm"]: a["id"]
        for a in ledger.query(
            "select r.name as arm, a.id from attempts a join arms r on r.id = a.arm_id where a.run_id = ?", [run_id]
        )
    }
    accepted = _shown(ledger, ids["solver"])
    assert "class accepted" in accepted
    assert "§ Grammar gaps (n=1): tree-sitter could not parse these" in accepted
    assert "src/lib.rs:2:16" in accepted and "Tree-sitter findings" not in accepted
    cut = _shown(ledger, ids["cut"])
    assert "class edit-mechanics" in cut and "Tree-sitter findings" in cut and "Grammar gaps" not in cut
