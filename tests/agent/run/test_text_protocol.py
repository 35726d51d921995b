"""The text action protocol: fenced blocks in, actions out; format_action round-trips."""

from agent.run.text_protocol import format_action, parse_actions


def test_round_trip_of_every_action():
    actions = [
        ("list_files", {}),
        ("read_file", {"path": "a.py"}),
        ("write_file", {"path": "a.py", "content": "print('```')\nx = 1\n"}),
        ("edit_file", {"path": "a.py", "old": "x = 1", "new": "x = 2"}),
        ("run_tests", {}),
        ("finish", {}),
    ]
    text = "Plan first.\n\n" + "\n\nthen\n\n".join(format_action(t, a) for t, a in actions)
    parsed = parse_actions(text)
    assert [(p.tool, p.arguments) for p in parsed] == actions
    assert all(p.error is None for p in parsed)


def test_code_blocks_in_other_languages_are_not_actions():
    assert parse_actions("```python\nprint(1)\n```\nand ```bash``` inline") == []


def test_malformed_blocks_are_actions_with_errors():
    parsed = parse_actions("```edit_file path=a.py\nno markers here\n```\n```delete_file path=a.py```")
    assert [(p.tool, bool(p.error)) for p in parsed] == [("edit_file", True), ("delete_file", True)]


def test_quoted_paths_with_spaces():
    (action,) = parse_actions('```read_file path="my dir/a b.py"```')
    assert action.arguments == {"path": "my dir/a b.py"}
