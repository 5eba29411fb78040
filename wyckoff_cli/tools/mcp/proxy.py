"""An MCP server's tool as a Wyckoff `Tool`: the same path as the built-ins.

- name `mcp__SERVER__TOOL` (names.py); the server's JSON Schema as the parameters (each
  provider adapter cleans it for its vendor, core/tool_schema.py);
- approval: `requires_approval` unless the server declares the tool read-only
  (`readOnlyHint`), in which case it is a read (`kind="read"`, runs in parallel with
  other reads); other MCP tools are `kind="external"`, which plan mode refuses;
- the permission subject (`Tool.subject_of`) is the call's arguments as compact JSON
  (keys sorted), so `mcp__SERVER__TOOL(PATTERN)` rules match it as a glob, and "always"
  saves a rule for exactly those arguments;
- progress and log messages stream to the running tool's widget (`ctx.emit_output`).
"""

from __future__ import annotations

import json
from typing import Any

from wyckoff_cli.tools.base import Tool, ToolContext, ToolOutcome
from wyckoff_cli.tools.mcp.client import ServerConnection
from wyckoff_cli.tools.mcp.results import convert_result
from wyckoff_cli.tools.permissions.subject import Subject


def arguments_subject(args: dict[str, Any]) -> str:
    """The text `mcp__SERVER__TOOL(PATTERN)` rules are matched against."""
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def is_read_only(mcp_tool: Any) -> bool:
    annotations = getattr(mcp_tool, "annotations", None)
    return bool(annotations is not None and annotations.read_only_hint)


def tool_definition(mcp_tool: Any) -> dict[str, Any]:
    """What decides what a tool does, for the trust hash."""
    annotations = getattr(mcp_tool, "annotations", None)
    return {
        "name": mcp_tool.name,
        "description": mcp_tool.description or "",
        "input_schema": mcp_tool.input_schema,
        "annotations": annotations.model_dump(exclude_none=True) if annotations is not None else {},
    }


def proxy_tool(connection: ServerConnection, mcp_tool: Any, name: str, *, send_images: bool = False) -> Tool:
    server = connection.spec.name
    original = mcp_tool.name
    read_only = is_read_only(mcp_tool)
    title = getattr(mcp_tool, "title", None) or (
        mcp_tool.annotations.title if getattr(mcp_tool, "annotations", None) is not None else None
    )
    description = (mcp_tool.description or title or original).strip()

    async def run(args: dict[str, Any], ctx: ToolContext) -> str | ToolOutcome:
        result = await connection.call_tool(original, args, ctx.emit_output, ctx)
        images = ctx.images if send_images else None
        return convert_result(result, tool=name, results_dir=ctx.results_dir, images=images)

    return Tool(
        name=name,
        description=f"{description}\n\n(From the MCP server `{server}`.)",
        parameters=dict(mcp_tool.input_schema or {"type": "object", "properties": {}}),
        run=run,
        concurrency_safe=read_only,
        requires_approval=not read_only,
        kind="read" if read_only else "external",
        subject_of=lambda args, _workspace: Subject("text", arguments_subject(dict(args))),
        extra={"mcp_server": server, "mcp_tool": original, "read_only": read_only},
    )
