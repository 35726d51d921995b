"""An arm at run time (its client, quota and state), and how its endpoint comes to exist: one
factory per arm kind, keyed by the kind names agent.config owns (ArmKind).

openai    an OpenAI-compatible endpoint that is already running (base_url)
scripted  the in-package scripted server, started on loopback for this run
llamacpp  a llama.cpp server quotabench starts and stops itself (agent/endpoints/llamacpp.py)
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from agent import QuotabenchError
from agent.config import ARM_KINDS, ArmConfig, ArmKind, EndpointKnobs, LlamaCppSettings, ScriptedSettings
from agent.endpoints.chat import ChatEndpoint, EndpointSettings
from agent.endpoints.endpoint import ChatClient
from agent.ledger.store import new_id
from agent.run.quota import Quota
from agent.states import ArmState

if TYPE_CHECKING:
    from agent.endpoints.llamacpp import LlamaServer


@dataclass
class ArmRuntime:
    config: ArmConfig
    client: ChatEndpoint
    quota: Quota
    arm_id: str = ""
    endpoint_url: str = ""
    constants: dict[str, Any] = field(default_factory=dict)
    state: ArmState = ArmState.RUNNING
    busy_ms: int = 0
    paced_ms: int = 0  # time its calls waited for the provider's rate limit (agent/endpoints/pacing.py)
    cap_raises: list[dict[str, Any]] = field(default_factory=list)  # {from, to, utc, used}: the user's raises
    gate: anyio.Lock | None = None  # held around each call when the server serves one request at a time
    model_reported: str | None = None
    system_fingerprint: str | None = None
    session_id: str | None = None  # the server session (a new id per server start); None: not ours to know

    @property
    def name(self) -> str:
        return self.config.name


def settings_for(arm: ArmConfig, base_url: str, model: str | None = None) -> EndpointSettings:
    knobs = {f.name: getattr(arm, f.name) for f in fields(EndpointKnobs)}
    return EndpointSettings(base_url, model or arm.model, **knobs | {"headers": dict(arm.headers)})


@dataclass(frozen=True)
class Endpoint:
    """Where an arm's requests go, and what was observed while bringing it up."""

    base_url: str
    model: str
    constants: dict[str, Any] = field(default_factory=dict)
    transport: object | None = None  # an httpx transport, for in-process endpoints (benchmarks)
    gate: anyio.Lock | None = None  # an anyio.Lock shared by arms of one single-request server
    session_id: str | None = None  # set when quotabench started the server: a new id per start


@contextlib.asynccontextmanager
async def _openai(arm: ArmConfig, suites: list[Path], replicate: int) -> AsyncIterator[Endpoint]:
    assert arm.base_url is not None  # config validation requires it for kind "openai"
    yield Endpoint(arm.base_url, arm.model)


def session_seed(settings: ScriptedSettings | None, replicate: int) -> int | None:
    """The scripted server's session seed for replicate `replicate` (1-based): the seeds cycle."""
    if settings is None or not settings.session_seeds:
        return None
    return settings.session_seeds[(replicate - 1) % len(settings.session_seeds)]


@contextlib.asynccontextmanager
async def _scripted(arm: ArmConfig, suites: list[Path], replicate: int) -> AsyncIterator[Endpoint]:
    if arm.base_url:
        yield Endpoint(arm.base_url, arm.model)
        return
    from agent.endpoints.scripted_server import ScriptedServer

    s = arm.scripted or ScriptedSettings()
    seed = session_seed(s, replicate)
    server = ScriptedServer(
        suites,
        delay_s=s.delay_s,
        report_model=s.report_model,
        context_limit=s.context_limit,
        tool_calls=s.tool_calls,
        stream_usage=s.stream_usage,
        slots=s.slots,
        session_seed=seed,
    )
    await anyio.to_thread.run_sync(server.start)
    try:
        yield Endpoint(
            server.base_url, arm.model, {"scripted_server": "in-process", "session_seed": seed}, session_id=new_id()
        )
    finally:
        await anyio.to_thread.run_sync(server.stop)


@dataclass
class _SharedServer:
    """One llama.cpp server and the arms using it (arms with equal settings share it)."""

    server: LlamaServer
    stack: contextlib.AsyncExitStack
    gate: anyio.Lock = field(default_factory=anyio.Lock)
    users: int = 0
    session_id: str = ""


_shared_servers: dict[LlamaCppSettings, _SharedServer] = {}  # keyed by LlamaCppSettings
_shared_lock = anyio.Lock()


@contextlib.asynccontextmanager
async def _llamacpp(arm: ArmConfig, suites: list[Path], replicate: int) -> AsyncIterator[Endpoint]:
    from agent.endpoints.llamacpp import llama_server

    key = arm.llamacpp
    assert key is not None  # config validation requires [arms.llamacpp] for kind "llamacpp"
    async with _shared_lock:
        shared = _shared_servers.get(key)
        if shared is None:
            stack = contextlib.AsyncExitStack()
            shared = _shared_servers[key] = _SharedServer(
                await stack.enter_async_context(llama_server(key)), stack, session_id=new_id()
            )
        shared.users += 1
    server = shared.server
    try:
        # llama-cpp-python serves one request at a time: queueing here instead of in the server
        # keeps each arm's busy time (its share of the server) free of the other arm's calls.
        yield Endpoint(
            server.base_url, server.model_id, server.constants, gate=shared.gate, session_id=shared.session_id
        )
    finally:
        with anyio.CancelScope(shield=True):
            async with _shared_lock:
                shared.users -= 1
                if shared.users == 0:
                    del _shared_servers[key]
                    await shared.stack.aclose()


# The factory of every arm kind, by the name a config gives it (agent.config.ArmKind).
FACTORIES: dict[str, Callable[..., Any]] = {
    ArmKind.OPENAI: _openai,
    ArmKind.LLAMACPP: _llamacpp,
    ArmKind.SCRIPTED: _scripted,
}


@contextlib.asynccontextmanager
async def open_arm(arm: ArmConfig, suites: list[Path], cap: int, replicate: int = 1) -> AsyncIterator[ArmRuntime]:
    """The arm's endpoint (started here when quotabench runs its server) and client; `replicate`
    (1-based) picks a scripted server's session seed."""
    factory = FACTORIES.get(arm.kind)
    if factory is None:
        raise QuotabenchError(f"arm {arm.name}: unknown kind {arm.kind!r} — valid kinds: {', '.join(ARM_KINDS)}")
    async with factory(arm, suites, replicate) as endpoint:
        client = ChatClient(settings_for(arm, endpoint.base_url, endpoint.model), transport=endpoint.transport)
        try:
            yield ArmRuntime(
                arm,
                client,
                Quota(cap),
                endpoint_url=endpoint.base_url,
                constants=endpoint.constants,
                gate=endpoint.gate,
                session_id=endpoint.session_id,
            )
        finally:
            with anyio.CancelScope(shield=True):
                await client.aclose()
