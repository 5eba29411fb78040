"""`lsp_rename`: the server's workspace edit for a rename, applied as one edit call —
one approval showing the whole multi-file diff, one checkpoint. The edit is planned
before the approval (`RenamePlans.plan`, called by a runtime hook with the call's id)
so the approval's preview shows it; the run applies that plan, all files or none."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import Tool, ToolContext, ToolOutcome
from wyckoff_cli.tools.lsp.client import LspError, path_uri, uri_path
from wyckoff_cli.tools.lsp.manager import LspManager
from wyckoff_cli.tools.lsp.positions import (
    POSITION_PROPERTIES,
    character_column,
    position_of,
    read_source,
    target_path,
)
from wyckoff_cli.tools.permissions.workspace import display_path, is_within
from wyckoff_cli.tools.textio import unified_diff, write_atomic_bytes


@dataclass(frozen=True, slots=True)
class FileChange:
    path: Path
    shown: str
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class RenamePlan:
    changes: tuple[FileChange, ...]

    def diff(self) -> str:
        return "".join(unified_diff(c.before, c.after, c.shown) for c in self.changes)


def apply_text_edits(text: str, edits: list[lsp.TextEdit]) -> str:
    """`text` with LSP `edits` (UTF-16 positions, non-overlapping) applied."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: lsp.Position) -> int:
        if position.line >= len(lines):
            return len(text)
        line = lines[position.line].rstrip("\r\n")
        return starts[position.line] + min(character_column(line, position.character), len(line))

    spans = sorted(((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def _edits_by_uri(edit: lsp.WorkspaceEdit) -> dict[str, list[lsp.TextEdit]]:
    found: dict[str, list[lsp.TextEdit]] = {}
    for uri, edits in (edit.changes or {}).items():
        found.setdefault(uri, []).extend(edits)
    for change in edit.document_changes or []:
        if isinstance(change, lsp.TextDocumentEdit):
            found.setdefault(change.text_document.uri, []).extend(
                e for e in change.edits if isinstance(e, lsp.TextEdit)
            )
        else:
            raise ToolError(
                "the server's rename creates, renames or deletes files, which lsp_rename does not do"
            )
    return found


class RenamePlans:
    """Plans computed before approval, by call id."""

    def __init__(self, manager: LspManager) -> None:
        self.manager = manager
        self._plans: dict[str, RenamePlan | str] = {}

    async def plan(self, call_id: str, args: dict[str, Any], workspace: Path) -> RenamePlan:
        try:
            plan = await self._compute(args, workspace)
        except ToolError as exc:
            self._plans[call_id] = exc.message
            raise
        self._plans[call_id] = plan
        return plan

    def planned(self, call_id: str) -> RenamePlan | str | None:
        return self._plans.get(call_id)

    def forget(self, call_id: str) -> None:
        self._plans.pop(call_id, None)

    async def _compute(self, args: dict[str, Any], workspace: Path) -> RenamePlan:
        path, shown = target_path(args, workspace)
        text = read_source(path, shown)
        try:
            client = await self.manager.query_client(path)
        except LspError as exc:
            raise ToolError(str(exc)) from None
        client.sync(path, text)
        at = position_of(args, text, shown)
        params = lsp.RenameParams(lsp.TextDocumentIdentifier(path_uri(path)), at, str(args["new_name"]))
        try:
            edit = await client.call(
                client.client.text_document_rename_async(params), self.manager.request_timeout, "rename"
            )
        except LspError as exc:
            raise ToolError(str(exc)) from None
        if edit is None:
            raise ToolError(f"the server cannot rename what is at line {args['line']} of {shown}")
        changes: list[FileChange] = []
        for uri, edits in sorted(_edits_by_uri(edit).items()):
            target = uri_path(uri)
            if not is_within(target, workspace):
                raise ToolError(f"the rename would change {target}, outside the workspace; not applied")
            target_shown = display_path(target, workspace)
            before = read_source(target, target_shown)
            after = apply_text_edits(before, edits)
            if after != before:
                changes.append(FileChange(target, target_shown, before, after))
        if not changes:
            raise ToolError("the rename changes nothing")
        return RenamePlan(tuple(changes))


def rename_tool(plans: RenamePlans) -> Tool:
    async def run(args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        planned = plans.planned(ctx.call_id)
        plans.forget(ctx.call_id)
        plan = (
            planned if isinstance(planned, RenamePlan) else await plans.plan(ctx.call_id, args, ctx.workspace)
        )
        plans.forget(ctx.call_id)
        for change in plan.changes:  # all or nothing: nothing changed since the plan
            if read_source(change.path, change.shown) != change.before:
                raise ToolError(f"{change.shown} changed since the rename was planned; call lsp_rename again")
        for change in plan.changes:
            write_atomic_bytes(change.path, change.after.encode("utf-8"))
        client = await plans.manager.client_for(plan.changes[0].path)
        if client is not None:
            for change in plan.changes:
                if path_uri(change.path) in client.documents:
                    client.sync(change.path, change.after, save=True)
        files = ", ".join(c.shown for c in plan.changes)
        text = f"Renamed to {args['new_name']!r} in {len(plan.changes)} file(s): {files}."
        return ToolOutcome(text, {"kind": "diff", "path": files, "diff": plan.diff(), "new_file": False})

    def preview(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        planned = plans.planned(ctx.call_id)
        shown: dict[str, Any] = {"kind": "diff", "path": str(args.get("path", "")), "new_file": False}
        if isinstance(planned, RenamePlan):
            shown["path"] = ", ".join(c.shown for c in planned.changes)
            shown["diff"] = planned.diff()
        elif isinstance(planned, str):
            shown["error"] = planned
        return shown

    return Tool(
        name="lsp_rename",
        description=(
            "Rename the symbol at a position everywhere the language server finds it (all files, one change). "
            "Give `path`, `line`, `column` or `symbol`, and `new_name`."
        ),
        parameters={
            "type": "object",
            "properties": {
                **POSITION_PROPERTIES,
                "new_name": {"type": "string", "minLength": 1, "description": "The new name."},
            },
            "required": ["path", "line", "new_name"],
            "additionalProperties": False,
        },
        run=run,
        requires_approval=True,
        kind="edit",
        path_args=("path",),
        path_access="read-write",
        preview=preview,
        summary_arg="path",
        editable_fields=("new_name",),
    )
