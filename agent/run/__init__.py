"""Running a paired benchmark: the engine that drives both arms, one attempt and its agent loop
with the tools, quotas, strategies, the sequential decision, and resuming a killed run.

engine.py          RunEngine: arms, task order, pause/stop/abort, the run's end
quota_stops.py     an arm's quota running out: the auto-pause choice point, censoring, the provider's quota
host.py            RunHost: the engine as its helpers (attempt, strategies, decision, gate) see it
prepare.py         before anything is recorded: tasks loaded, keys and sandbox checked; a new run's rows
arms.py            an arm at run time: its client, quota, state, and a factory per arm kind
arm_rows.py        an arm's ledger row: inserted for a new run, picked up when resuming (columns: agent/ledger/rows.py)
inflight.py        what the run waits for (calls, visible tests, grades); work a stop-now abandons
attempt.py         one attempt: fresh workspace, the loop, its end
calls.py           an attempt's model calls: quota reserved, one ledger row per try, lost calls
grading.py         an attempt's grade and class, one transaction (also for resume)
loop.py            the agent loop: a model call, its tool calls, until finish or a limit
tools.py           the tools a model can call, confined to the workspace
text_protocol.py   actions as fenced blocks in plain text, for models without native tool calls
workspace_diff.py  what an attempt changed: files and unified diff
quota.py           an arm's token cap: reservations before a call, settlement after
strategies.py      test-time strategies (direct, parallel@k, revise) for one task
strategy_prompts.py  critique, revision and judge prompts and their strict parsers
selection.py       choosing the submitted candidate: visible tests, first non-empty
decision.py        the always-valid paired test watched as tasks are decided
schedule.py        replicates: one manifest run N times, servers restarted between them
replicate.py       one replicate's number and set, as the engine records them
runtime_gate.py    tasks whose language runtime is missing are skipped, not failed
resume.py          finishing a killed or aborted run; resume_plan.py: what is left to do
killpoints.py      named points where tests kill the process (QUOTABENCH_KILL_AT)
"""
