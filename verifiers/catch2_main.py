"""Catch2's main, compiled once per machine and header: the part of a Catch2 test binary that
takes a g++ several seconds (the whole framework's implementation), built by the grader from
the system's header alone and put beside every catch2 run's workspace (.quotabench/), so that
a grade compiles the task's own files only."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from verifiers import VerifierError

HEADER = Path("/usr/include/catch2/catch.hpp")
PLACE = ".quotabench/catch2-main.o"  # where catch2_run.sh links it from
_SOURCE = b"#define CATCH_CONFIG_MAIN\n#include <catch2/catch.hpp>\n"
_lock = threading.Lock()


class Catch2Missing(VerifierError):
    """g++ or Catch2's header is not on this machine, or the main did not build."""


def _cache_dir() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "quotabench" / "catch2"


def main_object() -> Path:
    """The compiled main for this machine's g++ and Catch2 header (built on first use)."""
    gxx = shutil.which("g++")
    if gxx is None or not HEADER.is_file():
        raise Catch2Missing("catch2 runs need g++ and Catch2's header: apt-get install g++ catch2")
    version = subprocess.run([gxx, "--version"], capture_output=True, timeout=30).stdout
    key = hashlib.sha256(version + HEADER.read_bytes() + _SOURCE).hexdigest()[:16]
    target = _cache_dir() / f"main-{key}.o"
    with _lock:
        if target.is_file():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
            built = Path(scratch) / "main.o"
            done = subprocess.run(
                [gxx, "-std=c++17", "-O1", "-x", "c++", "-c", "-", "-o", str(built)],
                input=_SOURCE,
                capture_output=True,
                timeout=600,
            )
            if done.returncode != 0:
                why = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
                raise Catch2Missing(f"Catch2's main did not build: {why[0]}")
            os.replace(built, target)  # another process building it too: either copy is the same
    return target


def place_main(staged: Path) -> None:
    """The main into a catch2 run's workspace, replacing whatever the workspace had there."""
    dest = staged / PLACE
    if dest.is_symlink() or dest.exists():
        if dest.is_dir() and not dest.is_symlink():
            shutil.rmtree(dest)
        else:
            dest.unlink()
    if dest.parent.is_symlink() or (dest.parent.exists() and not dest.parent.is_dir()):
        dest.parent.unlink()
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(main_object(), dest)


__all__ = ["HEADER", "PLACE", "Catch2Missing", "main_object", "place_main"]
