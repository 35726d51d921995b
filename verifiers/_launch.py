"""Exec shim run as the sandbox's first process: join the pids cgroup, set rlimits, exec the command.

Doing this in a fresh interpreter (instead of subprocess's preexec_fn) keeps it safe to start
sandboxes from threads. argv[1] is a JSON object written by verifiers.sandbox.
"""
import json
import os
import resource
import sys


def main() -> None:
    spec = json.loads(sys.argv[1])
    if spec.get("cgroup_procs"):
        try:
            with open(spec["cgroup_procs"], "w") as fh:
                fh.write(str(os.getpid()))
        except OSError:
            pass
    for name, value in spec["rlimits"].items():
        resource.setrlimit(getattr(resource, name), (value, value))
    os.execvpe(spec["argv"][0], spec["argv"], spec["env"])


if __name__ == "__main__":
    main()
