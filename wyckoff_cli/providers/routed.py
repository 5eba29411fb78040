"""A small model for the small jobs (`[routing]`), falling back to the session's model.

`SmallModelRoute` holds the provider configured for one purpose (compaction, the memory
flush). `over(session_provider)` gives a provider that asks the small model and,
when that fails with any error, the session's model instead — from then on, for the rest
of the session — leaving one notice (`take_notices`). `served` names the model that
answered the last call, so its usage is attributed to the right model.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence

from wyckoff_cli.core.messages import Message, ToolSpec
from wyckoff_cli.providers.base import ChatResponse, Chunk, LLMProvider

log = logging.getLogger(__name__)


class SmallModelRoute:
    """`make` builds the small model's provider on first use: a model that cannot be
    built (an unknown id, a missing key) fails like a call that fails."""

    def __init__(self, model: str, make: Callable[[], LLMProvider], purpose: str) -> None:
        self.model = model
        self.make = make
        self.purpose = purpose
        self.failed = False
        self.served: str | None = None
        self._notices: list[str] = []
        self._small: LLMProvider | None = None

    @property
    def small(self) -> LLMProvider:
        if self._small is None:
            self._small = self.make()
        return self._small

    def over(self, session_provider: LLMProvider) -> RoutedProvider:
        return RoutedProvider(self, session_provider)

    def fail(self, exc: Exception, fallback: LLMProvider) -> None:
        log.warning("the small model %s failed for %s", self.model, self.purpose, exc_info=True)
        self.failed = True
        self._notices.append(
            f"The small model {self.model} failed for {self.purpose.replace('_', ' ')} "
            f"({type(exc).__name__}: {exc}); using {fallback.name} for it from now on."
        )

    def take_notices(self) -> list[str]:
        notices, self._notices = self._notices, []
        return notices


class RoutedProvider:
    """The small model, or the session's after the small one failed."""

    def __init__(self, route: SmallModelRoute, fallback: LLMProvider) -> None:
        self.route = route
        self.fallback = fallback

    @property
    def name(self) -> str:
        return self.fallback.name if self.route.failed else self.route.model

    def chat_stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> AsyncIterator[Chunk]:
        return (self.fallback if self.route.failed else self.route.small).chat_stream(
            messages, tools, system_prompt
        )

    async def chat(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> ChatResponse:
        if not self.route.failed:
            try:
                response = await self.route.small.chat(messages, tools, system_prompt)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.route.fail(exc, self.fallback)
            else:
                self.route.served = self.route.small.name or self.route.model
                return response
        response = await self.fallback.chat(messages, tools, system_prompt)
        self.route.served = self.fallback.name
        return response
