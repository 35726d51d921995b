"""Mutation scoring of a task's hidden tests (weak tests let wrong code through).

operators    the per-language table: which tree-sitter node kinds each mutation reads
generate     mutants of the reference's changed files (byte-range edits, parsed, deduplicated)
outcome      how a grade's verdict maps to killed / survived / unviable / flagged
equivalence  survivors that behave like the alternate on the tests' inputs and their neighbours
qb_trace     the call recorders (a pytest plugin, a JS/TS module) put beside the code under test
runner       grade every mutant through the executor, in parallel, with the cache
cache        one small JSON file per task version

The text (per-task rows, survivors as diffs, the suite's score with its interval) is
agent/metrics/mutation.py's; the command is tuiapp/cli/mutants.py.
"""
