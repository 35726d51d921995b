"""Preflight that holds: an HTML page as base_url is refused on both stream settings, a first
request past an arm's cap is refused before anything is sent, the probes' own spend is bounded
by run.preflight_budget_tokens (and printed), and a run warns about a prompt an arm cannot afford.
Real servers on 127.0.0.1 (`python -m http.server`, a page-on-POST server, the scripted server),
a real ledger, the CLI as a subprocess."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from agent import events as ev
from agent.config import load_config
from agent.endpoints.endpoint import CallTry, ChatClient, EndpointError, EndpointSettings
from agent.ledger import Ledger
from agent.ledger.writer import AsyncLedger
from agent.preflight import preflight_standalone, spent_line, table_lines
from agent.run.prepare import load_tasks
from tests.conftest import FIXTURES, ROOT
from tests.support.engine_helpers import arm_toml, run_sync, write_config
from tests.support.not_chat_servers import http_server_module, other_api, page_on_post

SERVERS = {"http.server": http_server_module, "page on POST": page_on_post}
OTHER_APIS = {"JSON": lambda root: other_api(root), "events": lambda root: other_api(root, events=True)}


def _cli(*args: object, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tuiapp.cli", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("server", SERVERS)
async def test_an_html_page_is_not_a_chat_completion_on_either_path(tmp_path, server, stream):
    tries: list[CallTry] = []

    async def on_try(t: CallTry) -> None:
        tries.append(t)

    with SERVERS[server](tmp_path) as base_url:
        client = ChatClient(EndpointSettings(base_url, "m", stream=stream, max_retries=1, backoff_base_s=0.0))
        try:
            with pytest.raises(EndpointError):
                await client.complete([{"role": "user", "content": "hi"}], on_try=on_try)
        finally:
            await client.aclose()
    assert len(tries) == 2
    for t in tries:
        assert t.status == "malformed_json" and t.usage_source == "none"
        assert (t.prompt_tokens, t.completion_tokens, t.text) == (0, 0, "")
        assert t.error.startswith("not a chat completion: HTTP ") and "text/html" in t.error and "<!DOCTYPE" in t.error


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("api", OTHER_APIS)
async def test_another_apis_json_or_events_are_not_a_chat_completion(tmp_path, api, stream):
    tries: list[CallTry] = []

    async def on_try(t: CallTry) -> None:
        tries.append(t)

    with OTHER_APIS[api](tmp_path) as base_url:
        client = ChatClient(EndpointSettings(base_url, "m", stream=stream, max_retries=0))
        try:
            with pytest.raises(EndpointError):
                await client.complete([{"role": "user", "content": "hi"}], on_try=on_try)
        finally:
            await client.aclose()
    (t,) = tries
    assert (
        t.status == "malformed_json" and t.usage_source == "none" and (t.prompt_tokens, t.completion_tokens) == (0, 0)
    )
    assert t.error.startswith("not a chat completion: JSON without `choices`")


def test_preflight_refuses_another_api_on_both_stream_settings(tmp_path):
    for api in OTHER_APIS.values():
        with api(tmp_path) as base_url:
            for stream in (True, False):
                done = _cli("preflight", _html_config(tmp_path, base_url, stream), "--db", tmp_path / "l.sqlite")
                assert done.returncode == 2 and done.stderr.count("\n") == 1, (stream, done.stderr)
                assert "no usable reply (not a chat completion: JSON without `choices`" in done.stderr


def _html_config(tmp_path: Path, base_url: str, stream: bool) -> Path:
    extra = f"stream = {str(stream).lower()}\n"
    return write_config(
        tmp_path, [arm_toml("A", "m", base_url=base_url, max_retries=0, extra=extra)], tasks=["py-word-count"]
    )


@pytest.mark.parametrize("server", SERVERS)
def test_preflight_refuses_an_html_base_url_with_stream_on_and_off(tmp_path, server):
    with SERVERS[server](tmp_path) as base_url:
        for stream in (True, False):
            done = _cli("preflight", _html_config(tmp_path, base_url, stream), "--db", tmp_path / "l.sqlite")
            assert done.returncode == 2, (stream, done.stdout, done.stderr)
            assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
            assert done.stderr.startswith(
                "quotabench: preflight found what would invalidate a run: arm A model: no usable reply "
                "(not a chat completion: HTTP "
            ), done.stderr
            assert "model           differs!" in done.stdout and "verdict: invalidating" in done.stdout


def test_a_run_against_an_html_page_is_refused_not_run_as_harness_errors(tmp_path):
    with page_on_post(tmp_path) as base_url:
        db = tmp_path / "l.sqlite"
        done = _cli("run", _html_config(tmp_path, base_url, True), "--db", db, "--headless")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "not a chat completion" in done.stderr and done.stderr.count("\n") == 1
    ledger = Ledger(db)
    (run,) = ledger.runs()
    assert run["status"] == "refused" and not ledger.attempts(run["id"])
    statuses = {r["status"] for r in ledger.query("select status from calls where run_id = ?", [run["id"]])}
    assert statuses == {"malformed_json"}


def huge_suite(root: Path, prompt_chars: int) -> Path:
    """A suite of py-word-count and a copy of it whose prompt.md holds `prompt_chars` characters."""
    suite = root / "suite"
    shutil.copytree(FIXTURES / "smoke" / "py-word-count", suite / "py-word-count")
    huge = suite / "py-huge"
    shutil.copytree(FIXTURES / "smoke" / "py-word-count", huge)
    toml = (huge / "task.toml").read_text().replace('id = "py-word-count"', 'id = "py-huge"')
    head, _, rest = toml.partition('prompt = """')
    (huge / "task.toml").write_text(head + rest.partition('"""\n')[2])
    (huge / "prompt.md").write_text("Count the words. " + "x" * prompt_chars)
    return suite


