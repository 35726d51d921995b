"""The fallback sandbox, for machines where bubblewrap cannot run. Every result says so.

What it still does: runs on a private scratch copy of the source (the host folders are never
written), rlimits, a scrubbed environment, no network where `unshare -n` is allowed, a pids
cgroup where one can be made; as root, no capabilities (and uid nobody when the runtimes are
reachable by it); and after the command: the process group, the cgroup and every process
carrying this run's marker variable are killed (a `setsid` daemon does not outlive the run).
Together with `protect_harness()` (quotabench non-dumpable) the API key in quotabench's
environment stays out of reach.

What it cannot do: hide the host's filesystem (same-uid code can read what that uid reads;
the protected files are plain copies it could change), or bound the total bytes written.
"""

from __future__ import annotations

import os
import shutil
import signal
import uuid
from pathlib import Path
from typing import Any

from verifiers.harness import HARNESS_DIR
from verifiers.hostpaths import host_paths
from verifiers.isolation import PidsCgroup, network_isolation_available
from verifiers.process import run_process, uid_process_count
from verifiers.sandbox import (
    SANDBOX_ERROR_EXIT,
    Limits,
    RunResult,
    base_env,
    harness_channel,
    limit_script,
    protected_files,
)
from verifiers.scratch import remove, scratch_dir

MARKER = "QUOTABENCH_SANDBOX_RUN"
FALLBACK_UID = 65534


class FallbackSandbox:
    name = "fallback"

    def __init__(self, reason: str):
        self.reason = reason
        self.as_root = os.geteuid() == 0
        # Dropping to nobody only helps if nobody can still reach the runtimes (not under /root).
        self.drop_uid = (
            self.as_root
            and shutil.which("setpriv") is not None
            and all(_others_can_reach(p) for p in host_paths().ro_binds)
        )

    def describe(self) -> dict[str, Any]:
        return {
            "sandbox": "fallback",
            "missing": self.reason,
            "network": "isolated" if self.as_root or network_isolation_available() else "shared",
            "uid": self._uid_note(),
        }

    def _uid_note(self) -> str:
        if self.drop_uid:
            return f"{FALLBACK_UID} (setpriv)"
        if self.as_root:
            return "root without capabilities" if shutil.which("setpriv") else "root"
        return "caller"

    def run(
        self, command: str, source: Path, limits: Limits, protected: Path | None = None, channel: bytes | None = None
    ) -> RunResult:
        root = scratch_dir("fallback")
        root.chmod(0o755)
        work, home, tmp = root / "work", root / "home", root / "tmp"
        shutil.copytree(source, work, symlinks=True)
        for rel in protected_files(protected):
            target = work / rel
            if target.is_dir() and not target.is_symlink():
                remove(target)
            elif target.is_symlink():
                target.unlink()
            target.parent.mkdir(parents=True, exist_ok=True)
            assert protected is not None  # the files listed come from it
            shutil.copy2(protected / rel, target)
        home.mkdir()
        tmp.mkdir()
        if self.drop_uid:
            for path in (root, *root.rglob("*")):
                os.lchown(path, FALLBACK_UID, FALLBACK_UID)
        marker = uuid.uuid4().hex
        cgroup = PidsCgroup(limits.max_procs)
        net_isolated = not limits.network and (self.as_root or network_isolation_available())
        env = base_env(str(home), str(tmp))
        env["PATH"] = ":".join(host_paths().path_dirs)
        env.update(dict(host_paths().env))
        env[MARKER] = marker
        nproc = limits.max_procs + uid_process_count(FALLBACK_UID if self.drop_uid else os.getuid())
        script = "\n".join([limit_script(limits, nproc), command])
        inner = ["/bin/bash", "--noprofile", "--norc", "-c", script]
        if self.as_root and shutil.which("setpriv"):
            # Never root with capabilities: without CAP_SYS_PTRACE even uid 0 cannot read the
            # (non-dumpable) harness's environment, where the API key is.
            uid = [f"--reuid={FALLBACK_UID}", f"--regid={FALLBACK_UID}", "--clear-groups"] if self.drop_uid else []
            inner = ["setpriv", *uid, "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--", *inner]
        if net_isolated:
            inner = ["unshare", "-n" if self.as_root else "-rn", "--", *inner]
        # Join the cgroup first, from a shell that then becomes the command chain.
        argv = [
            "/bin/bash",
            "-c",
            'if [ -n "$1" ]; then echo $$ > "$1" 2>/dev/null; fi; shift; exec "$@"',
            "qb",
            cgroup.procs_file or "",
            *inner,
        ]

        def reap(pid: int) -> None:
            _kill_group(pid)
            cgroup.kill_all()
            _kill_marked(marker)

        try:
            with harness_channel(channel, str(HARNESS_DIR)) as fds:
                env.update(fds.env)
                done = run_process(
                    argv,
                    env=env,
                    cwd=str(work),
                    timeout_s=limits.timeout_s,
                    kill=reap,
                    after_exit=reap,
                    pass_fds=fds.pass_fds,
                    channel_fd=fds.read_fd,
                )
        finally:
            cgroup.remove()
            remove(root)
        isolation = {
            "sandbox": "fallback",
            "missing": self.reason,
            "filesystem": "shared (host view, private copy)",
            "network": "isolated" if net_isolated else "shared",
            "pid_namespace": "off",
            "pids_cgroup": "on" if cgroup.path else "off",
            "rlimits": "on",
            "uid": self._uid_note(),
            "protected_files": "copies (writable)",
        }
        if done.start_error is not None:
            return RunResult(None, done.duration_ms, "", start_error=done.start_error, isolation=isolation)
        if done.exit_status == SANDBOX_ERROR_EXIT and "quotabench sandbox:" in done.output:
            return RunResult(
                done.exit_status,
                done.duration_ms,
                done.output,
                isolation=isolation,
                start_error="the sandbox could not set its limits",
            )
        return RunResult(
            done.exit_status,
            done.duration_ms,
            done.output,
            timed_out=done.timed_out,
            isolation=isolation,
            channel=done.channel if channel is not None else None,
        )


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_marked(marker: str) -> None:
    """Kill every process whose environment carries this run's marker, scanning again after any
    pass that found one (a fork or an exec may race a pass), at most ten passes."""
    needle = f"{MARKER}={marker}".encode()
    for _ in range(10):
        found = False
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/environ", "rb") as fh:
                    if needle in fh.read():
                        os.kill(int(entry.name), signal.SIGKILL)
                        found = True
            except (OSError, ProcessLookupError):
                continue
        if not found:
            return


def _others_can_reach(path: str) -> bool:
    """Every folder on the way to `path` is searchable by any uid."""
    current = Path(path)
    for folder in (current, *current.parents):
        try:
            if folder.is_dir() and not folder.stat().st_mode & 0o001:
                return False
        except OSError:
            return False
    return True
