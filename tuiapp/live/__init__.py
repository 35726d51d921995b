"""The live view of a paired run (Textual): it shows the engine's events and sends it commands.

app.py       LiveApp, make_app(config, ledger, engine | opener=): the screen over a run's RunControls
controls.py  the keys that command the run (pause, abort, stop an arm, quit, Ctrl-C)
run.py       run_live(config, opener) -> (run id, ledger) for the CLI; a crash of the view -> one line + log
state.py     RunState: engine events folded into plain per-arm state (no Textual)
snapshot.py  what the figures thread needs, copied on the UI loop
provider_side.py  an arm's provider meter: rate limits, cached share, waits, why its quota ended
figures.py   aggregate figures on a timer: Wilson, QAP, retry tax, projection, paired gap
widgets.py   quota meter, burn line, arm panel, header, legend; `Fit`: wordings that fit the width
grid.py      the task grid and the event tail (Line API: repaint only what changed)
modals.py    confirm, auto-pause decision, a task's attempts (ledger read in a thread), fatal error
messages.py  what the workers post to the app
replay.py    ReplayEngine: the engine's interface over recorded/synthetic events (snapshots, benchmark)
live.tcss    every colour and size of the screen
"""
