"""Memory stays flat over a long run (issue 15): 1,000 scripted attempts over loopback HTTP, and
what used to grow with every request — the token estimator's cache of tools lists (the server
parses a fresh list per request) and the scripted server's log of request bodies — stays at
its bound."""

from __future__ import annotations

import pytest

from agent.endpoints import tokens
from agent.endpoints.scripted_server import REQUEST_LOG, ScriptedServer
from tests.conftest import FIXTURES
from tests.support.engine_helpers import arm_toml, run_sync, write_config
from verifiers.grading import GradeResult

pytestmark = pytest.mark.slow

TASKS = [
    "py-config-layering",
    "py-duration-millis",
    "py-env-settings",
    "py-free-slots",
    "py-http-byte-range",
    "py-inventory-tags",
    "py-json-path-get",
    "py-ledger-transfers",
    "py-retry-decorator",
    "py-tail-lines",
]


class FailingGrader:
    """Every attempt fails, so each task uses its whole budget: 10 tasks × 100 attempts."""

    def grade(self, task, workspace):
        return GradeResult("fail", 1, 1, 0, 1, "1 failed", {})

    def run_visible(self, task, workspace, timeout_s=None):
        return self.grade(task, workspace)


def test_a_thousand_scripted_attempts_keep_the_caches_and_the_request_log_bounded(tmp_path):
    with ScriptedServer([FIXTURES / "core"]) as server:
        config = write_config(
            tmp_path,
            [arm_toml("A", "wrong", base_url=server.base_url, cap=10**9)],
            suites=("core",),
            tasks=TASKS,
            max_attempts=100,
            max_turns=4,
        )
        engine, _, _ = run_sync(config, tmp_path / "l.sqlite", grader=FailingGrader())
        attempts = engine.ledger_sync.query("select count(*) as n, sum(calls) as calls from attempts")[0]
        assert attempts["n"] == 1000
        assert server.served == attempts["calls"] >= 2000  # every request counted ...
        assert len(server.requests) == len(server.request_headers) == REQUEST_LOG  # ... only the last kept
        assert len(server.usage_log) == REQUEST_LOG
    sizes = tokens.cache_sizes()
    assert sizes["tools"] <= tokens.CACHE_SIZE and sizes["conversations"] <= tokens.CACHE_SIZE, sizes


def test_a_growing_conversation_is_estimated_as_a_fresh_list_of_it_is():
    """The estimate of an appended-to conversation starts from its last one: the same total as
    estimating the whole list afresh, at every length, with and without tools."""
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]
    for tool_list in (tools, None):
        growing: list[dict] = [{"role": "system", "content": "be brief"}]
        for turn in range(12):
            growing.append(
                {
                    "role": "assistant",
                    "content": "é" * turn,
                    "tool_calls": [
                        {"id": f"c{turn}", "function": {"name": "read_file", "arguments": {"path": "x" * turn}}}
                    ],
                }
            )
            growing.append({"role": "tool", "tool_call_id": f"c{turn}", "content": "line\n" * turn})
            assert tokens.estimate_messages_tokens(growing, tool_list) == tokens.estimate_messages_tokens(
                [dict(m) for m in growing], tool_list
            )
