"""What a tool call shows in an ACP client: the diff of an edit or write (`content` of
type `diff`, with the file's absolute path), the command text of a shell call.

Used both when a call asks for permission (so the person does not approve blind) and
when it completes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp.helpers import text_block, tool_content, tool_diff_content

EDIT_TOOLS = ("write_file", "edit_file")


def absolute(workspace: Path, path: str) -> str:
    return str(Path(path) if Path(path).is_absolute() else (workspace / path).resolve())


def disk_text(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def edit_diffs(
    name: str, args: dict[str, Any], workspace: Path, *, before: str | None = None, on_disk: bool = True
) -> list[Any]:
    """The `diff` contents of a `write_file` (the whole new text against the file as it
    is on disk, or as it was: `before`, None for a new file, when not `on_disk`) or an
    `edit_file` (each replacement, old text against new). Empty for other calls or
    malformed arguments."""
    path = args.get("path")
    if name not in EDIT_TOOLS or not isinstance(path, str) or not path:
        return []
    target = absolute(workspace, path)
    if name == "write_file":
        content = args.get("content")
        if not isinstance(content, str):
            return []
        return [tool_diff_content(target, content, disk_text(target) if on_disk else before)]
    edits = args.get("edits")
    pairs = edits if isinstance(edits, list) else [{"old": args.get("old"), "new": args.get("new")}]
    return [
        tool_diff_content(target, edit["new"], edit["old"])
        for edit in pairs
        if isinstance(edit, dict) and isinstance(edit.get("old"), str) and isinstance(edit.get("new"), str)
    ]


def command_text(preview: dict[str, Any]) -> str:
    """A shell call's command as the person approving it reads it (with where it runs)."""
    lines = [f"```sh\n{preview.get('command', '')}\n```"]
    details = []
    if preview.get("cwd"):
        details.append(f"in {preview['cwd']}")
    if preview.get("background"):
        details.append("in the background")
    if "sandbox" in preview:
        sandbox = preview["sandbox"]
        details.append("unsandboxed" if sandbox == "off" else f"sandbox: {sandbox}")
        if preview.get("network"):
            details.append("with network")
    if details:
        lines.append(", ".join(details))
    return "\n".join(lines)


def permission_content(
    name: str, args: dict[str, Any], preview: dict[str, Any], workspace: Path
) -> list[Any] | None:
    """What `session/request_permission` shows of the call: its diff, its command, why
    its preview failed, or its reason."""
    content: list[Any] = []
    if preview.get("kind") == "diff":
        content.extend(edit_diffs(name, args, workspace))
        if not content and isinstance(preview.get("diff"), str):  # merge_worktree: a whole patch
            content.append(tool_content(text_block(f"{preview.get('path', name)}\n{preview['diff']}")))
        if preview.get("error"):
            content.append(tool_content(text_block(f"This edit will fail: {preview['error']}")))
    elif preview.get("kind") == "command":
        content.append(tool_content(text_block(command_text(preview))))
    outside = preview.get("outside_paths")
    if isinstance(outside, list) and outside:
        content.append(tool_content(text_block("Outside the workspace: " + ", ".join(map(str, outside)))))
    return content or None
