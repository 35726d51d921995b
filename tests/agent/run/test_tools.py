"""The agent's tools: every path stays inside the attempt's workspace; bad calls are clear errors."""

import os

import pytest

from agent.run.tools import ToolError, Workspace, parse_arguments


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "work"
    (root / "src").mkdir(parents=True)
    (root / "src" / "mod.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "secret.txt").write_text("outside")
    return Workspace(root)


def test_list_read_write_edit(ws):
    assert ws.list_files() == "src/mod.py"
    assert "return a - b" in ws.read_file("src/mod.py")
    ws.edit_file("src/mod.py", "a - b", "a + b")
    assert "return a + b" in ws.read_file("src/mod.py")
    ws.write_file("pkg/new.py", "x = 1\n")
    assert ws.list_files().splitlines() == ["pkg/new.py", "src/mod.py"]


@pytest.mark.parametrize("path", ["/etc/passwd", "../secret.txt", "src/../../secret.txt", "", "  "])
def test_paths_outside_the_workspace_are_refused(ws, path):
    with pytest.raises(ToolError):
        ws.read_file(path)
    with pytest.raises(ToolError):
        ws.write_file(path, "x")


def test_symlink_that_escapes_is_refused(ws, tmp_path):
    os.symlink(tmp_path / "secret.txt", ws.root / "link.txt")
    os.symlink(tmp_path, ws.root / "up")
    with pytest.raises(ToolError, match="outside the workspace"):
        ws.read_file("link.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        ws.write_file("up/evil.txt", "x")
    assert not (tmp_path / "evil.txt").exists()


def test_edit_must_match_exactly_once(ws):
    with pytest.raises(ToolError, match="not found"):
        ws.edit_file("src/mod.py", "a * b", "a + b")
    ws.write_file("dup.py", "x = 1\nx = 1\n")
    with pytest.raises(ToolError, match="found 2 times"):
        ws.edit_file("dup.py", "x = 1", "x = 2")


def test_missing_file_and_directory_errors(ws):
    with pytest.raises(ToolError, match="no file"):
        ws.read_file("nope.py")
    with pytest.raises(ToolError, match="directory"):
        ws.write_file("src", "x")


@pytest.mark.parametrize(
    "tool,raw,message",
    [
        ("write_file", '{"path": "a.py", "content": "x\n', "not valid JSON"),  # raw newline, cut string
        ("delete_file", '{"path": "a.py"}', "unknown tool"),
        ("write_file", '{"path": "a.py"}', "content"),
        ("edit_file", '["a.py"]', "JSON object"),
    ],
)
def test_malformed_arguments(tool, raw, message):
    with pytest.raises(ToolError, match=message):
        parse_arguments(tool, raw)


def test_arguments_parse():
    assert parse_arguments("read_file", '{"path": "a.py"}') == {"path": "a.py"}
    assert parse_arguments("list_files", "") == {}
    assert parse_arguments("finish", None) == {}
