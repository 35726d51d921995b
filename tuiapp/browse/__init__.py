"""The post-run browser (`quotabench browse`): read-only screens over any ledger, including
one from a crashed run.

app.py        make_app(ledger, run_id) / run_browser / browse_screen (for the live view)
runs.py       RunsScreen: every run with its headline numbers
run.py        RunScreen: report decision table + paired comparison, task × arm grid, filters
task.py       TaskScreen: the arms side by side, attempt by attempt
attempt.py    AttemptScreen: evidence, diff, transcript tabs
base.py       BrowseScreen: ledger reads in workers, the one failure handler, going back
data.py       the reads (plain dataclasses, no Textual), run in worker threads
evidence.py   the verdict and its evidence per failure class (Rich renderables)
diffview.py   unified / side-by-side diff, highlighted with pygments
transcript.py the transcript widget (tool calls collapsed)
labels.py     badges and number formats; browse.tcss the layout
"""
