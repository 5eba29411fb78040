"""Claude Code's vocabulary and Wyckoff's, in one table.

Used wherever a Claude Code file meets Wyckoff: hook payloads and matchers
(runtime/hook_config.py, runtime/user_hooks.py), permission-rule aliases
(tools/permissions/rules.py), agent files' `tools:` (runtime/agent_files.py) and
command files' `allowed-tools` (session/custom_commands.py). `mcp__server__tool`
names are the same in both.

- `CLAUDE_TOOLS`: Claude Code's tool name → ours.
- `claude_tool_name` / `claude_tool_input`: a Wyckoff call as Claude Code would have
  sent it (`run_shell {command, background}` → `Bash {command, run_in_background}`;
  `edit_file {path, old, new}` → `Edit {file_path, old_string, new_string}`, with
  `edits` → `MultiEdit`).
- `wyckoff_tool_input`: the way back, for a hook's `updatedInput` (keys Wyckoff's tool
  does not have are dropped, so the call is validated as ours).
- `CLAUDE_MODES` / `claude_mode`: permission modes both ways.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CLAUDE_TOOLS: dict[str, str] = {
    "Bash": "run_shell",
    "Read": "read_file",
    "Write": "write_file",
    "Edit": "edit_file",
    "MultiEdit": "edit_file",
    "Glob": "glob",
    "Grep": "grep",
    "LS": "list_dir",
    "WebFetch": "web_fetch",
    "WebSearch": "web_search",
    "Task": "task",
    "TodoWrite": "todo_write",
    "BashOutput": "task_output",
    "KillShell": "task_stop",
    "KillBash": "task_stop",
    "Skill": "skill",
}
# ours → Claude Code's (the first Claude name of each of ours: edit_file → Edit)
WYCKOFF_TO_CLAUDE: dict[str, str] = {}
for _theirs, _ours in CLAUDE_TOOLS.items():
    WYCKOFF_TO_CLAUDE.setdefault(_ours, _theirs)

# Claude Code's permission modes → ours
CLAUDE_MODES: dict[str, str] = {
    "default": "default",
    "plan": "plan",
    "acceptEdits": "auto-edit",
    "bypassPermissions": "yolo",
    "dontAsk": "default",
}
_MODE_OF_OURS = {
    "default": "default",
    "plan": "plan",
    "auto-edit": "acceptEdits",
    "yolo": "bypassPermissions",
}

# Per Wyckoff tool: our argument key → Claude Code's.
_KEYS: dict[str, dict[str, str]] = {
    "run_shell": {"command": "command", "background": "run_in_background"},
    "read_file": {"path": "file_path", "offset": "offset", "limit": "limit"},
    "write_file": {"path": "file_path", "content": "content"},
    "edit_file": {
        "path": "file_path",
        "old": "old_string",
        "new": "new_string",
        "replace_all": "replace_all",
    },
    "glob": {"pattern": "pattern", "path": "path"},
    "grep": {"pattern": "pattern", "path": "path", "glob": "glob", "output": "output_mode"},
    "list_dir": {"path": "path"},
    "web_fetch": {"url": "url", "prompt": "prompt"},
    "web_search": {"query": "query"},
    "task": {"agent": "subagent_type", "description": "description", "prompt": "prompt"},
    "todo_write": {"items": "todos"},
    "task_output": {"task_id": "bash_id"},
    "task_stop": {"task_id": "shell_id"},
}
_GREP_OUTPUT = {"content": "content", "files": "files_with_matches", "count": "count"}
_TODO_KEYS = {"content": "content", "status": "status", "active_form": "activeForm"}
_EDIT_KEYS = {"old": "old_string", "new": "new_string", "replace_all": "replace_all"}


def wyckoff_tool(name: str) -> str:
    """Our name for a tool named in Claude Code's vocabulary (ours and MCP names pass)."""
    return CLAUDE_TOOLS.get(name, name)


def claude_mode(mode: str) -> str:
    """Claude Code's name of one of our permission modes."""
    return _MODE_OF_OURS.get(mode, mode)


def claude_tool_name(name: str, args: Mapping[str, Any] | None = None) -> str:
    """Claude Code's name of one of our calls (`edit_file` with `edits` is MultiEdit)."""
    if name == "edit_file" and args and args.get("edits"):
        return "MultiEdit"
    return WYCKOFF_TO_CLAUDE.get(name, name)


def claude_tool_input(name: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """Our call's arguments in Claude Code's keys; a tool without a Claude Code
    counterpart (MCP, ours alone) keeps its arguments as they are."""
    keys = _KEYS.get(name)
    if keys is None:
        return dict(args)
    out: dict[str, Any] = {}
    for key, value in args.items():
        if name == "run_shell" and key == "timeout" and isinstance(value, int | float):
            out["timeout"] = int(value * 1000)  # Claude Code counts milliseconds
        elif name == "grep" and key == "case":
            out["-i"] = value == "insensitive"
        elif name == "grep" and key == "output":
            out["output_mode"] = _GREP_OUTPUT.get(str(value), value)
        elif name == "edit_file" and key == "edits" and isinstance(value, list):
            out["edits"] = [_renamed(item, _EDIT_KEYS) for item in value]
        elif name == "todo_write" and key == "items" and isinstance(value, list):
            out["todos"] = [_renamed(item, _TODO_KEYS) for item in value]
        else:
            out[keys.get(key, key)] = value
    return out


def wyckoff_tool_input(name: str, claude_input: Mapping[str, Any]) -> dict[str, Any]:
    """A Claude Code `tool_input` (a hook's `updatedInput`) as arguments of our tool
    `name`. Keys our tool does not have are dropped (Claude Code's `description` of a
    Bash call, say); the result is validated and checked like any call."""
    keys = _KEYS.get(name)
    if keys is None:
        return dict(claude_input)
    back = {theirs: ours for ours, theirs in keys.items()}
    out: dict[str, Any] = {}
    for key, value in claude_input.items():
        if name == "run_shell" and key == "timeout" and isinstance(value, int | float):
            out["timeout"] = value / 1000
        elif name == "run_shell" and key == "description":
            continue
        elif name == "grep" and key == "-i":
            if value:
                out["case"] = "insensitive"
        elif name == "grep" and key == "output_mode":
            out["output"] = {v: k for k, v in _GREP_OUTPUT.items()}.get(str(value), value)
        elif name == "edit_file" and key == "edits" and isinstance(value, list):
            out["edits"] = [_renamed(item, {v: k for k, v in _EDIT_KEYS.items()}) for item in value]
        elif name == "todo_write" and key == "todos" and isinstance(value, list):
            out["items"] = [_renamed(item, {v: k for k, v in _TODO_KEYS.items()}) for item in value]
        else:
            out[back.get(key, key)] = value  # an unknown key stays: the schema check names it
    return out


def _renamed(item: Any, keys: Mapping[str, str]) -> Any:
    if not isinstance(item, Mapping):
        return item
    return {keys.get(key, key): value for key, value in item.items()}
