"""What PATH the sandbox gets: the tools this process finds, in the order its own PATH finds them."""

from __future__ import annotations

import os
import stat

from verifiers.hostpaths import _host_paths


def _tool(folder, name):
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_a_tool_first_on_the_callers_path_comes_first_in_the_sandbox(tmp_path, monkeypatch):
    """rustup's ~/.cargo/bin ahead of /usr/bin on the user's PATH, and a distribution's older
    cargo in /usr/bin beside node: the sandbox found node's folder first and so the old cargo
    (an innocent Rust task then failed to build with it)."""
    rustup, system = tmp_path / "cargo-bin", tmp_path / "usr-bin"
    _tool(rustup, "cargo")
    _tool(system, "cargo")
    _tool(system, "node")
    path = os.pathsep.join([str(rustup), str(system), "/usr/bin", "/bin"])
    monkeypatch.setenv("PATH", path)
    dirs = list(_host_paths(path).path_dirs)
    assert str(rustup) in dirs and str(system) in dirs
    assert dirs.index(str(rustup)) < dirs.index(str(system))
