"""The report's replicates blocks: per-arm scores over comparable runs, pass@k and how often
each task failed."""

from __future__ import annotations

from typing import Any

MAX_FREQUENCY_ROWS = 15


def _pass_cell(a: dict[str, Any], pk: dict[str, Any]) -> str:
    if not a["pass_at_k"]:
        return "—"
    return (
        ", ".join(f"pass@{k} {v['value']:.2f} [{v['lo']:.2f}, {v['hi']:.2f}]" for k, v in a["pass_at_k"].items())
        + f" n={pk['n_tasks']}"
    )


def replicate_blocks(rep: dict[str, Any]) -> list[tuple[Any, ...]]:
    sched, pk = rep["schedule"], rep["pass_at_k"]
    blocks: list[tuple[Any, ...]] = [
        ("heading", f"Replicates: {rep['n_runs']} runs of manifest {rep['manifest_sha256']}")
    ]
    blocks.append(
        (
            "table",
            ["run", "created", "session"],
            [[r["run_id"], r["created_utc"] or "—", r["session_id"] or "—"] for r in sched["runs"]],
        )
    )
    rows = []
    for name, a in rep["arms"].items():
        scores = ", ".join(map(str, a["scores"])) + f" (n={max(a['n_tasks'])} tasks)" if a["scores"] else "—"
        left = ", ".join(f"{x['run_id'][:10]}" for x in a["left_out"]) or "none"
        rows.append(
            [
                name,
                scores,
                "—" if a["median"] is None else f"{a['median']:g}",
                "—" if a["range"] is None else str(a["range"]),
                left,
                _pass_cell(a, pk),
                f"{a['failed_at_least_once']} / {a['failed_every_run']}",
            ]
        )
    headers = [
        "arm",
        "accepted per comparable run",
        "median",
        "range",
        "left out",
        "pass@k over runs [95% CI]",
        "tasks failed: any run / every run",
    ]
    blocks.append(("table", headers, rows))
    lines = []
    for name, a in rep["arms"].items():
        for x in a["left_out"]:
            lines.append(
                f"{name}: run {x['run_id']} left out of the spread and pass@k — {x['why']} "
                "(a censored run is a missing measurement, not a low score)"
            )
    lines.append(
        f"pass@k: k = {pk['k']} (the fewest comparable runs of any arm), over the same {pk['n_tasks']} tasks "
        f"for every arm; 95% CI by bootstrap over tasks ({pk['resamples']:,} resamples, seed {pk['seed']})"
    )
    if pk["note"]:
        lines.append(pk["note"])
    blocks.append(("lines", lines))
    frequencies = []
    for name, a in rep["arms"].items():
        freq = a["failure_frequency"]
        shown = ", ".join(f"{f['task_id']} {f['failed']}/{f['n']}" for f in freq[:MAX_FREQUENCY_ROWS])
        more = f" ... and {len(freq) - MAX_FREQUENCY_ROWS} more" if len(freq) > MAX_FREQUENCY_ROWS else ""
        frequencies.append(f"{name}: {shown or 'none'}{more}")
    blocks.append(("section", "failure frequency per task (failed / comparable runs that finished it):", frequencies))
    blocks.append(
        (
            "lines",
            [
                "failure lists rotate between runs: read the frequencies, never one run's list (seed 003 result 6)",
                sched["note"],
            ],
        )
    )
    return blocks
