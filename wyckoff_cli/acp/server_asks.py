"""An MCP server's requests over ACP: a sampling request is a permission request like a
tool call's (named after the server); a form (elicitation) is a permission request too,
since the vendored ACP schema has no elicitation method: "Accept" answers with the
form's defaults and is offered only when they fill every required field; "Decline" and
"Cancel" are the server's other two answers. What the form asks is in the request's
content, one line a field."""

from __future__ import annotations

from acp import schema
from acp.helpers import text_block, tool_content

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.tools.mcp.forms import defaults, form_fields
from wyckoff_cli.tools.mcp.server_asks import ELICITATION, SAMPLING


def is_form(request: ev.ApprovalRequested) -> bool:
    return request.name == ELICITATION


def form_call(call: schema.ToolCallUpdate, request: ev.ApprovalRequested) -> schema.ToolCallUpdate:
    """The permission request's call for a form: titled with the server's question, the
    fields and defaults listed."""
    schema_ = request.args.get("requested_schema")
    fields = form_fields(schema_ if isinstance(schema_, dict) else {})
    lines = [str(request.args.get("message", ""))]
    for item in fields:
        default = f" (default {item.default})" if item.default is not None else ""
        choices = f" — one of {', '.join(item.options)}" if item.options else ""
        lines.append(f"- {item.title}{' *' if item.required else ''}: {item.kind}{choices}{default}")
    call.title = f"The MCP server {request.args.get('server', '')} asks: {request.args.get('message', '')}"
    call.kind = "other"
    call.content = [tool_content(text_block("\n".join(lines)))]
    return call


def sampling_title(request: ev.ApprovalRequested) -> str | None:
    if request.name != SAMPLING:
        return None
    return f"The MCP server {request.args.get('server', '')} asks to use the model"


def form_options(request: ev.ApprovalRequested) -> list[schema.PermissionOption]:
    schema_ = request.args.get("requested_schema")
    filled = defaults(form_fields(schema_ if isinstance(schema_, dict) else {}))
    accept = (
        [schema.PermissionOption(option_id="accept", name="Accept with the defaults", kind="allow_once")]
        if filled is not None
        else []
    )
    return [
        *accept,
        schema.PermissionOption(option_id="decline", name="Decline", kind="reject_once"),
        schema.PermissionOption(option_id="cancel", name="Cancel", kind="reject_once"),
    ]


def form_answer(choice: str | None) -> ApprovalDecision:
    """The answer to a form from the option chosen (none chosen: cancelled)."""
    if choice == "accept":
        return ApprovalDecision.allow()  # the defaults (tools/mcp/server_asks.py)
    return ApprovalDecision.edit({"action": "decline" if choice == "decline" else "cancel"})
