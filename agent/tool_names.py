"""The tools a model can call, by name: one definition read by the tool runner (agent/run/tools.py),
the text action protocol (agent/run/text_protocol.py) and the views that show tool calls."""

from __future__ import annotations

from enum import StrEnum


class Tool(StrEnum):
    LIST_FILES = "list_files"
    READ_FILE = "read_file"
    WRITE_FILE = "write_file"
    EDIT_FILE = "edit_file"
    RUN_TESTS = "run_tests"
    FINISH = "finish"


TOOL_NAMES: tuple[str, ...] = tuple(Tool)  # in the order the model is shown them
