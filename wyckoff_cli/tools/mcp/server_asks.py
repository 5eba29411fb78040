"""What an MCP server asks of the client during one of its tool calls: the model
(`sampling/createMessage`) or the user (`elicitation/create`).

Both are asked about as a tool call is (`ToolContext.ask`, runtime/call_asks.py), under
pseudo tools the rules can name:

- `McpSampling(SERVER)`: the policy's rules and mode decide, else the person is asked
  (the server's name, its system prompt and messages shown); "always" saves that rule.
  Headless runs refuse it unless a rule allows it. An allowed request runs on the
  session's model (`Sampler`, given by the session), its usage reported with purpose
  `mcp_sampling` and the server as its source, so it is paid for and attributed.
- `McpElicitation(SERVER)`: a form only a person fills (tools/mcp/forms.py); a deny
  rule declines it, no rule or mode accepts it. With no one to ask it is answered with
  the server's `elicitation` setting (`decline`, or `cancel`).

A request that arrives outside a tool call of that server has no one to ask and is
refused (sampling) or answered with the server's setting (elicitation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.tools.base import Tool, ToolContext
from wyckoff_cli.tools.mcp.forms import check_answers, defaults, form_fields
from wyckoff_cli.tools.permissions.subject import Subject

SAMPLING = "McpSampling"
ELICITATION = "McpElicitation"
PSEUDO_TOOLS = (SAMPLING, ELICITATION)


async def _not_called(_args: dict[str, Any], _ctx: ToolContext) -> str:
    raise ToolError("this names an MCP server's request for the permission rules; the model cannot call it")


def _pseudo(name: str, description: str, *, person: bool) -> Tool:
    return Tool(
        name=name,
        description=description,
        parameters={"type": "object", "properties": {"server": {"type": "string"}}},
        run=_not_called,
        requires_approval=True,
        subject_of=lambda args, _workspace: Subject("text", str(args.get("server", ""))),
        extra={"asks_person": person},
    )


SAMPLING_TOOL = _pseudo(SAMPLING, "An MCP server asks the session's model for an answer.", person=False)
ELICITATION_TOOL = _pseudo(ELICITATION, "An MCP server asks the user to fill in a form.", person=True)


@dataclass(frozen=True)
class SamplingRequest:
    server: str
    messages: tuple[tuple[str, str], ...]  # (role, text): `user` or `assistant`
    system_prompt: str = ""
    max_tokens: int = 0
    model_hints: tuple[str, ...] = ()


@dataclass(frozen=True)
class SampledReply:
    text: str
    model: str
    usage: Usage
    stop_reason: Literal["endTurn", "maxTokens"] = "endTurn"


class Sampler(Protocol):
    async def __call__(self, request: SamplingRequest) -> SampledReply: ...


def _content_text(content: Any) -> str:
    items = content if isinstance(content, list) else [content]
    parts = []
    for item in items:
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(str(item.text))
        else:
            parts.append(
                f"[{kind or 'content'}{': ' + item.mime_type if getattr(item, 'mime_type', None) else ''}]"
            )
    return "\n".join(parts)


def sampling_args(server: str, params: Any) -> dict[str, Any]:
    """The request as the arguments a host shows (and a person may edit)."""
    hints = [h.name for h in (getattr(params.model_preferences, "hints", None) or []) if h.name]
    return {
        "server": server,
        "messages": [{"role": m.role, "text": _content_text(m.content)} for m in params.messages],
        "system_prompt": params.system_prompt or "",
        "max_tokens": params.max_tokens,
        "model_hints": hints,
    }


def request_of(args: dict[str, Any]) -> SamplingRequest:
    messages = args.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list of {role, text}")
    pairs = []
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise ValueError("each message needs a role of user or assistant")
        pairs.append((str(message["role"]), str(message.get("text", ""))))
    hints = args.get("model_hints") or []
    return SamplingRequest(
        str(args.get("server", "")),
        tuple(pairs),
        str(args.get("system_prompt") or ""),
        int(args.get("max_tokens") or 0),
        tuple(str(h) for h in hints) if isinstance(hints, list) else (),
    )


def _error(message: str) -> Any:
    from mcp import types

    return types.ErrorData(code=types.INVALID_REQUEST, message=message)


async def answer_sampling(server: str, params: Any, ctx: ToolContext | None, sampler: Sampler | None) -> Any:
    """`sampling/createMessage`: a `CreateMessageResult`, or the error saying why not."""
    from mcp import types

    if ctx is None or ctx.ask is None:
        return _error(f"{server} asked for the model outside one of its tool calls: there is no one to ask")
    if sampler is None:
        return _error("this Wyckoff session has no model to answer sampling requests")
    args = sampling_args(server, params)
    shown = {"kind": "mcp_sampling", "server": server, "include_context": params.include_context or "none"}
    decision = await ctx.ask(SAMPLING_TOOL, args, shown)
    if decision.kind == "deny":
        why = f": {decision.feedback}" if decision.feedback else ""
        return _error(f"the user did not allow {server} to use the model{why}")
    try:
        request = request_of(decision.args if decision.kind == "edit" and decision.args else args)
    except ValueError as exc:
        return _error(f"the edited sampling request is invalid: {exc}")
    try:
        reply = await sampler(request)
    except Exception as exc:  # the model failed: the server is told, the tool call goes on
        return _error(f"the model failed: {exc}")
    usage = ev.UsageReported.from_usage(reply.model, reply.usage, purpose="mcp_sampling")
    ctx.emit_event(_with_source(usage, server))
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=reply.text),
        model=reply.model,
        stop_reason=reply.stop_reason,
    )


def _with_source(usage: ev.UsageReported, server: str) -> ev.UsageReported:
    from dataclasses import replace

    return replace(usage, source=server)


async def answer_elicitation(
    server: str, params: Any, ctx: ToolContext | None, unattended: Literal["decline", "cancel"]
) -> Any:
    """`elicitation/create`: an `ElicitResult` (accept with content, decline, cancel)."""
    from mcp import types

    if getattr(params, "mode", "form") != "form":  # URL mode: Wyckoff opens no pages for a server
        return types.ElicitResult(action="decline")
    if ctx is None or ctx.ask is None:
        return types.ElicitResult(action=unattended)
    schema = params.requested_schema if isinstance(params.requested_schema, dict) else {}
    fields = form_fields(schema)
    args = {"server": server, "message": params.message, "requested_schema": schema}
    decision = await ctx.ask(ELICITATION_TOOL, args, {"kind": "mcp_elicitation", "server": server})
    if decision.kind == "deny":
        return types.ElicitResult(action=unattended if decision.unattended else "decline")
    if decision.kind == "edit" and decision.args is not None:
        action = decision.args.get("action")
        if action in ("decline", "cancel"):
            return types.ElicitResult(action=action)
        typed = decision.args.get("content")
        content, problems = check_answers(fields, typed if isinstance(typed, dict) else {})
        if problems:
            return _error("the answer does not fit the form: " + "; ".join(problems.values()))
        return types.ElicitResult(action="accept", content=dict(content))
    filled = defaults(fields)  # accepted as it is (an ACP client's "accept")
    if filled is None:
        return types.ElicitResult(action="decline")
    return types.ElicitResult(action="accept", content=dict(filled))


def pick_model(hints: Sequence[str], models: Sequence[str]) -> str:
    """The first of the session's `models` (the current one first) a hint names, by a
    case-insensitive part of its id (`claude`, `sonnet`, `gpt-5`); else the current one."""
    for hint in hints:
        wanted = hint.strip().lower()
        for model in models:
            if wanted and wanted in model.lower():
                return model
    return models[0]
