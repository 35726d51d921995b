"""The held constants a run records: the runtimes' versions as PATH has them, asked once per PATH."""

from __future__ import annotations

import os

from agent.manifest import RUNTIME_VERSIONS, machine_constants, observed_constants, runtime_versions


def test_versions_follow_path(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing installed there
    assert runtime_versions() == dict.fromkeys(RUNTIME_VERSIONS)
    fake = tmp_path / "node"
    fake.write_text("#!/bin/sh\necho v99.0.0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.defpath)  # another PATH: asked again
    assert runtime_versions()["node_version"] == "v99.0.0"


def test_observed_constants_are_the_machine_and_the_versions():
    constants = observed_constants()
    assert constants == machine_constants() | runtime_versions()
    assert constants["isolation_network"] in ("on", "off") and constants["isolation_pids"] in ("on", "off")
