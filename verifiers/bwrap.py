"""The bubblewrap sandbox: model-written code sees a private copy of its tree and nothing else.

Inside, the command finds:
- `/work`, a sized tmpfs holding a copy of the source folder (copied in by the sandboxed
  shell itself, so it runs under the limits), with the protected files (hidden tests)
  bound read-only on top: they can be neither changed, nor replaced, nor removed;
- the system directories and the runtimes (hostpaths.py) read-only, a synthetic /etc with
  only what programs need, a fresh /proc of its own pid namespace, a minimal /dev, a sized
  private /tmp; no /sys, no /run, no home, no suites, no ledger;
- no network at all (its own network namespace: path sockets on the host are not mounted,
  abstract ones are per namespace), no capabilities, a new session, and an unprivileged uid:
  the caller's own uid through a user namespace, or — when quotabench runs as root — a
  throwaway uid set by `setpriv` after the mounts are made, never root;
- rlimits on CPU, address space, file size and processes.

bwrap runs with --die-with-parent and a pid namespace, so every process the command started
dies when the command ends, when it times out, or when quotabench itself is killed.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import threading
from pathlib import Path
from typing import Any

from verifiers.harness import HARNESS_DIR
from verifiers.hostpaths import ETC_FILES, host_paths
from verifiers.isolation import BwrapStatus
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

UID_BASE = 3_000_000_000  # far from login uids and the usual subuid ranges
UID_POOL = 64
# Inside paths: chosen not to collide with the host paths bound read-only (a venv under /work).
WORK, SRC, TMP = "/sandbox/work", "/sandbox/.src", "/tmp"
SHM_MB = 64  # /dev/shm's own size limit
HARNESS = "/sandbox/harness"  # quotabench's runner drivers, read-only, outside the workspace
HOME = f"{TMP}/home"


class _UidPool:
    """Distinct uids for concurrent sandboxes of this process (root only): one sandbox's
    process count never counts against another's RLIMIT_NPROC."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._busy: set[int] = set()
        self._next = os.getpid() % UID_POOL

    def take(self) -> int:
        with self._lock:
            for i in range(UID_POOL):
                uid = UID_BASE + (self._next + i) % UID_POOL
                if uid not in self._busy:
                    self._busy.add(uid)
                    self._next = (self._next + i + 1) % UID_POOL
                    return uid
            return UID_BASE + self._next  # all busy: share one

    def give(self, uid: int) -> None:
        with self._lock:
            self._busy.discard(uid)


_uids = _UidPool()
_etc_lock = threading.Lock()
_etc_dir: Path | None = None


def _synthetic_etc() -> Path:
    """The sandbox's /etc, made once per process: the loader's and timezone files copied from
    the host, and a passwd, group and hosts of its own. Bound as one read-only folder."""
    global _etc_dir
    with _etc_lock:
        if _etc_dir is None or not _etc_dir.is_dir():
            folder = scratch_dir("etc")
            folder.chmod(0o755)
            for name in ETC_FILES:
                target = folder / Path(name).name
                if os.path.islink(name):
                    os.symlink(os.readlink(name), target)
                elif os.path.isdir(name):
                    shutil.copytree(name, target, symlinks=True)
                elif os.path.isfile(name):
                    shutil.copyfile(name, target)
            uids = ([] if os.getuid() == 0 else [os.getuid()]) + [UID_BASE + i for i in range(UID_POOL)]
            (folder / "passwd").write_text(
                "root:x:0:0:root:/root:/bin/sh\n" + "".join(f"sandbox:x:{u}:{u}:sandbox:{HOME}:/bin/sh\n" for u in uids)
            )
            (folder / "group").write_text("root:x:0:\n" + "".join(f"sandbox:x:{u}:\n" for u in uids))
            (folder / "hosts").write_text("127.0.0.1 localhost\n::1 localhost\n")
            for current, dirs, files in os.walk(folder):
                for d in dirs:
                    os.chmod(os.path.join(current, d), 0o755)
                for f in files:
                    if not os.path.islink(os.path.join(current, f)):
                        os.chmod(os.path.join(current, f), 0o644)
            _etc_dir = folder
        return _etc_dir


