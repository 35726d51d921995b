"""The Ray executor on a local single-node Ray (ray.init(num_cpus=2)): the same sandbox on a
worker, the same results as the local executor, a lost worker retried once, a missing runtime
named with its node. Needs the [ray] extra."""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from pathlib import Path

import pytest

from verifiers import VerifierError
from verifiers.executors import make_executor
from verifiers.packed_tree import pack_tree, unpack_tree
from verifiers.sandbox import Limits

ray = pytest.importorskip("ray")


def test_a_tree_travels_as_data_and_cannot_leave_its_folder(tmp_path):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text("X = 1\n")
    (src / "run.sh").write_text("echo hi\n")
    (src / "run.sh").chmod(0o755)
    (src / "link").symlink_to("/etc/hostname")
    tree = pack_tree(src)
    assert tree["link"] == ("link", b"/etc/hostname") and tree["pkg/mod.py"] == ("file", b"X = 1\n")
    out = unpack_tree(tree, tmp_path / "out")
    assert (out / "pkg" / "mod.py").read_text() == "X = 1\n" and os.access(out / "run.sh", os.X_OK)
    assert os.readlink(out / "link") == "/etc/hostname"
    for bad in (
        {"../x": ("file", b"")},
        {"/abs": ("file", b"")},
        {"d": ("link", str(tmp_path).encode()), "d/x": ("file", b"")},
    ):
        with pytest.raises(VerifierError, match="leaves its folder"):
            unpack_tree(bad, tmp_path / f"bad{len(os.listdir(tmp_path))}")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


@pytest.fixture
def executor(local_ray):
    return make_executor("ray")


@pytest.mark.slow
def test_a_command_runs_in_the_sandbox_on_a_worker(executor, tmp_path):
    src, hidden = tmp_path / "src", tmp_path / "hidden"
    src.mkdir()
    hidden.mkdir()
    (src / "a.py").write_text("print('from a')\n")
    (hidden / "check.sh").write_text("echo REAL\n")
    result = executor.run(
        "python a.py; bash check.sh; echo x > check.sh || echo READ-ONLY", src, Limits(timeout_s=30), hidden
    )
    assert result.exit_status == 0
    assert "from a" in result.output and "REAL" in result.output and "READ-ONLY" in result.output
    assert result.isolation["sandbox"] == "bwrap"
    placement = result.placement
    assert placement["executor"] == "ray" and placement["retries"] == 0 and placement["node"]
    assert [n.missing_tools for n in executor.nodes] == [()]


@pytest.mark.slow
def test_a_missing_runtime_is_environment_naming_the_node(executor, tmp_path):
    from tests.support.verifier_tasks import make_task, python_task
    from verifiers.grading import SandboxGrader
    from verifiers.tasks import load_task

    task = load_task(python_task(tmp_path / "suite", "def test_x():\n    pass\n"))
    grade = SandboxGrader(executor).grade_overlay(task, task.reference)
    assert grade.verdict == "pass"
    task = load_task(
        make_task(
            tmp_path / "suite2",
            workspace={"a.py": "A = 0\n"},
            hidden={"t.py": "\n"},
            reference={"a.py": "A = 1\n"},
            visible_cmd="true",
            hidden_cmd="no-such-runner --test",
        )
    )
    grade = SandboxGrader(executor).grade_overlay(task, task.reference)
    assert grade.verdict == "error"
    node = grade.placement["node"]
    assert grade.environment == f"no-such-runner: command not found (on ray node {node})"


@pytest.mark.slow
def test_a_worker_lost_mid_command_is_retried_once_and_recorded(executor, tmp_path):
    (tmp_path / "src").mkdir()
    marker = f"qbray{uuid.uuid4().hex[:8]}"
    killed = []

    def kill_the_worker():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            for pid in os.listdir("/proc"):
                try:
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                    if pid.isdigit() and b"bwrap" in cmdline.split(b"\0")[0] and marker.encode() in cmdline:
                        worker = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
                        os.kill(worker, signal.SIGKILL)  # the Ray worker running the command
                        killed.append(worker)
                        return
                except (OSError, ValueError, IndexError):
                    continue
            time.sleep(0.05)

    thread = threading.Thread(target=kill_the_worker)
    thread.start()
    result = executor.run(f"echo {marker} >/dev/null; sleep 2; echo survived", tmp_path / "src", Limits(timeout_s=60))
    thread.join()
    assert killed, "never saw the command start"
    assert result.exit_status == 0 and "survived" in result.output
    assert result.placement["retries"] == 1


@pytest.mark.slow
def test_a_paired_run_on_ray_equals_the_local_one(local_ray, tmp_path):
    from agent.ledger import Ledger
    from tests.support.engine_helpers import arm_toml, run_sync, write_config

    outcomes = {}
    for executor in ("local", "ray"):
        folder = tmp_path / executor
        folder.mkdir()
        config = write_config(
            folder,
            [arm_toml("A", "solver"), arm_toml("B", "unparseable", protocol="text")],
            run_extra=f'executor = "{executor}"\n',
        )
        _, run_id, _ = run_sync(config, folder / "l.sqlite")
        ledger = Ledger(folder / "l.sqlite")
        rows = ledger.query(
            "select a.arm, a.task_id, a.attempt_no, a.verdict, a.failure_class, a.total_tokens, "
            "g.executor, g.node from attempts a left join grades g on g.attempt_id = a.id "
            "where a.run_id = ? order by a.arm, a.task_id, a.attempt_no",
            [run_id],
        )
        outcomes[executor] = rows

    def strip(rows):
        return [
            {k: r[k] for k in ("arm", "task_id", "attempt_no", "verdict", "failure_class", "total_tokens")}
            for r in rows
        ]

    assert strip(outcomes["ray"]) == strip(outcomes["local"])
    assert {r["executor"] for r in outcomes["ray"] if r["executor"]} == {"ray"}
    assert {r["executor"] for r in outcomes["local"] if r["executor"]} == {"local"}
    assert all(r["node"] for r in outcomes["ray"] if r["executor"])


def test_an_unknown_executor_lists_the_valid_ones():
    with pytest.raises(VerifierError, match="valid executors: local, ray"):
        make_executor("kubernetes")
