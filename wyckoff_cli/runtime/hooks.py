"""Lifecycle hooks around the run, each model call and each tool call.

Subclass `RuntimeHooks` and override what you need. A hook may return a modified
input (or `None` to keep it) and may raise `StopRun(reason)` to end the run; the turn
then ends with `done.reason == "stopped"` and a valid history.

`ContextHooks` are the points where context management plugs in: recall before a
user message is sent, compaction before each model call (and on demand), and the
provider's reported usage after each call. `wyckoff_cli.context.manager.ContextManager`
implements them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from wyckoff_cli.runtime.messages import Message, ToolCallPart, ToolSpec, Usage

if TYPE_CHECKING:
    from wyckoff_cli.providers.base import LLMProvider
    from wyckoff_cli.runtime.events import Compacted, RuntimeEvent, TurnDone


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """What is about to be sent to the model (a copy: changing it changes the call,
    not the stored history)."""

    system_prompt: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    round: int

    def with_messages(self, messages: tuple[Message, ...]) -> ModelRequest:
        return replace(self, messages=messages)


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

    async def before_tool(self, call: ToolCallPart) -> ToolCallPart | None:
        return None

    async def after_tool(self, call: ToolCallPart, result: str, is_error: bool) -> str | None:
        return None

    async def on_event(self, event: RuntimeEvent) -> None:
        return None


class ContextHooks:
    """Context management hook points; the defaults do nothing."""

    async def prepare_user_message(self, message: Message, history: list[Message]) -> Message:
        """Return the user message as it will be sent and stored (memory recall)."""
        return message

    async def before_model_call(
        self,
        history: list[Message],
        system_prompt: str,
        tools: list[ToolSpec],
        provider: LLMProvider,
    ) -> Compacted | None:
        """Compact `history` in place when it is too long; return the event if so."""
        return None

    def refresh_system_prompt(self, system_prompt: str) -> str:
        """The system prompt to use from here on, asked at the start of a turn and after
        a compaction (which may have re-read the project instructions): a context
        manager swaps a prompt it has superseded for its current one. By default the
        same prompt."""
        return system_prompt

    def record_usage(self, usage: Usage) -> None:
        """The provider's token counts for the model call just made (calibration)."""
        return None

    def take_side_usage(self) -> Usage | None:
        """Tokens of model calls the context manager made itself (a compaction's
        summary and memory flush) since the last time this was asked, so they are
        reported and paid for like any other call."""
        return None

    async def compact(
        self,
        history: list[Message],
        system_prompt: str,
        tools: list[ToolSpec],
        provider: LLMProvider,
        focus: str | None = None,
    ) -> Compacted | None:
        """Compact `history` in place now (`/compact [focus]`); None if nothing was done."""
        return None
