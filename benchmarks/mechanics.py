"""tree-sitter edit-mechanics check time per file (issue 2 target: < 5 ms for a 500-line file).

The target applies to the common case, a changed file that still parses. A broken file costs
more (tree-sitter's error recovery, re-parsing the fixture version); both are printed.

    python benchmarks/mechanics.py
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from verifiers.mechanics import check_file  # noqa: E402

UNITS = {
    "python": ("f.py", "def f{i}(a, b):\n    if a > b:\n        return a - b\n    return [x * 2 for x in range(b)]\n\n"),
    "javascript": ("f.mjs", "export function f{i}(a, b) {{\n  if (a > b) return a - b;\n  return [...Array(b).keys()].map((x) => x * 2);\n}}\n\n"),
    "typescript": ("f.ts", "export function f{i}(a: number, b: number): number[] {{\n  if (a > b) return [a - b];\n  return Array.from({{ length: b }}, (_, x) => x * 2);\n}}\n\n"),
    "rust": ("f.rs", "pub fn f{i}(a: i64, b: i64) -> Vec<i64> {{\n    if a > b {{ return vec![a - b]; }}\n    (0..b).map(|x| x * 2).collect()\n}}\n\n"),
    "bash": ("f.sh", "f{i}() {{\n  if [ \"$1\" -gt \"$2\" ]; then\n    echo $(( $1 - $2 ))\n  fi\n}}\n\n"),
}


def main() -> int:
    worst = worst_broken = 0.0
    for language, (name, unit) in UNITS.items():
        lines_per_unit = unit.count("\n")
        source = "".join(unit.format(i=i) for i in range(500 // lines_per_unit + 1))
        source = "\n".join(source.splitlines()[:500]) + "\n"
        before = source.encode()
        after = source.replace("return", "return ", 1).encode()   # a changed, still-valid file
        lines = source.splitlines()
        lines[250] = lines[250][: len(lines[250]) // 2] + " ((("  # a line cut in the middle of the file
        broken = ("\n".join(lines) + "\n").encode()
        check_file(name, after, before)                            # warm the parser
        for label, payload in (("clean", after), ("broken", broken)):
            times = []
            for _ in range(30):
                started = time.perf_counter()
                check_file(name, payload, before)
                times.append(time.perf_counter() - started)
            ms = statistics.median(times) * 1000
            if label == "clean":
                worst = max(worst, ms)
            else:
                worst_broken = max(worst_broken, ms)
            print(f"{language:<11} 500 lines {label:<6} {ms:6.2f} ms")
    print(f"worst median per-file check, file that parses: {worst:.2f} ms (target < 5 ms)")
    print(f"worst median per-file check, broken file (error recovery, fixture re-parse, locating): {worst_broken:.2f} ms")
    return 0 if worst < 5 else 1


if __name__ == "__main__":
    sys.exit(main())
