"""The api key never reaches the ledger or the printed lines, even when an endpoint echoes it
past character 200 (where the old code cut before masking) — in an error body, a plain-text
500, an unparseable body, a stream error event, or the reply's own content and tool arguments."""

from __future__ import annotations

import dataclasses
import secrets

import pytest

from agent.ledger import Ledger
from agent.printer import format_event
from tests.support.engine_helpers import arm_toml, run_sync, write_config
from tests.support.hostile_server import HostileServer

ECHOES = ["echo_key_401", "echo_key_text", "echo_key_garbage", "echo_key_stream", "echo_key_content"]


def _fragments(key: str, size: int = 8) -> set[str]:
    return {key[i : i + size] for i in range(len(key) - size + 1)}


@pytest.mark.parametrize("padding", [250, 195])
def test_an_echoed_key_is_masked_before_any_cut(tmp_path, monkeypatch, padding):
    key = "sk-qb-" + secrets.token_hex(18)[:35]
    assert len(key) == 41
    monkeypatch.setenv("QB_ECHO_KEY", key)
    with HostileServer(key_padding=padding) as server:
        arms = [
            arm_toml(
                name,
                name,
                base_url=server.base_url,
                max_retries=1,
                extra='api_key_env = "QB_ECHO_KEY"\n' + ("" if name == "echo_key_stream" else "stream = false\n"),
            )
            for name in ECHOES
        ]
        # preflight forced: its probes meet the echoed key too, and the run goes on whatever they find
        cfg = write_config(
            tmp_path, arms, tasks=["py-word-count"], max_attempts=1, max_turns=2, run_extra='preflight = "force"\n'
        )
        _, run_id, events = run_sync(cfg, tmp_path / "l.sqlite")
        assert f"Bearer {key}" in server.authorizations  # it was sent, though
    ledger = Ledger(tmp_path / "l.sqlite")
    assert ledger.run(run_id)["status"] == "finished"
    errors = [
        c["error"] for c in ledger.query("select error from calls where run_id = ? and error is not null", [run_id])
    ]
    assert any("***" in e for e in errors)  # the echo was there, masked
    pieces = _fragments(key)
    for path in tmp_path.glob("l.sqlite*"):
        blob = path.read_bytes().decode("utf-8", "replace")
        leaked = [p for p in pieces if p in blob]
        assert not leaked, (path.name, leaked[:3])
    printed = "\n".join(filter(None, (format_event(e) for e in events)))
    printed += "\n".join(str(v) for e in events for v in dataclasses.asdict(e).values())
    assert not [p for p in pieces if p in printed]


@pytest.mark.parametrize("placeholder", ["none", "EMPTY", "x"])
def test_a_local_servers_placeholder_key_does_not_rewrite_text(monkeypatch, placeholder):
    from agent.endpoints.endpoint import ChatClient, EndpointSettings

    monkeypatch.setenv("QB_PLACEHOLDER_KEY", placeholder)
    client = ChatClient(EndpointSettings("http://127.0.0.1:9/v1", "local", api_key_env="QB_PLACEHOLDER_KEY"))
    text = "content-type text/html; return none if EMPTY else x"
    assert client.mask(text) == text
    monkeypatch.setenv("QB_PLACEHOLDER_KEY", "sk-" + "a1b2c3d4e5")
    secret = ChatClient(EndpointSettings("http://127.0.0.1:9/v1", "local", api_key_env="QB_PLACEHOLDER_KEY"))
    assert secret.mask("key sk-a1b2c3d4e5 echoed") == "key *** echoed"
