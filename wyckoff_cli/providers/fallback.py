"""Fallback across models: the default first, then the configured fallbacks in order.

`FallbackProvider` switches only on retryable failures (rate limits, timeouts, network
and server errors) — after the model's own retries (`providers.retry`) ran out. A
model that just failed is skipped for `cooldown` seconds, or for as long as its
`retry-after` asked, so a rate-limited default is not hit again every round. When a
switch happens after output began, a `FallbackChunk` tells the runtime to drop what
the failed attempt streamed (the UI removes it; nothing is duplicated in history) and
names the new model. Authentication, bad-request and configuration errors are raised
at once. When every model fails, the error names each model and why it failed.

While a model's retries wait (after a `RetryChunk`, until output comes), the host may
skip it: `skip_waiting()` (Esc in the app) closes that model's attempt at once and the
next model takes over, as after a failure (the skipped model cools down). Each
`RetryChunk` passing through names that next model (`fallback`), so the host can say
what Esc would do.

History crosses vendors through the neutral message model: each adapter converts the
whole history on every call, dropping other vendors' thinking blocks and keeping tool
calls and results.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from typing import Any

from wyckoff_cli.core.errors import ProviderError, ProviderTimeout
from wyckoff_cli.core.messages import Message, ToolSpec
from wyckoff_cli.providers.base import (
    Chunk,
    FallbackChunk,
    LLMProvider,
    RetryChunk,
    ServerToolChunk,
    StreamingProvider,
    TextChunk,
    ThinkingChunk,
    ToolCallChunk,
)
from wyckoff_cli.providers.preload import warm_up

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
        self._waits: list[_RetryWait] = []  # the calls whose model is waiting to retry now

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

    def warm_up(self) -> None:
        """The first-request work of the model the next call starts with (`preload.warm_up`)."""
        warm_up(self._order()[0][1])

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

    def skip_waiting(self) -> str | None:
        """Skip the model whose retries a call is waiting on (after a retry, before any
        output) to the next one: the name of the model that takes over, or None when no
        call waits so or no model follows."""
        for wait in self._waits:
            if wait.retrying and wait.next_model is not None and wait.task is not None:
                wait.skipped = True
                wait.task.cancel()
                return wait.next_model
        return None

    def chat_stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> AsyncIterator[Chunk]:
        return self._stream(tuple(messages), tuple(tools), system_prompt)

    async def _stream(
        self, messages: tuple[Message, ...], tools: tuple[ToolSpec, ...], system_prompt: str
    ) -> AsyncIterator[Chunk]:
        order = self._order()
        failures: list[tuple[LLMProvider, ProviderError]] = []
        for position, (index, provider) in enumerate(order):
            if failures:
                failed, error = failures[-1]
                yield FallbackChunk(failed.name, provider.name, error.reason(failed.name))
            stream = provider.chat_stream(messages, tools, system_prompt)
            following = order[position + 1][1].name if position + 1 < len(order) else None
            attempt = _RetryWait(following)
            self._waits.append(attempt)
            watched = attempt.watch(stream, provider.name)
            try:
                async for chunk in watched:
                    yield chunk
            except ProviderError as exc:
                if not exc.retryable:
                    raise
                wait = exc.retry_after if exc.retry_after is not None else self.cooldown
                self._until[index] = self._clock() + wait
                failures.append((provider, exc))
                continue
            finally:
                self._waits.remove(attempt)
                await watched.aclose()
                close = getattr(stream, "aclose", None)
                if close is not None:
                    await close()
            self._until.pop(index, None)
            return
        raise _all_failed(failures)


class _RetryWait:
    """One model's attempt within a call: whether its retries wait now (a retry seen,
    no output since) and the task awaiting it, so `skip_waiting` can close it."""

    def __init__(self, next_model: str | None) -> None:
        self.next_model = next_model
        self.retrying = False
        self.skipped = False
        self.task: asyncio.Task[Any] | None = None

    async def watch(self, stream: AsyncIterator[Chunk], model: str) -> AsyncGenerator[Chunk, None]:
        while True:
            task = asyncio.current_task()
            cancelling = task.cancelling() if task is not None else 0
            self.task = task
            try:
                chunk = await anext(stream)
            except StopAsyncIteration:
                return
            except asyncio.CancelledError:
                if self.skipped and task is not None and task.uncancel() <= cancelling:
                    raise ProviderTimeout(
                        f"{model}: skipped while waiting to retry (Esc)", provider=model
                    ) from None
                raise
            finally:
                self.task = None
            if isinstance(chunk, RetryChunk):
                self.retrying = True
                chunk = dataclasses.replace(chunk, fallback=self.next_model)
            elif isinstance(chunk, TextChunk | ThinkingChunk | ToolCallChunk | ServerToolChunk):
                self.retrying = False
            yield chunk


def _all_failed(failures: list[tuple[LLMProvider, ProviderError]]) -> ProviderError:
    """One error naming every model and why it failed (the last one's class)."""
    last_provider, last = failures[-1]
    if len(failures) == 1:
        return last
    reasons = "; ".join(f"{provider.name}: {error.reason(provider.name)}" for provider, error in failures)
    error = type(last)(
        f"every model failed — {reasons}",
        status=last.status,
        provider=last_provider.name,
        retry_after=last.retry_after,
    )
    error.__cause__ = last
    return error
