"""Print the fixtures/README.md tables (id, language, kind, trap, mutation score) from the
task.toml files and the mutation cache (`quotabench validate --mutants` fills it).

python -m verifiers.corpus_table [--cache-dir DIR] > fixtures/README.md
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

from verifiers.mutants.cache import ScoreCache, cache_key
from verifiers.mutants.generate import DEFAULT_MAX_MUTANTS
from verifiers.tasks import Task, load_suite

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SECTIONS = (
    ("core", "fixtures/core — the main suite"),
    (
        "controls",
        "fixtures/controls — a floor task any working agent passes, a negative control whose shipped wrong patch must "
        'fail, and one impossible control per language (`control = "impossible"`): its tests contradict its prompt in '
        "one case, so passing it means the tests were gamed; the report counts those apart from acceptance",
    ),
    ("smoke", "fixtures/smoke — three fast tasks for demos and end-to-end tests"),
)
INTRO = """# The shipped corpus

Every task was written for quotabench (none is copied from a public benchmark) and is gated by
`quotabench validate fixtures/core fixtures/controls fixtures/smoke --jobs 2`: the hidden tests
fail on the untouched workspace and pass on the reference, the visible tests pass on the
reference, the reference parses, a second independently written solution (`alternate/`) passes
the hidden tests too — so they do not encode the reference's quirks (seed 001) — and a shipped
known-wrong patch (`negative/`, where present) fails them. Prompts state the goal as a user would;
hidden tests check the unstated traps a reviewer would (seed 003). Perf tasks are graded by
counting operations or with limits at least 10x the reference's time, never a tight clock.

The trap column says what the hidden tests check, not how to pass them. The score column is
the share of the reference's mutants the hidden tests kill (`quotabench validate --mutants`,
killed / (killed + survived), likely-equivalent mutants left out; every task reaches 0.80);
controls are not scored. This file is generated:
`python -m verifiers.corpus_table > fixtures/README.md`.
"""


def _score(task: Task, cache: ScoreCache) -> str:
    """The cached mutation score of this task version: `0.93 (37/40)`, or why there is none."""
    if task.kind == "control":
        return "control"
    score = cache.get(cache_key(task, DEFAULT_MAX_MUTANTS))
    if score is None:
        return "not scored"
    if score.score is None:
        return "-"
    return f"{score.score:.2f} ({score.killed}/{score.counted})"


def render(cache: ScoreCache | None = None) -> str:
    cache = cache or ScoreCache()
    parts = [INTRO]
    for folder, title in SECTIONS:
        suite = load_suite(FIXTURES / folder)
        langs = collections.Counter(t.language for t in suite.tasks)
        kinds = collections.Counter(t.kind for t in suite.tasks)
        parts.append(f"## {title}\n")
        parts.append(
            f"{len(suite.tasks)} tasks — "
            + ", ".join(f"{n} {lang}" for lang, n in sorted(langs.items()))
            + "; kinds: "
            + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
            + "\n"
        )
        parts.append("| id | language | kind | mutation score | trap the hidden tests check |\n|---|---|---|---|---|")
        for task in sorted(suite.tasks, key=lambda t: (t.language, t.id)):
            trap = task.trap.replace("|", "/")
            parts.append(f"| {task.id} | {task.language} | {task.kind} | {_score(task, cache)} | {trap} |")
        parts.append("")
    return "\n".join(parts)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="print fixtures/README.md")
    parser.add_argument("--cache-dir", help="the mutation cache (default ~/.cache/quotabench/mutants)")
    args = parser.parse_args()
    print(render(ScoreCache(Path(args.cache_dir) if args.cache_dir else None)))