def _suite_config(tmp_path: Path, suite: Path, arms: list[str], run_extra: str = "") -> Path:
    cfg = tmp_path / "run.toml"
    cfg.write_text(f'[run]\nsuites = ["{suite}"]\nmax_attempts = 1\n{run_extra}\n' + "".join(arms))
    return cfg


def _preflight(cfg: Path, db: Path):
    config = load_config(cfg)
    return anyio.run(
        lambda: preflight_standalone(config, load_tasks(config), AsyncLedger(Ledger(db)), lambda *_: None)
    ), config


def test_a_21_mb_prompt_is_never_sent_by_preflight(tmp_path):
    suite = huge_suite(tmp_path, 21_000_000)
    cfg = _suite_config(tmp_path, suite, [arm_toml("A", "solver", cap=200_000), arm_toml("B", "solver", cap=9_000_000)])
    db = tmp_path / "l.sqlite"
    results, config = _preflight(cfg, db)
    by_arm = {r.arm: {c.name: c for c in r.checks} for r in results}

    capped = by_arm["A"]["context"]  # the run could not finish its suite under this cap
    assert (capped.status, capped.invalidating) == ("differs", True)
    assert "task py-huge" in capped.observed and "passes cap_tokens 200,000" in capped.observed
    assert "not sent" in capped.observed and "raise cap_tokens" in capped.fix
    budgeted = by_arm["B"]["context"]  # affordable under a 9M cap, but not within the preflight budget
    assert budgeted.status == "unknown" and not budgeted.invalidating
    assert "not sent" in budgeted.observed and "preflight_budget_tokens" in budgeted.fix
    calls = Ledger(db).query("select arm, prompt_tokens, completion_tokens from calls where kind = 'preflight'")
    assert calls and max(c["prompt_tokens"] for c in calls) < 5_000  # the scripted server's own count
    for r in results:
        assert r.tokens <= config.preflight_budget_tokens == 100_000
        assert sum(c["prompt_tokens"] + c["completion_tokens"] for c in calls if c["arm"] == r.arm) == r.tokens


