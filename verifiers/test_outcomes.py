"""A test's outcome, as every runner's report says it."""

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"
