"""The stream watchdog: a model call silent for too long becomes a retryable timeout.

A half-open TCP connection can leave an SDK waiting forever. `WatchdogProvider` wraps
any provider: if no chunk arrives for `idle_timeout` seconds (60 by default, config
`stream_idle_timeout`), it closes the inner stream (which closes the HTTP response) and
raises `ProviderTimeout`, which a fallback chain treats like any retryable failure.
Everything runs on the event loop (`asyncio.timeout` per chunk): no thread is left
blocked behind a dead socket.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

from wyckoff_cli.core.errors import ProviderTimeout
from wyckoff_cli.core.messages import Message, ToolSpec
from wyckoff_cli.providers.base import Chunk, LLMProvider, WrappingProvider

DEFAULT_IDLE_TIMEOUT = 60.0


class WatchdogProvider(WrappingProvider):
    """`inner` with an idle timeout on its stream. Other attributes pass through."""

    def __init__(self, inner: LLMProvider, idle_timeout: float = DEFAULT_IDLE_TIMEOUT) -> None:
        self.inner = inner
        self.idle_timeout = float(idle_timeout)

    def __repr__(self) -> str:
        return f"WatchdogProvider({self.inner!r}, idle_timeout={self.idle_timeout})"

    def chat_stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> AsyncIterator[Chunk]:
        return self._guard(self.inner.chat_stream(messages, tools, system_prompt))

    async def _guard(self, stream: AsyncIterator[Chunk]) -> AsyncIterator[Chunk]:
        timeout = self.idle_timeout
        try:
            if timeout <= 0:
                async for chunk in stream:
                    yield chunk
                return
            async for chunk in self._timed(stream, timeout):
                yield chunk
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()

    async def _timed(self, stream: AsyncIterator[Chunk], timeout: float) -> AsyncIterator[Chunk]:
        """One re-armed timer for the whole stream instead of a timeout scope per chunk
        (cheap for 20,000 deltas): it cancels the waiting task only while the stream is
        being awaited, never while a chunk is with the consumer."""
        loop = asyncio.get_running_loop()
        clock = _Clock(loop, timeout)
        try:
            while True:
                task = asyncio.current_task()
                assert task is not None
                cancelling = task.cancelling()
                clock.wait(task)
                try:
                    chunk = await anext(stream)
                except StopAsyncIteration:
                    return
                except asyncio.CancelledError:
                    if clock.fired and task.uncancel() <= cancelling:
                        raise ProviderTimeout(
                            f"{self.name}: no data from the model for {timeout:g} s; the stream was "
                            "closed (stream_idle_timeout in config.toml sets this limit)",
                            provider=self.name,
                        ) from None
                    raise
                finally:
                    clock.waiting = None
                yield chunk
        finally:
            clock.stop()


class _Clock:
    """Fires when one wait for the next chunk has lasted `timeout` seconds."""

    def __init__(self, loop: asyncio.AbstractEventLoop, timeout: float) -> None:
        self.loop = loop
        self.timeout = timeout
        self.waiting: asyncio.Task[Any] | None = None
        self.since = 0.0
        self.fired = False
        self._handle: asyncio.TimerHandle | None = None

    def wait(self, task: asyncio.Task[Any]) -> None:
        self.waiting = task
        self.since = self.loop.time()
        if self._handle is None:
            self._handle = self.loop.call_at(self.since + self.timeout, self._check)

    def _check(self) -> None:
        self._handle = None
        task = self.waiting
        if task is None:  # the consumer has the chunk; the next wait re-arms the timer
            return
        due = self.since + self.timeout
        if self.loop.time() >= due:
            self.fired = True
            task.cancel()
        else:
            self._handle = self.loop.call_at(due, self._check)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
