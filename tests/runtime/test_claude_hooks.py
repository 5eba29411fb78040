"""Hooks from Claude Code's files get Claude Code's payload and are answered as Claude
Code answers them. The hook scripts here are written from Claude Code's documented
hook contract (stdin JSON with `tool_name`, `tool_input`, `permission_mode`, …; exit 2
blocks with stderr; `hookSpecificOutput.updatedInput` in Claude Code's keys), not from
Wyckoff's names, so a published hook that works there works here."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.runtime.hook_support import group, hook_command, inputs
from tests.runtime.support import collect, make_runtime, make_tool, of_type
from tests.runtime.test_user_hooks import SCHEMA, Approver, call, shell, tool_result
from wyckoff_cli.core import events as ev
from wyckoff_cli.runtime.hook_config import load_hooks, trust_files
from wyckoff_cli.runtime.user_hooks import UserHooks
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy

# Claude Code's documented example of a PreToolUse validator ("use rg, not grep"),
# as its users copy it into .claude/hooks/.
BASH_VALIDATOR = r"""
import json, re, sys

_VALIDATION_RULES = [
    (r"\bgrep\b(?!.*\|)", "Use 'rg' (ripgrep) instead of 'grep' for better performance and features"),
    (r"\bfind\s+\S+\s+-name\b", "Use 'rg --files | rg pattern' or 'rg --files -g pattern' instead of 'find -name'"),
]

def _validate_command(command):
    return [message for pattern, message in _VALIDATION_RULES if re.search(pattern, command)]

try:
    input_data = json.load(sys.stdin)
except json.JSONDecodeError as e:
    print(f"Error: Invalid JSON input: {e}", file=sys.stderr)
    sys.exit(1)
tool_name = input_data.get("tool_name", "")
tool_input = input_data.get("tool_input", {})
command = tool_input.get("command", "")
if tool_name != "Bash" or not command:
    sys.exit(1)
issues = _validate_command(command)
if issues:
    for message in issues:
        print(f"• {message}", file=sys.stderr)
    sys.exit(2)
"""


def claude_hooks(workspace: Path, hooks: dict[str, list[dict[str, Any]]], **options: Any) -> UserHooks:
    """`hooks` in the project's .claude/settings.json, trusted as the user would."""
    folder = workspace / ".claude"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({"hooks": hooks}))
    found = load_hooks(workspace)
    assert found.problems == []
    trust_files(found.needing_trust())
    return UserHooks(found, project_dir=workspace, **options)


def validator(workspace: Path) -> str:
    script = workspace / ".claude" / "hooks" / "bash_command_validator.py"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(BASH_VALIDATOR)
    return f'{sys.executable} "$CLAUDE_PROJECT_DIR"/.claude/hooks/bash_command_validator.py'


async def test_the_documented_grep_validator_blocks_grep_by_exit_2(workspace: Path) -> None:
    hooks = claude_hooks(workspace, {"PreToolUse": [group(validator(workspace), "Bash")]})
    ran: list[str] = []
    rounds = [call("grep -r TODO src"), call("rg TODO src"), {"text": "done"}]
    runtime, _ = make_runtime(rounds, [shell(ran)], workspace, hooks=[hooks], approver=Approver())
    events, messages = await collect(runtime)
    assert ran == ["rg TODO src"]  # grep refused, rg ran
    refused = tool_result(messages)
    assert refused.is_error and "Use 'rg' (ripgrep) instead of 'grep'" in refused.text
    outcomes = [(e.outcome, e.exit_code) for e in of_type(events, ev.HookRan)]
    assert outcomes == [("blocked", 2), ("ok", 0)]


