"""Runtime events as ACP `session/update` notifications.

One `UpdateTranslator` per session keeps what the protocol needs across events: each
call's name and arguments (for titles, kinds, locations and diffs), its streamed
output, and the terminal it ran in.
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from acp import schema
from acp.helpers import (
    start_tool_call,
    text_block,
    tool_content,
    tool_terminal_ref,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
)

from wyckoff_cli.acp.call_content import absolute, disk_text, edit_diffs, permission_content
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import ImagePart, Message
from wyckoff_cli.core.shown import shown_user_text
from wyckoff_cli.tools.registry import ToolRegistry

Update = Any  # one of the schema's session update models
ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
OUTPUT_SHOWN = 20_000  # characters of a call's streamed output kept in its update

KIND_BY_NAME: dict[str, ToolKind] = {
    "read_file": "read",
    "list_dir": "read",
    "glob": "search",
    "grep": "search",
    "edit_file": "edit",
    "write_file": "edit",
    "run_shell": "execute",
    "task_output": "read",
    "task_stop": "execute",
    "todo_write": "think",
    "remember": "think",
    "web_fetch": "fetch",
    "web_search": "fetch",
}
KIND_BY_TOOL_KIND: dict[str, ToolKind] = {"read": "read", "edit": "edit", "execute": "execute"}

STOP_REASONS: dict[str, Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]] = {
    "completed": "end_turn",
    "completed_by_tool": "end_turn",
    "unreliable": "end_turn",
    "stopped": "end_turn",
    "error": "end_turn",
    "max_tool_rounds": "max_turn_requests",
    "budget": "max_turn_requests",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
    "aborted": "cancelled",
}


def stop_reason(
    reason: str, model_stop: str | None = None
) -> Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]:
    """ACP's stop reason for a turn's `done.reason`, refined by the model's own
    `done.stop_reason` (an answer still cut at the output limit, a safety stop)."""
    if reason == "completed" and model_stop in ("max_tokens", "content_filter"):
        return "max_tokens" if model_stop == "max_tokens" else "refusal"
    return STOP_REASONS.get(reason, "end_turn")


class UpdateTranslator:
    def __init__(self, workspace: Path, registry: ToolRegistry | None = None) -> None:
        self.workspace = workspace
        self.registry = registry
        self.calls: dict[str, tuple[str, dict[str, Any]]] = {}
        self.output: dict[str, str] = {}
        self.terminals: dict[str, str] = {}
        self.before: dict[str, str] = {}  # a write's file text before it ran
        self.answered = False  # this turn has shown answer text
        self.new_answer = False  # a model call started since: its text is a new answer

    # ------------------------------------------------------------------ tool calls

    def kind(self, name: str) -> ToolKind:
        if name in KIND_BY_NAME:
            return KIND_BY_NAME[name]
        tool = self.registry.get(name) if self.registry is not None else None
        return KIND_BY_TOOL_KIND.get(tool.kind, "other") if tool is not None else "other"

    def title(self, name: str, args: dict[str, Any]) -> str:
        for key in ("command", "path", "pattern", "url", "query", "task_id"):
            value = args.get(key)
            if isinstance(value, str) and value:
                return f"{name}: {value[:120]}"
        return name

    def locations(self, args: dict[str, Any]) -> list[schema.ToolCallLocation] | None:
        path = args.get("path")
        if not isinstance(path, str) or not path:
            return None
        absolute = (self.workspace / path).resolve() if not Path(path).is_absolute() else Path(path)
        return [schema.ToolCallLocation(path=str(absolute))]

    def start(self, call_id: str, name: str, args: dict[str, Any], *, replayed: bool = False) -> Update:
        self.calls[call_id] = (name, args)
        if name == "write_file" and isinstance(args.get("path"), str) and not replayed:  # what it replaces
            self.before[call_id] = disk_text(absolute(self.workspace, args["path"])) or ""
        return start_tool_call(
            call_id,
            self.title(name, args),
            kind=self.kind(name),
            status="pending",
            locations=self.locations(args),
            raw_input=args,
        )

    def permission_call(self, request: ev.ApprovalRequested) -> schema.ToolCallUpdate:
        return schema.ToolCallUpdate(
            tool_call_id=request.id,
            title=self.title(request.name, request.args),
            kind=self.kind(request.name),
            status="pending",
            raw_input=request.args,
            locations=self.locations(request.args),
            content=permission_content(request.name, request.args, request.preview, self.workspace),
        )

    def terminal(self, call_id: str, terminal_id: str) -> Update:
        self.terminals[call_id] = terminal_id
        return update_tool_call(call_id, status="in_progress", content=[tool_terminal_ref(terminal_id)])

    def _result_content(self, call_id: str, text: str, display: dict[str, Any] | None) -> list[Any]:
        if call_id in self.terminals:
            return [tool_terminal_ref(self.terminals[call_id])]
        name, args = self.calls.get(call_id, ("", {}))
        if display and isinstance(display.get("diff"), str):
            before = self.before.pop(call_id, None)
            unknown = name == "write_file" and before is None and not display.get("new_file")
            diffs = [] if unknown else edit_diffs(name, args, self.workspace, before=before, on_disk=False)
            return diffs or [tool_content(text_block(display["diff"]))]  # a replayed overwrite
        return [tool_content(text_block(text))]

    def replayed_result(self, call_id: str, result: Message) -> Update:
        """A saved call's result as its final update (`session/load`)."""
        if result.is_error:
            return update_tool_call(
                call_id,
                status="failed",
                content=[tool_content(text_block(result.text))],
                raw_output={"error": result.text},
            )
        display = result.meta.get("display")
        shown = display if isinstance(display, dict) else None
        return update_tool_call(
            call_id,
            status="completed",
            content=self._result_content(call_id, result.text, shown),
            raw_output=raw_output(result.text, shown),
        )

    # ------------------------------------------------------------------ sub-agents

    def subagent(self, wrapped: ev.SubagentEvent) -> list[Update]:
        """A sub-agent's tool calls as calls of their own, nested under its `task` call:
        ids `TASK/CALL`, titles naming the agent, `_meta.parentToolCallId` the task's
        id. Its text and thinking stay inside (the task's result is its answer)."""
        inner = wrapped.event
        if isinstance(inner, ev.SubagentEvent):  # a sub-agent's own sub-agent
            inner = dataclasses.replace(
                inner, parent_call_id=nested_id(wrapped.parent_call_id, inner.parent_call_id)
            )
            return self.subagent(inner)
        if isinstance(inner, ev.ToolCallsReceived):
            calls = [{**c, "id": nested_id(wrapped.parent_call_id, str(c["id"]))} for c in inner.calls]
            updates = self.translate(dataclasses.replace(inner, calls=calls))
        elif isinstance(inner, ev.ToolStarted | ev.ToolOutput | ev.ToolSucceeded | ev.ToolFailed):
            updates = self.translate(
                dataclasses.replace(inner, id=nested_id(wrapped.parent_call_id, inner.id))
            )
        else:
            return []
        for update in updates:
            update.field_meta = {**(update.field_meta or {}), "parentToolCallId": wrapped.parent_call_id}
            if isinstance(update, schema.ToolCallStart):
                update.title = f"{wrapped.agent} agent: {update.title}"
        return [u for u in updates if isinstance(u, schema.ToolCallStart | schema.ToolCallProgress)]

    # ------------------------------------------------------------------ events

    def translate(self, event: ev.RuntimeEvent) -> list[Update]:
        """The updates one event becomes (often none)."""
        match event:
            case ev.ModelStart():
                self.new_answer = True
                return []
            case ev.TextDelta(text=text):
                if self.new_answer and self.answered:  # a re-ask's answer, apart from the last
                    text = "\n\n" + text
                self.new_answer, self.answered = False, True
                return [update_agent_message_text(text)]
            case ev.TurnDone():
                self.answered = False
                return []
            case ev.ThinkingDelta(text=text):
                return [update_agent_thought_text(text)]
            case ev.ToolCallsReceived(calls=calls):
                return [self.start(c["id"], c["name"], dict(c.get("args") or {})) for c in calls]
            case ev.ToolStarted(id=call_id, name=name, args=args):
                if call_id not in self.calls:
                    return [self.start(call_id, name, args), update_tool_call(call_id, status="in_progress")]
                self.calls[call_id] = (name, args)  # the arguments that run (edited ones too)
                return [update_tool_call(call_id, status="in_progress", raw_input=args)]
            case ev.ToolOutput(id=call_id, text=text):
                if call_id in self.terminals:
                    return []  # the client shows its own terminal
                shown = (self.output.get(call_id, "") + text)[-OUTPUT_SHOWN:]
                self.output[call_id] = shown
                return [update_tool_call(call_id, content=[tool_content(text_block(shown))])]
            case ev.ToolSucceeded(id=call_id, name=name, result=result, display=display):
                updates: list[Update] = [
                    update_tool_call(
                        call_id,
                        status="completed",
                        content=self._result_content(call_id, result, display),
                        raw_output=raw_output(result, display),
                    )
                ]
                if name == "todo_write" and display and isinstance(display.get("todos"), list):
                    updates.append(plan(display["todos"]))
                return updates
            case ev.ToolFailed(id=call_id, error=error):
                return [
                    update_tool_call(
                        call_id,
                        status="failed",
                        content=[tool_content(text_block(error))],
                        raw_output={"error": error},
                    )
                ]
            case ev.FallbackSwitched(from_model=old, to_model=new, error=error):
                return [update_agent_thought_text(f"\n[{old} failed ({error}); continuing with {new}]\n")]
            case ev.Retrying(model=model, attempt=attempt, attempts=attempts, delay=delay, error=error):
                note = (
                    f"{model} failed ({error}); retrying in {delay:.1f} s (attempt {attempt} of {attempts})"
                )
                if event.limit is not None:
                    note += f" · waited {event.waited:.0f} s of {event.limit:g} s"
                return [update_agent_thought_text(f"\n[{note}]\n")]
            case ev.RetryInjected():  # the same line the app and `wyckoff run` show
                return [update_agent_thought_text(f"\n[{event.notice}]\n")]
            case ev.ServerToolUsed(summary=summary):
                return [update_agent_thought_text(f"\n[{summary}]\n")]
            case ev.Compacted(before_messages=before, after_messages=after):
                return [update_agent_thought_text(f"\n[context summarised: {before} → {after} messages]\n")]
            case ev.Notice(level=level, message=message) if level != "info":
                return [update_agent_message_text(f"\n\n> {level}: {message}\n")]
            case ev.TurnFailed(kind=kind, message=message):
                return [update_agent_message_text(f"\n\n> error ({kind}): {message}\n")]
            case ev.CommandOutput(title=title, text=text, columns=columns, rows=rows):
                return [update_agent_message_text(command_markdown(title, text, columns, rows))]
            case ev.SubagentEvent():
                return self.subagent(event)
            case _:
                return []


