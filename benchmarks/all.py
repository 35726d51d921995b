"""Every figure the README quotes, regenerated: runs each benchmark script the docs read from,
one after another in fresh processes, prints each figure beside its floor, target and the load,
writes them all to benchmarks/results.json with the commit and date, and rewrites the figure
blocks (`<!-- figures:NAME -->` ... `<!-- /figures:NAME -->`) in README.md and docs/ from it.

    python benchmarks/all.py                    run everything, write results.json, rewrite the blocks
    python benchmarks/all.py --only engine,report   run those, keep the other scripts' last results
    python benchmarks/all.py --check            run nothing: name every block that results.json
                                                would render differently (exit 1 if any), and
                                                every block results.json cannot fill
    python benchmarks/all.py --render           run nothing: rewrite the blocks from results.json

Exits 1 when a script fails or a figure misses its target (the blocks are written all the same:
they say so).
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.readme_figures import BLOCKS, Results  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results.json"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SCRIPTS = {  # name: the command the README's figures come from
    "engine": ["benchmarks/engine.py"],
    "report": ["benchmarks/report.py"],
    "export": ["benchmarks/export.py"],
    "memory": ["benchmarks/memory.py"],
    "mechanics": ["benchmarks/mechanics.py"],
    "sandbox": ["benchmarks/sandbox.py"],
    "executor": ["benchmarks/executor.py"],
    "tui": ["benchmarks/tui.py", "--rate", "500", "--rate", "2000", "--size", "80x24", "--size", "120x40"]
    + ["--size", "160x50"],
    "browse": ["benchmarks/browse.py", "--size", "80x24", "--size", "120x40"],
}
BLOCK = re.compile(r"(<!-- figures:(?P<name>[a-z_]+) -->\n)(?P<body>.*?)(\n<!-- /figures:(?P=name) -->)", re.S)


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True).stdout.strip()


def commit() -> str:
    """HEAD's short hash, marked when tracked files differ from it (figures of uncommitted code)."""
    dirty = _git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!benchmarks/results.json", ":!*.md")
    return _git("rev-parse", "--short", "HEAD") + ("+changes" if dirty else "")


def run_script(name: str) -> tuple[dict, int]:
    """The script's figures and its exit status (1: a target missed)."""
    command = SCRIPTS[name]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "figures.json"
        print(f"\n$ python {' '.join(command)}", flush=True)
        done = subprocess.run([sys.executable, *command, "--json", str(out)], cwd=ROOT)
        if not out.exists():
            raise SystemExit(f"benchmarks/all.py: {command[0]} exited {done.returncode} without figures — run it alone")
        figures = json.loads(out.read_text())
    return figures | {
        "command": "python " + " ".join(command),
        "exit": done.returncode,
        "commit": commit(),
    }, done.returncode


def _n(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def print_figures(results: Results) -> None:
    for name, script in results["scripts"].items():
        load = f"load {script['load_start']:.1f} → {script['load_end']:.1f}"
        for key, f in script["figures"].items():
            floor = ""
            if f["floor"] is not None:
                floor = f"floor {_n(f['floor'])} {f['unit']}" + (f" ({f['floor_is']})" if f["floor_is"] else "")
            verdict = {True: "met", False: "MISSED", None: ""}[f["ok"]]
            print(
                f"{name:<9} {key:<36} {_n(f['value']):>10} {f['unit']:<7} {floor:<44} {f['target'] or '':<22} "
                f"{verdict:<6} {load}"
            )


def rendered(results: Results) -> dict[str, str]:
    out = {}
    for name, render in BLOCKS.items():
        try:
            out[name] = render(results)
        except KeyError as exc:  # a script not run yet, or run without this figure
            out[name] = f"(no figure {exc} in benchmarks/results.json — run `python benchmarks/all.py`)"
    return out


def rewrite(blocks: dict[str, str], check: bool) -> list[str]:
    """Rewrite (or with `check`, compare) every block in the docs; returns what is stale or unknown."""
    problems = []
    for path in DOCS:
        text = path.read_text()

        def fill(match: re.Match[str], path: Path = path) -> str:
            name = match["name"]
            if name not in blocks:
                problems.append(f"{path.relative_to(ROOT)}: block {name!r} is not one of {sorted(blocks)}")
                return match[0]
            if check and match["body"] != blocks[name]:
                old = set(match["body"].splitlines())
                changed = [line for line in blocks[name].splitlines() if line not in old]
                problems.append(
                    f"{path.relative_to(ROOT)}: block {name!r} is stale — now reads:\n    "
                    + "\n    ".join(changed[:12])
                )
            return match[1] + blocks[name] + match[4]

        new = BLOCK.sub(fill, text)
        if not check and new != text:
            path.write_text(new)
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help=f"comma-separated scripts to run, of {', '.join(SCRIPTS)}")
    parser.add_argument("--check", action="store_true", help="run nothing; name the blocks results.json would change")
    parser.add_argument("--render", action="store_true", help="run nothing; rewrite the blocks from results.json")
    args = parser.parse_args(argv)
    failed = False
    if args.check or args.render:
        results = json.loads(RESULTS.read_text())
    else:
        names = args.only.split(",") if args.only else list(SCRIPTS)
        unknown = sorted(set(names) - set(SCRIPTS))
        if unknown:
            raise SystemExit(f"benchmarks/all.py: unknown scripts {unknown} — choose from {', '.join(SCRIPTS)}")
        results = json.loads(RESULTS.read_text()) if args.only and RESULTS.exists() else {"scripts": {}}
        for name in names:
            results["scripts"][name], code = run_script(name)
            failed |= code != 0
        results["scripts"] = {n: results["scripts"][n] for n in SCRIPTS if n in results["scripts"]}
        results["commit"] = commit()
        results["date"] = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
        RESULTS.write_text(json.dumps(results, indent=1) + "\n")
        print()
        print_figures(results)
    problems = rewrite(rendered(results), check=args.check)
    for problem in problems:
        print(problem, file=sys.stderr)
    if args.check:
        return 1 if problems else 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
