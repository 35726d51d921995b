"""Mutation scoring of a task's hidden tests (seed 001: weak tests let wrong code through).

operators  the per-language table: which tree-sitter node kinds each mutation reads
generate   mutants of the reference's changed files (byte-range edits, parsed, deduplicated)
outcome    how a grade's verdict maps to killed / survived / unviable / flagged, and scores
equivalence  survivors that behave like the alternate on the tests' inputs (Python tracer)
runner     grade every mutant through the executor, in parallel, with the cache
cache      one small JSON file per task version
render     the per-task table, survivors as diffs, and the suite summary
"""