def test_the_budget_bounds_every_probe_and_is_printed(tmp_path):
    arm = arm_toml("A", "solver", extra="context_tokens = 8192\n[arms.scripted]\ncontext_limit = 8192\n")
    cfg = write_config(tmp_path, [arm], tasks=["py-word-count"], run_extra="preflight_budget_tokens = 3000\n")
    (result,), config = _preflight(cfg, tmp_path / "l.sqlite")
    context = {c.name: c for c in result.checks}["context"]
    assert context.status == "unknown" and "just under the limit): not sent" in context.observed
    assert "left of preflight_budget_tokens 3,000" in context.observed and "preflight_budget_tokens" in context.fix
    assert 0 < result.tokens <= 3_000 and result.budget == 3_000
    assert "of a 3,000-token budget" in table_lines(result)[-1]
    assert "budget 3,000 tokens per arm (run.preflight_budget_tokens)" in spent_line([result])

    (full,), _ = _preflight(write_config(tmp_path, [arm], tasks=["py-word-count"]), tmp_path / "l.sqlite")
    assert {c.name: c for c in full.checks}["context"].status == "ok" and full.tokens > 8_000  # the default pays


def test_preflight_budget_key_is_bounded_at_load(tmp_path):
    cfg = write_config(tmp_path, [arm_toml("A", "solver")], run_extra="preflight_budget_tokens = 0\n")
    done = _cli("preflight", cfg)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "run.preflight_budget_tokens = 0" in done.stderr and "Traceback" not in done.stderr


def test_run_warns_about_a_prompt_an_arm_cannot_afford_and_never_sends_it(tmp_path):
    suite = huge_suite(tmp_path, 1_000_000)  # ~250k tokens: past A's 200k cap, within B's
    arms = [arm_toml("A", "solver", cap=200_000), arm_toml("B", "solver", cap=2_000_000)]
    cfg = _suite_config(tmp_path, suite, arms, run_extra='preflight = "off"\ntasks = ["py-huge"]\n')
    db = tmp_path / "l.sqlite"
    _, run_id, events = run_sync(cfg, db)
    warnings = [e.text for e in events if isinstance(e, ev.LogMessage) and e.level == "warning"]
    (line,) = [w for w in warnings if "first request alone" in w]  # arm A only: B's cap pays for it
    assert line.startswith("task py-huge: its first request alone is ~250,") and "(+ max_tokens 1,024)" in line
    assert "past arm A's cap_tokens 200,000: the arm is censored at that task's first call — " in line
    ledger = Ledger(db)
    arms = {a["name"]: a for a in ledger.arms(run_id)}
    assert arms["A"]["censored"] == 1
    sent = ledger.query("select max(prompt_tokens) n from calls where run_id = ? and arm = 'A'", [run_id])[0]["n"]
    assert not sent  # nothing of the prompt went out on arm A


def test_a_first_prompt_over_the_cap_is_refused_before_anything_is_spent_and_force_runs_it(tmp_path):
    suite = huge_suite(tmp_path, 1_000_000)  # ~250k estimated tokens: more than A's cap
    arms = [arm_toml("A", "solver", cap=200_000), arm_toml("B", "solver", cap=9_000_000)]
    cfg = _suite_config(tmp_path, suite, arms, run_extra='tasks = ["py-word-count", "py-huge"]')
    db = tmp_path / "l.sqlite"
    done = _cli("run", cfg, "--db", db, "--headless")
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = [x for x in done.stderr.splitlines() if "refused" in x]
    assert "arm A context" in line and "task py-huge" in line and "passes cap_tokens 200,000" in line
    assert "--force" in line and "arm B" not in line
    ledger = Ledger(db)
    (run,) = ledger.runs()
    assert run["status"] == "refused" and not ledger.attempts(run["id"])  # nothing spent on the other task
    forced = _cli("run", cfg, "--db", db, "--headless", "--force")
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert "censored" in forced.stdout
