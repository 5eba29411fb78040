"""A hook event as Claude Code sends it, for hooks that come from Claude Code's files.

A hook from `.claude/settings*.json`, `~/.claude/settings.json` or a plugin's
`hooks/hooks.json` was written against Claude Code's contract: it reads
`tool_input.file_path` of an `Edit`, `tool_input.command` of a `Bash` call, and
`permission_mode == "bypassPermissions"`. `claude_payload` rewrites Wyckoff's event
into those names (the one table in core/claude_names.py); `tool_response` takes
Claude Code's shape for the shell (`stdout`, `stderr`, `interrupted`) and the file
writers (`filePath`, `success`). Wyckoff's own `[[hooks.*]]` keep Wyckoff's names.
"""

from __future__ import annotations

from typing import Any

from wyckoff_cli.core.claude_names import claude_mode, claude_tool_input, claude_tool_name


def claude_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """`payload` (Wyckoff's names) in Claude Code's names; other fields are kept."""
    out = dict(payload)
    mode = out.get("permission_mode")
    if isinstance(mode, str):
        out["permission_mode"] = claude_mode(mode)
    name = out.get("tool_name")
    if not isinstance(name, str):
        return out
    args = out.get("tool_input")
    args = args if isinstance(args, dict) else {}
    out["tool_name"] = claude_tool_name(name, args)
    out["tool_input"] = claude_tool_input(name, args)
    if "tool_response" in out:
        out["tool_response"] = _response(name, args, out["tool_response"])
    return out


def _response(name: str, args: dict[str, Any], result: Any) -> Any:
    if not isinstance(result, str):
        return result
    if name == "run_shell":
        return {"stdout": result, "stderr": "", "interrupted": False, "isImage": False}
    if name in ("write_file", "edit_file"):
        return {"filePath": args.get("path"), "success": True, "output": result}
    return result
