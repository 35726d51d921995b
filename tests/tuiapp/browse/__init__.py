"""Tests of the post-run browser (tuiapp.browse) and `quotabench export`."""