def _stage(source: Path, hidden: list[str]) -> Path:
    """A copy of `source` without the protected paths (hard links: no data is copied), so
    nothing the model wrote can sit where a hidden test is bound."""
    hidden_set = set(hidden)
    hidden_dirs = {str(Path(h).parent) for h in hidden} | {str(p) for h in hidden for p in Path(h).parents}
    dest = scratch_dir("stage")
    dest.chmod(0o755)
    for current, dirs, files in os.walk(source):
        rel_dir = os.path.relpath(current, source)
        out_dir = dest if rel_dir == "." else dest / rel_dir
        for name in list(dirs):
            if os.path.islink(os.path.join(current, name)):
                dirs.remove(name)
                files.append(name)  # a symlink to a folder is copied as a link, never walked
        for name in dirs:
            (out_dir / name).mkdir(mode=0o755)
        for name in files:
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if rel in hidden_set or rel in hidden_dirs:
                continue
            src = os.path.join(current, name)
            target = out_dir / name
            if os.path.islink(src):
                os.symlink(os.readlink(src), target)
                continue
            try:
                os.link(src, target)
            except OSError:
                shutil.copy2(src, target)
    return dest


class BwrapSandbox:
    name = "bwrap"

    def __init__(self, status: BwrapStatus):
        self.status = status
        self.as_root = os.geteuid() == 0

    def describe(self) -> dict[str, Any]:
        return {
            "sandbox": "bwrap",
            "bwrap_version": self.status.version,
            "bwrap_path": self.status.path,
            "uid": "unprivileged (setpriv)" if self.as_root else "caller (user namespace)",
        }

    def run(
        self, command: str, source: Path, limits: Limits, protected: Path | None = None, channel: bytes | None = None
    ) -> RunResult:
        hidden = protected_files(protected)
        staged = _stage(Path(source), hidden) if hidden else None
        uid = _uids.take() if self.as_root else os.getuid()
        info_r, info_w = os.pipe()
        try:
            argv = self._argv(command, staged or Path(source), limits, protected, hidden, uid, info_w)
            env = base_env(HOME, TMP)
            paths = host_paths()
            env["PATH"] = ":".join(paths.path_dirs)
            env.update(dict(paths.env))
            passed, info_w = info_w, -1
            with harness_channel(channel, HARNESS) as fds:
                env.update(fds.env)
                done = run_process(
                    argv,
                    env=env,
                    timeout_s=limits.timeout_s,
                    pass_fds=(passed, *fds.pass_fds),
                    channel_fd=fds.read_fd,
                )
            started = _read_all(info_r)
            _wait_namespace_gone(started)
        finally:
            os.close(info_r)
            if info_w != -1:
                os.close(info_w)
            if self.as_root:
                _uids.give(uid)
            if staged is not None:
                remove(staged)
        isolation = self._isolation(uid, limits, len(hidden))
        if done.start_error is not None:
            return RunResult(None, done.duration_ms, "", start_error=done.start_error, isolation=isolation)
        if not started and not done.timed_out:
            why = done.output.strip().splitlines()[-1:] or [f"exit status {done.exit_status}"]
            return RunResult(
                done.exit_status,
                done.duration_ms,
                done.output,
                isolation=isolation,
                start_error=f"the sandbox could not be set up: {why[0]}",
            )
        status = done.exit_status
        if status == SANDBOX_ERROR_EXIT and "quotabench sandbox:" in done.output:
            return RunResult(
                status,
                done.duration_ms,
                done.output,
                isolation=isolation,
                start_error="the sandbox could not set its limits",
            )
        return RunResult(
            status,
            done.duration_ms,
            done.output,
            timed_out=done.timed_out,
            isolation=isolation,
            channel=done.channel if channel is not None else None,
        )

    def _argv(
        self,
        command: str,
        tree: Path,
        limits: Limits,
        protected: Path | None,
        hidden: list[str],
        uid: int,
        info_fd: int,
    ) -> list[str]:
        paths = host_paths()
        etc = _synthetic_etc()
        argv = [self.status.path or "bwrap", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        if not limits.network:
            argv.append("--unshare-net")
        if not self.as_root:
            argv += ["--unshare-user", "--disable-userns"]
        argv += ["--die-with-parent", "--new-session", "--info-fd", str(info_fd)]
        disk = str(limits.disk_mb * 1024 * 1024)
        # The private /tmp first: a runtime installed under /tmp (a venv in /tmp/x) is bound on
        # top of it below instead of being hidden by it.
        argv += ["--perms", "1777", "--size", disk, "--tmpfs", TMP]
        # bwrap makes missing parents of a mount point 0700 when it runs as root: make them
        # traversable for the unprivileged uid first.
        destinations = [*paths.ro_binds, WORK]
        parents = {str(p) for d in destinations for p in Path(d).parents if str(p) not in ("/", TMP)}
        for parent in sorted(parents, key=len):
            argv += ["--perms", "0755", "--dir", parent]
        for path in paths.ro_binds:
            argv += ["--ro-bind", path, path]
        for target, link in paths.symlinks:
            argv += ["--symlink", target, link]
        argv += ["--ro-bind", str(etc), "/etc", "--ro-bind", str(HARNESS_DIR), HARNESS]
        argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "0777", "--dir", HOME]
        # POSIX semaphores and shared memory (multiprocessing's locks and pools) live in /dev/shm
        shm = str(min(limits.disk_mb, SHM_MB) * 1024 * 1024)
        argv += ["--perms", "1777", "--size", shm, "--tmpfs", "/dev/shm"]
        argv += ["--perms", "0777", "--size", disk, "--tmpfs", WORK]
        for folder in sorted({str(p) for h in hidden for p in Path(h).parents if str(p) != "."}, key=len):
            argv += ["--perms", "0777", "--dir", f"{WORK}/{folder}"]
        for rel in hidden:
            assert protected is not None  # hidden files come from it
            argv += ["--ro-bind", str(protected / rel), f"{WORK}/{rel}"]
        argv += ["--ro-bind", str(tree), SRC, "--chdir", WORK]
        if self.as_root:
            argv += [
                self.status.setpriv or "/usr/bin/setpriv",
                f"--reuid={uid}",
                f"--regid={uid}",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--no-new-privs",
                "--",
            ]
        nproc = limits.max_procs if self.as_root else limits.max_procs + uid_process_count(os.getuid())
        script = "\n".join(
            [
                limit_script(limits, nproc),
                f"PATH=/usr/bin:/bin cp -R {SRC}/. {WORK}/ "
                "|| echo 'quotabench sandbox: some workspace files could not be copied in' >&2",
                f"cd {WORK} || exit {SANDBOX_ERROR_EXIT}",
                command,
            ]
        )
        return argv + ["/bin/bash", "--noprofile", "--norc", "-c", script]

    def _isolation(self, uid: int, limits: Limits, protected: int) -> dict[str, Any]:
        return {
            "sandbox": "bwrap",
            "bwrap_version": self.status.version,
            "filesystem": "private",
            "network": "isolated" if not limits.network else "shared",
            "pid_namespace": "on",
            "uid": "unprivileged (setpriv)" if self.as_root else "caller (user namespace)",
            "rlimits": "on",
            "disk_mb": limits.disk_mb,
            "protected_files": protected,
        }


def _wait_namespace_gone(info: bytes, timeout_s: float = 5.0) -> None:
    """bwrap returns when the command exits, while its pid-1 reaper is still killing what the
    command left running: wait for the reaper (its host pid is in bwrap's info) to be gone."""
    try:
        pid = int(json.loads(info.decode() or "{}").get("child-pid", 0))
    except (ValueError, AttributeError):
        return
    if pid <= 0:
        return
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return  # already gone
    try:
        select.select([fd], [], [], timeout_s)
    finally:
        os.close(fd)


def _read_all(fd: int) -> bytes:
    os.set_blocking(fd, False)
    chunks = []
    while True:
        try:
            data = os.read(fd, 4096)
        except BlockingIOError:
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)
