"""The `merge_worktree` tool: bring a sub-agent's worktree changes into the files.

The only way a child's work (runtime/worktree_tasks.py) reaches the parent's files
besides the user's `/worktree merge NAME`. The call is always asked about, in every
mode (yolo and auto included: its subject carries an escalation, which no mode, rule
or "always" answers), and the approval dialog shows the diff it would apply; a deny
rule (`merge_worktree`) refuses it unasked, and plan mode refuses it as an edit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.runtime.worktrees import WorktreeError, diff, get_worktree, merge, open_repository
from wyckoff_cli.tools.base import Tool, ToolContext, ToolOutcome
from wyckoff_cli.tools.permissions.subject import Subject

MERGE_TOOL = "merge_worktree"
ESCALATION = "merging a worktree changes your files"
_PREVIEW_LIMIT = 200_000  # characters of diff shown in the dialog


def _subject(args: Mapping[str, Any], workspace: Path) -> Subject:
    return Subject("text", text=str(args.get("name", "")), escalations=(ESCALATION,))


def _preview(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name = str(args.get("name", ""))
    preview: dict[str, Any] = {"kind": "diff", "path": f"worktree {name}", "new_file": False}
    try:
        worktree = get_worktree(ctx.workspace, name)
        text = diff(worktree)
    except WorktreeError as exc:
        preview["error"] = exc.message
        return preview
    preview["path"] = f"worktree {name} (branch {worktree.record.branch})"
    preview["diff"] = text[:_PREVIEW_LIMIT] + ("\n… (cut)" if len(text) > _PREVIEW_LIMIT else "")
    return preview


async def _run(args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
    name = str(args.get("name", "")).strip()
    if not name:
        raise ToolError("name the worktree to merge (the task result names it)")

    def work() -> tuple[str, list[str]]:
        worktree = get_worktree(ctx.workspace, name)
        into = open_repository(ctx.workspace).current
        result = merge(worktree, into)
        return result.line(worktree, into.root), result.files

    try:
        line, files = await asyncio.to_thread(work)
    except WorktreeError as exc:
        raise ToolError(exc.message) from None
    return ToolOutcome(line, {"worktree": name, "files": files})


def merge_worktree_tool() -> Tool:
    return Tool(
        name=MERGE_TOOL,
        description=(
            "Bring the changes a sub-agent made in its worktree (a task run with isolation "
            '"worktree") into your files. The user is always asked and shown the diff. A '
            "sub-agent's changes are applied as uncommitted changes; a conflict changes nothing "
            "and names the files."
        ),
        parameters={
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The worktree's name, from the task result"}
            },
            "required": ["name"],
            "additionalProperties": False,
        },
        run=_run,
        requires_approval=True,
        kind="edit",
        subject_of=_subject,
        preview=_preview,
        summary_arg="name",
    )
