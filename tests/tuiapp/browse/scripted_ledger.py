"""A real ledger from a scripted paired run in which every failure class occurs.

Five tiny python tasks, two arms:

    task        A (scripted "solver", tools)   B (openai kind -> our ScriptedServer, "wrong", text)
    py-add      accepted                       attempt 1 harness_error (HTTP 500 twice), 2 reasoning
    py-greet    accepted                       mechanics (the negative patch does not parse)
    py-sleepy   timeout (hidden test sleeps)   timeout
    py-env      environment (missing module)   environment
    py-wordy      accepted                       censored (its prompt does not fit B's cap)
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import anyio

from agent.config import load_config
from agent.endpoints.scripted_server import ScriptedServer
from agent.ledger import Ledger
from agent.run.engine import RunEngine

PYTEST = "python -m pytest -q -p no:cacheprovider"
# pytest costs seconds per grade in the sandbox: only py-add needs its failing-test names.
QUICK = "python test_hidden.py"
B_CAP = 9000


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


def _task(
    suite: Path,
    task_id: str,
    kind: str,
    prompt: str,
    *,
    workspace: dict,
    hidden: dict,
    reference: dict,
    negative: dict | None = None,
    timeout_s: float = 20,
    hidden_cmd: str = QUICK,
) -> None:
    root = suite / task_id
    _write(
        root,
        {
            "task.toml": f'id = "{task_id}"\nlanguage = "python"\nkind = "{kind}"\n'
            f"visible_cmd = '{QUICK}'\nhidden_cmd = '{hidden_cmd}'\n"
            f"timeout_s = {timeout_s}\n"
        },
    )
    (root / "prompt.md").write_text(prompt)
    _write(root / "workspace", workspace)
    _write(root / "hidden", hidden)
    _write(root / "reference", reference)
    if negative:
        _write(root / "negative", negative)


def write_suite(suite: Path) -> None:
    visible = {"test_hidden.py": "print('visible checks pass')\n"}
    _task(
        suite,
        "py-add",
        "implement-spec",
        "Implement add(a, b) in calc.py.\n",
        workspace={"calc.py": "def add(a, b):\n    raise NotImplementedError\n", **visible},
        hidden={
            "test_hidden.py": """
              from calc import add


              def test_add_small():
                  assert add(2, 3) == 5


              def test_add_zero():
                  assert add(0, 0) == 0
              """
        },
        reference={"calc.py": "def add(a, b):\n    return a + b\n"},
        hidden_cmd=f"{PYTEST} test_hidden.py",
        negative={"calc.py": "def add(a, b):\n    return a - b\n"},
    )
    _task(
        suite,
        "py-greet",
        "bugfix",
        "Make greet(name) return 'Hello, <name>!'.\n",
        workspace={"greet.py": "def greet(name):\n    return 'Hi ' + name\n\n\nWORLD = 'world'\n", **visible},
        hidden={"test_hidden.py": "from greet import greet\n\nassert greet('Ann') == 'Hello, Ann!'\n"},
        reference={"greet.py": "def greet(name):\n    return f'Hello, {name}!'\n\n\nWORLD = 'world'\n"},
        negative={"greet.py": "def greet(name):\n    return f'Hello, {name}!'\n\n\nWORLD = ('world'\n"},
    )
    _task(
        suite,
        "py-sleepy",
        "perf",
        "Implement fast() in fast.py.\n",
        timeout_s=1,
        workspace={"fast.py": "def fast():\n    raise NotImplementedError\n", **visible},
        hidden={"test_hidden.py": "import time\n\nprint('checking speed', flush=True)\ntime.sleep(30)\n"},
        reference={"fast.py": "def fast():\n    return 1\n"},
        negative={"fast.py": "def fast():\n    return 0\n"},
    )
    _task(
        suite,
        "py-env",
        "api-misuse",
        "Implement parse() in parse.py.\n",
        workspace={"parse.py": "def parse(text):\n    raise NotImplementedError\n", **visible},
        hidden={"test_hidden.py": "import yaml_not_installed_anywhere\n"},
        reference={"parse.py": "def parse(text):\n    return text.split()\n"},
        negative={"parse.py": "def parse(text):\n    return text\n"},
    )
    big = "Implement wordy() in wordy.py; it returns 42.\n\n" + "Background notes that make this prompt long. " * 900
    _task(
        suite,
        "py-wordy",
        "refactor",
        big,
        workspace={"wordy.py": "def wordy():\n    raise NotImplementedError\n", **visible},
        hidden={"test_hidden.py": "from wordy import wordy\n\nassert wordy() == 42\n"},
        reference={"wordy.py": "def wordy():\n    return 42\n"},
        negative={"wordy.py": "def wordy():\n    return 0\n"},
    )


CONFIG = """
[run]
suites = ["suite"]
max_attempts = 2
tasks = ["py-add", "py-greet", "py-sleepy", "py-env", "py-wordy"]
preflight = "force"  # py-wordy's first prompt passes B's cap on purpose: B is censored there

[run.limits]
max_turns = 8
max_tokens_per_attempt = 100000
attempt_timeout_s = 60

[[arms]]
name = "A"
kind = "scripted"
model = "solver"
protocol = "tools"
max_concurrency = 3
cap_tokens = 400000
price = {{ input_per_mtok = 0.15, output_per_mtok = 0.60 }}

[[arms]]
name = "B"
kind = "openai"
base_url = "{base_url}"
model = "wrong"
protocol = "text"
max_retries = 1
backoff_base_s = 0.01
backoff_cap_s = 0.02
cap_tokens = {cap}
price = {{ input_per_mtok = 0.10, output_per_mtok = 0.40 }}
"""


async def _drive(engine: RunEngine) -> str:
    async with anyio.create_task_group() as tg:

        async def drain() -> None:
            async for _ in engine.events:
                pass

        tg.start_soon(drain)
        return await engine.run()


def build_scripted_ledger(folder: Path) -> tuple[Path, str]:
    """Write the suite and config into `folder`, run it; returns (ledger path, run id)."""
    folder.mkdir(parents=True, exist_ok=True)
    write_suite(folder / "suite")
    with ScriptedServer([folder / "suite"]) as server:
        server.inject("500", "500")  # B's first call and its one retry: harness_error
        config_path = folder / "run.toml"
        config_path.write_text(CONFIG.format(base_url=server.base_url, cap=B_CAP))
        ledger = Ledger(folder / "ledger.sqlite")
        run_id = anyio.run(_drive, RunEngine(load_config(config_path), ledger))
        ledger.close()
    return folder / "ledger.sqlite", run_id