def nested_id(parent_call_id: str, call_id: str) -> str:
    """A sub-agent's call's id in the client: unique beside the parent's own calls."""
    return f"{parent_call_id}/{call_id}"


def raw_output(result: str, display: dict[str, Any] | None) -> dict[str, Any]:
    """A call's `rawOutput`: an object, as clients expect (the result the model got,
    and the diff of an edit when there is one)."""
    raw: dict[str, Any] = {"output": result}
    if display and isinstance(display.get("diff"), str):
        raw["diff"] = display["diff"]
    return raw


def plan(todos: Sequence[dict[str, Any]]) -> schema.AgentPlanUpdate:
    entries = []
    for item in todos:
        status = str(item.get("status", "pending"))
        entries.append(
            schema.PlanEntry(
                content=str(item.get("content", "")),
                priority="medium",
                status=status if status in ("pending", "in_progress", "completed") else "pending",  # type: ignore[arg-type]
            )
        )
    return schema.AgentPlanUpdate(session_update="plan", entries=entries)


def command_markdown(title: str, text: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A command's output as Markdown (a table when it has one)."""
    lines = [f"**{title}**", ""] if title else []
    if columns:
        lines.append("| " + " | ".join(columns) + " |")
        lines.append("|" + "---|" * len(columns))
        lines.extend("| " + " | ".join(row) + " |" for row in rows)
    if text:
        lines.append(text)
    return "\n".join(lines) + "\n"


def replay(messages: Sequence[Message], translator: UpdateTranslator) -> list[Update]:
    """A saved conversation as the updates a client showed live (`session/load`): what
    the person typed (core/shown.py: no `<system-reminder>`, a command as typed), every
    answer — a cancelled turn's partial text too, marked as interrupted — each answer
    apart from the one before it, and each call with its result (an edit's diff, saved
    in the result's meta). Messages the runtime sent itself are left out."""
    from acp.helpers import update_user_message_text

    updates: list[Update] = []
    pending: set[str] = set()  # calls shown, their results still to come
    answered = False  # an answer was shown since the last user message
    for message in messages:
        if message.role == "user":
            shown = shown_user_text(message) if not message.meta.get("synthetic") else ""
            if shown:
                updates.append(update_user_message_text(shown))
                answered = False
            if not message.meta.get("synthetic"):
                updates += [_replayed_image(image) for image in message.images]
        elif message.role == "assistant":
            for thinking in message.thinking:
                updates.append(update_agent_thought_text(thinking.text))
            if message.text:
                updates.append(update_agent_message_text(("\n\n" if answered else "") + message.text))
                answered = True
            if message.meta.get("interrupted"):
                updates.append(update_agent_message_text("\n\n> Interrupted.\n"))
            for call in message.tool_calls:
                updates.append(translator.start(call.id, call.name, call.arguments, replayed=True))
                pending.add(call.id)
        elif message.tool_call_id in pending:  # a result, after its call (ids may repeat across turns)
            pending.discard(message.tool_call_id)
            updates.append(translator.replayed_result(message.tool_call_id, message))
    return updates


def _replayed_image(image: ImagePart) -> Update:
    """An image the person sent with a message, as the client showed it: the image
    itself, or its chip (`[Image screenshot.png 1280×720]`) when its file is gone."""
    from acp.helpers import image_block, update_user_message, update_user_message_text

    try:
        data = base64.b64encode(image.read_bytes()).decode("ascii")
    except OSError:
        return update_user_message_text(f"[Image {image.label}]")
    return update_user_message(image_block(data, image.media_type))
