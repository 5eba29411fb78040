"""Lifecycle hooks around the run, each model call and each tool call.

Subclass `RuntimeHooks` and override what you need. A hook may return a modified
input (or `None` to keep it) and may raise `StopRun(reason)` to end the run; the turn
then ends with `done.reason == "stopped"` and a valid history.

Context management plugs in through `wyckoff_cli.context.hooks.ContextHooks`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wyckoff_cli.core.messages import Message, ToolCallPart, ToolSpec

if TYPE_CHECKING:
    from wyckoff_cli.core.events import RuntimeEvent, TurnDone
    from wyckoff_cli.tools.base import Tool


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """What is about to be sent to the model (a copy: changing it changes the call,
    not the stored history)."""

    system_prompt: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    round: int


class RuntimeHooks:
    """No-op base; every method may raise `StopRun`."""

    async def before_run(self, user_message: Message) -> Message | None:
        return None

    async def after_run(self, done: TurnDone) -> None:
        return None

    async def before_model_call(self, request: ModelRequest) -> ModelRequest | None:
        return None

    async def after_model_call(self, message: Message) -> Message | None:
        return None

    async def before_tool_round(
        self, calls: Sequence[ToolCallPart], tools: Sequence[Tool | None]
    ) -> Sequence[RuntimeEvent]:
        """Before a round's calls are checked and run; `tools[i]` is the tool of
        `calls[i]` (None when unknown). Returns events to emit (e.g. notices)."""
        return ()

    async def before_tool(self, call: ToolCallPart) -> ToolCallPart | None:
        return None

    async def after_tool(self, call: ToolCallPart, result: str, is_error: bool) -> str | None:
        return None

    async def on_event(self, event: RuntimeEvent) -> None:
        return None