async def test_the_validator_blocks_in_bypass_permissions_mode_too(workspace: Path) -> None:
    hooks = claude_hooks(workspace, {"PreToolUse": [group(validator(workspace), "Bash")]})
    ran: list[str] = []
    policy = ApprovalPolicy(mode="yolo")
    runtime, _ = make_runtime(
        [call("find . -name '*.py'"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], policy=policy
    )
    _, messages = await collect(runtime)
    assert ran == []
    assert "rg --files" in tool_result(messages).text


async def test_a_claude_hook_gets_claude_codes_names(workspace: Path, tmp_path: Path) -> None:
    command, log = hook_command(tmp_path / "h", "pre")
    post, post_log = hook_command(tmp_path / "h", "post")
    hooks = claude_hooks(
        workspace,
        {"PreToolUse": [group(command, "Edit|Bash")], "PostToolUse": [group(post, "Bash")]},
    )
    hooks.session_id, hooks.transcript_path = "s-9", "/tmp/t.jsonl"
    hooks.permission_mode = lambda: "auto-edit"
    edit_schema = {"type": "object", "properties": {"path": {}, "old": {}, "new": {}}, "required": ["path"]}
    edit = make_tool("edit_file", schema=edit_schema, kind="edit")
    edit_call = {"id": "c1", "name": "edit_file", "args": {"path": "a.py", "old": "x", "new": "y"}}
    rounds = [{"tool_calls": [edit_call]}, call("echo hi"), {"text": "ok"}]
    ran: list[str] = []
    runtime, _ = make_runtime(rounds, [edit, shell(ran)], workspace, hooks=[hooks], approver=Approver())
    await collect(runtime)
    first, second = (r["input"] for r in inputs(log))
    assert first["tool_name"] == "Edit"
    assert first["tool_input"] == {"file_path": "a.py", "old_string": "x", "new_string": "y"}
    assert first["permission_mode"] == "acceptEdits"
    assert (first["hook_event_name"], first["session_id"], first["transcript_path"]) == (
        "PreToolUse",
        "s-9",
        "/tmp/t.jsonl",
    )
    assert first["cwd"] == str(workspace) and first["tool_use_id"] == "c1"
    assert second["tool_name"] == "Bash" and second["tool_input"] == {"command": "echo hi"}
    (after,) = (r["input"] for r in inputs(post_log))
    assert after["tool_name"] == "Bash" and after["tool_response"]["stdout"] == "ran echo hi"
    assert after["tool_response"]["interrupted"] is False


async def test_wyckoffs_own_hooks_keep_wyckoffs_names(workspace: Path, tmp_path: Path) -> None:
    from tests.runtime.hook_support import user_hooks

    command, log = hook_command(tmp_path / "h", "pre")
    hooks = user_hooks(workspace, {"PreToolUse": [group(command, "Bash")]})
    hooks.permission_mode = lambda: "yolo"
    runtime, _ = make_runtime([call("ls"), {"text": "ok"}], [shell([])], workspace, hooks=[hooks])
    await collect(runtime)
    (record,) = inputs(log)
    assert record["input"]["tool_name"] == "run_shell" and record["input"]["permission_mode"] == "yolo"


async def test_updated_input_in_claude_keys_is_mapped_back(workspace: Path, tmp_path: Path) -> None:
    updated = {"command": "rg TODO", "description": "search with rg", "timeout": 5000}
    output = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": updated}}
    command, _ = hook_command(tmp_path / "h", "pre", stdout=output)
    hooks = claude_hooks(workspace, {"PreToolUse": [group(command, "Bash")]})
    ran: list[str] = []
    timed = dict(SCHEMA, properties={"command": {"type": "string"}, "timeout": {"type": "number"}})
    tool = shell(ran)
    tool = make_tool(
        "run_shell",
        tool.run,
        schema=timed,
        requires_approval=True,
        kind="execute",
        subject_of=tool.subject_of,
    )
    approver = Approver()
    runtime, _ = make_runtime(
        [call("grep TODO"), {"text": "ok"}], [tool], workspace, hooks=[hooks], approver=approver
    )
    events, _ = await collect(runtime)
    assert ran == ["rg TODO"]
    assert approver.asked[0].args == {"command": "rg TODO", "timeout": 5.0}  # asked about what runs
    assert of_type(events, ev.ToolStarted)[0].args == {"command": "rg TODO", "timeout": 5.0}


async def test_updated_input_is_checked_again_by_the_rules(workspace: Path, tmp_path: Path) -> None:
    output = {"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": "git push"}}}
    command, _ = hook_command(tmp_path / "h", "pre", stdout=output)
    hooks = claude_hooks(workspace, {"PreToolUse": [group(command, "Bash")]})
    ran: list[str] = []
    policy = ApprovalPolicy(deny=["Bash(git push:*)"])
    runtime, _ = make_runtime(
        [call("git status"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], policy=policy
    )
    _, messages = await collect(runtime)
    assert ran == []
    assert tool_result(messages).is_error


async def test_an_untrusted_claude_file_never_runs(workspace: Path, tmp_path: Path) -> None:
    command, log = hook_command(tmp_path / "h", "pre", code=2, stderr="no")
    folder = workspace / ".claude"
    folder.mkdir()
    (folder / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [group(command, "Bash")]}}))
    hooks = UserHooks(load_hooks(workspace), project_dir=workspace)
    ran: list[str] = []
    runtime, _ = make_runtime(
        [call("ls"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], approver=Approver()
    )
    await collect(runtime)
    assert ran == ["ls"] and inputs(log) == []


def _user_claude_settings(hooks: dict[str, list[dict[str, Any]]]) -> None:
    from wyckoff_cli.storage import paths

    home = paths.claude_home()  # the suite points CLAUDE_CONFIG_DIR at a temporary folder
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"hooks": hooks}))


async def test_the_users_claude_settings_hooks_run_without_trust_in_claude_names(
    workspace: Path, tmp_path: Path
) -> None:
    command, log = hook_command(tmp_path / "h", "user", code=2, stderr="not grep")
    _user_claude_settings({"PreToolUse": [group(command, "Bash")]})
    found = load_hooks(workspace)
    assert found.needing_trust() == [] and [f.source for f in found.files] == ["~/.claude/settings.json"]
    hooks = UserHooks(found, project_dir=workspace)
    ran: list[str] = []
    runtime, _ = make_runtime([call("grep x"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks])
    await collect(runtime)
    assert ran == [] and inputs(log)[0]["input"]["tool_name"] == "Bash"


def test_claude_home_off_skips_the_users_claude_settings(workspace: Path, tmp_path: Path) -> None:
    from tests.runtime.hook_support import write_user_hooks
    from wyckoff_cli.storage import paths

    command, _ = hook_command(tmp_path / "h", "user")
    _user_claude_settings({"PreToolUse": [group(command, "Bash")]})
    write_user_hooks({})
    paths.config_file().write_text("[compat]\nclaude_home = false\n")
    assert load_hooks(workspace).files == []
