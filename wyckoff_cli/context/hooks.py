"""The points where context management plugs into the runtime.

Recall before a user message is sent, compaction before each model call (and on
demand), and the provider's reported usage after each call.
`wyckoff_cli.context.manager.ContextManager` implements them; the runtime calls them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wyckoff_cli.core.events import Compacted
from wyckoff_cli.core.messages import Message, ToolSpec
from wyckoff_cli.core.usage import Usage

if TYPE_CHECKING:
    from wyckoff_cli.providers.base import LLMProvider


@dataclass(frozen=True, slots=True)
class Compaction:
    """A compaction worked out: the whole new history and the event that reports it.
    The conversation's owner applies it (`Conversation.replace_all`)."""

    messages: list[Message]
    event: Compacted


@dataclass(frozen=True, slots=True)
class SideCall:
    """One model call the context manager made itself."""

    model: str | None  # the model that served it; None: the session's
    usage: Usage
    purpose: str  # `compaction`, `memory_flush`


class ContextHooks:
    """Context management hook points; the defaults do nothing."""

    async def prepare_user_message(self, message: Message, history: Sequence[Message]) -> Message:
        """Return the user message as it will be sent and stored (memory recall)."""
        return message

    async def maybe_compact(
        self,
        history: Sequence[Message],
        system_prompt: str,
        tools: list[ToolSpec],
        provider: LLMProvider,
    ) -> Compaction | None:
        """Asked before each model call: a compaction of `history` when the request
        would be too long, else None."""
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

    def take_side_calls(self) -> list[SideCall]:
        """The same calls one by one, with the model that served each (None: the
        session's) and their purpose; asking for these empties `take_side_usage` too."""
        usage = self.take_side_usage()
        return [SideCall(None, usage, "compaction")] if usage is not None else []

    def take_notices(self) -> list[str]:
        """What a person should be told about those calls (a small model that failed)."""
        return []

    async def compact(
        self,
        history: Sequence[Message],
        system_prompt: str,
        tools: list[ToolSpec],
        provider: LLMProvider,
        focus: str | None = None,
    ) -> Compaction | None:
        """A compaction of `history` now (`/compact [focus]`); None if there is nothing
        to compact."""
        return None
