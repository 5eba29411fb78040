"""Helpers for driving the runtime with the scripted provider."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from tests.waiting import eventually
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.conversation import Conversation
from wyckoff_cli.core.messages import Message
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.runtime.approval import Approver, answer_approvals, deny_without_approver
from wyckoff_cli.runtime.loop import AgentRuntime
from wyckoff_cli.tools.base import Tool, ToolContext
from wyckoff_cli.tools.registry import ToolRegistry

OBJECT = {"type": "object", "properties": {}, "additionalProperties": True}


def make_tool(
    name: str,
    fn: Callable[[dict[str, Any], ToolContext], Awaitable[Any]] | None = None,
    *,
    schema: dict[str, Any] | None = None,
    **flags: Any,
) -> Tool:
    async def default(args: dict[str, Any], ctx: ToolContext) -> str:
        return f"{name} ok {sorted(args.items())}"

    return Tool(name, f"The {name} tool.", schema or OBJECT, fn or default, **flags)


class HostedRuntime(AgentRuntime):
    """A runtime with a host that answers its approval requests with `approver` (as
    a headless run does, by default denying), the way the app answers from its dialog."""

    def __init__(self, *args: Any, approver: Approver | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.approver = approver or deny_without_approver

    def run_stream(  # type: ignore[override]
        self, conversation: Conversation, user_message: str | Message, **kwargs: Any
    ) -> AsyncIterator[ev.RuntimeEvent]:
        return answer_approvals(super().run_stream(conversation, user_message, **kwargs), self.approver)


def make_runtime(
    rounds: list[Any], tools: list[Tool], workspace: Path, **kwargs: Any
) -> tuple[HostedRuntime, ScriptedProvider]:
    provider = ScriptedProvider(rounds)
    kwargs.setdefault("results_dir", workspace / ".results")
    runtime = HostedRuntime(provider, ToolRegistry(tools), workspace=workspace, **kwargs)
    return runtime, provider


async def collect(
    runtime: AgentRuntime,
    prompt: str | Message = "go",
    history: Conversation | Iterable[Message] | None = None,
    **kwargs: Any,
) -> tuple[list[ev.RuntimeEvent], list[Message]]:
    """Run one turn; returns its events and the conversation's messages after it."""
    conversation = history if isinstance(history, Conversation) else Conversation(history or ())
    events = [e async for e in runtime.run_stream(conversation, prompt, **kwargs)]
    return events, conversation.messages


def of_type(events: list[ev.RuntimeEvent], cls: type) -> list[Any]:
    return [e for e in events if isinstance(e, cls)]


def assert_history_valid(history: Sequence[Message]) -> None:
    """Every tool call is answered exactly once, right after its assistant message."""
    index = 0
    while index < len(history):
        message = history[index]
        calls = message.tool_calls if message.role == "assistant" else []
        if calls:
            answers = []
            j = index + 1
            while j < len(history) and history[j].role == "tool":
                answers.append(history[j].tool_call_id)
                j += 1
            assert answers == [c.id for c in calls], (answers, [c.id for c in calls])
            index = j
        else:
            assert message.role != "tool", f"orphan tool message at {index}"
            index += 1


async def wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    await eventually(predicate, timeout)
