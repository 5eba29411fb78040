"""Fallback across models: the default first, then the configured fallbacks in order.

`FallbackProvider` switches only on retryable failures (rate limits, timeouts, network
and server errors) — after the model's own retries (`providers.retry`) ran out. A
model that just failed is skipped for `cooldown` seconds, or for as long as its
`retry-after` asked, so a rate-limited default is not hit again every round. When a
switch happens after output began, a `FallbackChunk` tells the runtime to drop what
the failed attempt streamed (the UI removes it; nothing is duplicated in history) and
names the new model. Authentication, bad-request and configuration errors are raised
at once. When every model fails, the error names each model and why it failed.

History crosses vendors through the neutral message model: each adapter converts the
whole history on every call, dropping other vendors' thinking blocks and keeping tool
calls and results.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence

from wyckoff_cli.core.errors import ProviderError
from wyckoff_cli.core.messages import Message, ToolSpec
from wyckoff_cli.providers.base import Chunk, FallbackChunk, LLMProvider, StreamingProvider

DEFAULT_COOLDOWN = 120.0


class FallbackProvider(StreamingProvider):
    """Tries `providers` in order. `name` is the model the next call starts with."""

    def __init__(
        self,
        providers: Sequence[LLMProvider],
        *,
        cooldown: float = DEFAULT_COOLDOWN,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not providers:
            raise ValueError("FallbackProvider needs at least one provider")
        self.providers = list(providers)
        self.cooldown = float(cooldown)
        self._clock = clock
        self._until: dict[int, float] = {}  # model index -> when it may be tried again

    @property
    def name(self) -> str:
        return self._order()[0][1].name

    def __repr__(self) -> str:
        names = ", ".join(p.name for p in self.providers)
        return f"FallbackProvider([{names}], cooldown={self.cooldown:g})"

    async def aclose(self) -> None:
        """Close every model's SDK client (each that has `aclose`)."""
        for provider in self.providers:
            close = getattr(provider, "aclose", None)
            if close is not None:
                await close()

    def cooling_down(self) -> list[str]:
        """Names of the models skipped right now."""
        return [p.name for i, p in enumerate(self.providers) if self._cooling(i)]

    def _cooling(self, index: int) -> bool:
        until = self._until.get(index)
        return until is not None and self._clock() < until

    def _order(self) -> list[tuple[int, LLMProvider]]:
        """Models not cooling down, in configured order; all of them if every one is."""
        every = list(enumerate(self.providers))
        return [(i, p) for i, p in every if not self._cooling(i)] or every

    def chat_stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> AsyncIterator[Chunk]:
        return self._stream(tuple(messages), tuple(tools), system_prompt)

    async def _stream(
        self, messages: tuple[Message, ...], tools: tuple[ToolSpec, ...], system_prompt: str
    ) -> AsyncIterator[Chunk]:
        order = self._order()
        failures: list[tuple[LLMProvider, ProviderError]] = []
        for index, provider in order:
            if failures:
                failed, error = failures[-1]
                yield FallbackChunk(failed.name, provider.name, _reason(failed.name, error))
            stream = provider.chat_stream(messages, tools, system_prompt)
            try:
                async for chunk in stream:
                    yield chunk
            except ProviderError as exc:
                if not exc.retryable:
                    raise
                wait = exc.retry_after if exc.retry_after is not None else self.cooldown
                self._until[index] = self._clock() + wait
                failures.append((provider, exc))
                continue
            finally:
                close = getattr(stream, "aclose", None)
                if close is not None:
                    await close()
            self._until.pop(index, None)
            return
        raise _all_failed(failures)


def _all_failed(failures: list[tuple[LLMProvider, ProviderError]]) -> ProviderError:
    """One error naming every model and why it failed (the last one's class)."""
    last_provider, last = failures[-1]
    if len(failures) == 1:
        return last
    reasons = "; ".join(f"{provider.name}: {_reason(provider.name, error)}" for provider, error in failures)
    error = type(last)(
        f"every model failed — {reasons}",
        status=last.status,
        provider=last_provider.name,
        retry_after=last.retry_after,
    )
    error.__cause__ = last
    return error


def _reason(name: str, error: ProviderError) -> str:
    message = error.message
    prefix = f"{name}: "
    return message[len(prefix) :] if message.startswith(prefix) else message
