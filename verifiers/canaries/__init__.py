"""Canary tests: a hidden pass that no trick can earn without solving the task.

At every hidden grade a few canaries are written into the hidden test files among the real
tests: copies of real tests with the expected side of one assertion deliberately wrong (a
number moved, a string or collection altered, a boolean flipped, an expected exception
swapped), or with one input changed. Each was proven wrong once per task version by running it
against the reference, which must fail it. A pass then needs every real test passed *and*
every canary failed the way the reference fails it, in the runner's own per-test record. A
wrong solution that forces assertions true, or forges a passing report, passes the canaries
too (or leaves them out) and is caught; honest code, which computes the same values as the
reference on the same calls, fails them as the reference does.

    sites.py      tree-sitter: the tests of a hidden file and the places a canary can change
    python.py     pytest tests and their assertions
    node.py       node:test tests and node:assert assertions
    rust.py       libtest tests and assert!/assert_eq! macros
    go.py         go test functions and the `if` checks that fail them (t.Error, t.Fatal, helpers)
    go_file.py    what a Go test file's tests share: its assertion helpers, sentinels, struct types
    go_values.py  one Go test's names, the values its checks compare, and how each can change
    mutate.py     the changes themselves (literals, collections, truth, exceptions)
    pool.py       the candidates of a task version
    proof.py      what the reference's run proved of one (kept with the reference's identities)
    plant.py      a grade's plan: its seed, its canaries, the planted files, the way back from
                  the planted files' test ids to the real ones, and what was seen
"""
