"""The one table of Claude Code's names: both ways, and shared by every user of it."""

from __future__ import annotations

from typing import Any

import pytest

from wyckoff_cli.core.claude_names import (
    CLAUDE_TOOLS,
    claude_mode,
    claude_tool_input,
    claude_tool_name,
    wyckoff_tool,
    wyckoff_tool_input,
)

CALLS: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = [
    (
        "run_shell",
        {"command": "ls", "background": True},
        "Bash",
        {"command": "ls", "run_in_background": True},
    ),
    ("run_shell", {"command": "make", "timeout": 2.5}, "Bash", {"command": "make", "timeout": 2500}),
    (
        "read_file",
        {"path": "a", "offset": 3, "limit": 9},
        "Read",
        {"file_path": "a", "offset": 3, "limit": 9},
    ),
    ("write_file", {"path": "a", "content": "x"}, "Write", {"file_path": "a", "content": "x"}),
    (
        "edit_file",
        {"path": "a", "old": "x", "new": "y", "replace_all": True},
        "Edit",
        {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": True},
    ),
    (
        "edit_file",
        {"path": "a", "edits": [{"old": "x", "new": "y"}]},
        "MultiEdit",
        {"file_path": "a", "edits": [{"old_string": "x", "new_string": "y"}]},
    ),
    ("glob", {"pattern": "**/*.py", "path": "src"}, "Glob", {"pattern": "**/*.py", "path": "src"}),
    (
        "grep",
        {"pattern": "x", "glob": "*.py", "output": "files", "case": "insensitive"},
        "Grep",
        {"pattern": "x", "glob": "*.py", "output_mode": "files_with_matches", "-i": True},
    ),
    ("list_dir", {"path": "src"}, "LS", {"path": "src"}),
    (
        "web_fetch",
        {"url": "https://a.test", "prompt": "p"},
        "WebFetch",
        {"url": "https://a.test", "prompt": "p"},
    ),
    ("web_search", {"query": "q"}, "WebSearch", {"query": "q"}),
    (
        "task",
        {"agent": "explore", "description": "d", "prompt": "p"},
        "Task",
        {"subagent_type": "explore", "description": "d", "prompt": "p"},
    ),
    (
        "todo_write",
        {"items": [{"content": "c", "status": "pending", "active_form": "Doing c"}]},
        "TodoWrite",
        {"todos": [{"content": "c", "status": "pending", "activeForm": "Doing c"}]},
    ),
    ("mcp__github__create_issue", {"title": "t"}, "mcp__github__create_issue", {"title": "t"}),
    ("exit_plan", {"plan": "p"}, "exit_plan", {"plan": "p"}),
]


@pytest.mark.parametrize(("ours", "args", "theirs", "claude_input"), CALLS)
def test_each_call_in_claude_codes_names_and_back(
    ours: str, args: dict[str, Any], theirs: str, claude_input: dict[str, Any]
) -> None:
    assert claude_tool_name(ours, args) == theirs
    assert claude_tool_input(ours, args) == claude_input
    assert wyckoff_tool_input(ours, claude_input) == args
    assert wyckoff_tool(theirs) == ours


def test_claude_only_keys_are_dropped_and_unknown_keys_kept_for_the_schema_check() -> None:
    assert wyckoff_tool_input("run_shell", {"command": "ls", "description": "list"}) == {"command": "ls"}
    assert wyckoff_tool_input("read_file", {"file_path": "a", "bogus": 1}) == {"path": "a", "bogus": 1}


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [("default", "default"), ("plan", "plan"), ("auto-edit", "acceptEdits"), ("yolo", "bypassPermissions")],
)
def test_permission_modes(ours: str, theirs: str) -> None:
    assert claude_mode(ours) == theirs


def test_web_fetch_is_web_fetch_everywhere() -> None:
    from wyckoff_cli.runtime import agent_files, hook_config
    from wyckoff_cli.session.custom_commands import translate_rule
    from wyckoff_cli.tools.permissions.rules import ALIASES, parse_rule

    assert CLAUDE_TOOLS["WebFetch"] == "web_fetch"  # the tool tools/web/fetch.py registers
    assert agent_files.CLAUDE_TOOLS is CLAUDE_TOOLS and hook_config.CLAUDE_TOOL_NAMES is CLAUDE_TOOLS
    assert translate_rule("WebFetch(domain:a.test)") == "web_fetch(domain:a.test)"
    assert parse_rule("WebFetch(domain:a.test)").family == "url"
    for theirs, ours in CLAUDE_TOOLS.items():  # every alias names the same tool as the table
        tool, family = ALIASES[theirs]
        assert tool == ours or family is not None


def test_an_agent_files_webfetch_names_a_tool_that_exists(tmp_path: Any) -> None:
    from wyckoff_cli.runtime.agent_files import parse_agent_file

    path = tmp_path / "reviewer.md"
    path.write_text("---\nname: reviewer\ndescription: reviews\ntools: Read, WebFetch, Bash\n---\nReview.\n")
    agent = parse_agent_file(path)
    assert agent.tools is not None and set(agent.tools) == {"read_file", "web_fetch", "run_shell"}
