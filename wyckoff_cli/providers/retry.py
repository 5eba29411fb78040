"""Retries on the same model, before any fallback: exponential backoff with jitter.

`RetryingProvider` wraps one model's provider (outside its watchdog). A retryable
failure — rate limit, overload, 5xx, a mid-stream error, a dropped connection, a stall
caught by the watchdog, a stream that ended without its end marker — is tried again
after a wait, up to `attempts` attempts in all (3 by default). The wait doubles from
`initial_delay` with jitter (each wait is 50-100 % of its step), capped at
`max_delay`; a `retry-after` / `retry-after-ms` the vendor sent is honoured instead,
unless it is longer than `max_delay`: then waiting here would freeze the turn, so the
error goes on at once to the fallback chain (whose cool-down honours it).

Before each retry the stream carries a `RetryChunk` (the runtime shows "retrying in
N s (attempt k of n)" and drops what the failed attempt streamed, as for a fallback).
Errors that are not retryable (authentication, bad request, context too long,
configuration) are raised at once, never swallowed.

The total wait for output is bounded by `stall_limit` (config `stream_stall_limit`,
90 s by default): the seconds spent in attempts that produced no output (text,
thinking, a tool call) plus the waits between attempts. A retry that would start past
it is not made, and an attempt still without output when it runs out is closed, so a
dead endpoint (every attempt silent until the watchdog) is given up after about
`stall_limit` seconds, not `attempts` × `stream_idle_timeout`; the error then goes to
the fallback chain. Each `RetryChunk` says how long the call has waited, of what.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from wyckoff_cli.core.errors import ProviderError, ProviderTimeout
from wyckoff_cli.core.messages import Message, ToolSpec
from wyckoff_cli.providers.base import (
    Chunk,
    LLMProvider,
    RetryChunk,
    ServerToolChunk,
    TextChunk,
    ThinkingChunk,
    ToolCallChunk,
    WrappingProvider,
)

DEFAULT_ATTEMPTS = 3
DEFAULT_INITIAL_DELAY = 1.0
DEFAULT_MAX_DELAY = 30.0
DEFAULT_STALL_LIMIT = 90.0


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """`attempts` in all (1 turns retries off); waits from `initial_delay`, at most
    `max_delay`; at most `stall_limit` seconds waiting for output over all attempts
    (0: no bound but the attempts)."""

    attempts: int = DEFAULT_ATTEMPTS
    initial_delay: float = DEFAULT_INITIAL_DELAY
    max_delay: float = DEFAULT_MAX_DELAY
    stall_limit: float = DEFAULT_STALL_LIMIT

    def delay(self, attempt: int, retry_after: float | None, rng: Callable[[], float]) -> float | None:
        """The wait before attempt `attempt + 1`, or None when the vendor asked for a
        longer wait than `max_delay` (give up here, let the fallback take over)."""
        if retry_after is not None:
            return float(retry_after) if retry_after <= self.max_delay else None
        step: float = min(self.max_delay, self.initial_delay * 2.0 ** (attempt - 1))
        return round(step * (0.5 + rng() / 2), 3)


class RetryingProvider(WrappingProvider):
    """`inner` retried per `policy`. Other attributes pass through."""

    def __init__(
        self,
        inner: LLMProvider,
        policy: RetryPolicy | None = None,
        *,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        rng: Callable[[], float] = random.random,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.inner = inner
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._rng = rng
        self._clock = clock

    def __repr__(self) -> str:
        return f"RetryingProvider({self.inner!r}, attempts={self.policy.attempts})"

    def chat_stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> AsyncIterator[Chunk]:
        return self._stream(tuple(messages), tuple(tools), system_prompt)

    async def _stream(
        self, messages: tuple[Message, ...], tools: tuple[ToolSpec, ...], system_prompt: str
    ) -> AsyncIterator[Chunk]:
        attempts = max(1, self.policy.attempts)
        limit = self.policy.stall_limit if self.policy.stall_limit > 0 else None
        waited = 0.0  # seconds spent waiting for output: silent attempts and the waits between
        attempt = 1
        while True:
            failure: ProviderError | None = None
            started = self._clock()
            attempt_output = _Output()
            stream = self.inner.chat_stream(messages, tools, system_prompt)
            try:
                async for chunk in self._bounded(stream, limit, waited, attempt_output):
                    yield chunk
            except ProviderError as exc:
                if not exc.retryable:
                    raise
                failure = exc
            finally:
                close = getattr(stream, "aclose", None)
                if close is not None:
                    await close()
            if failure is None:
                return
            if not attempt_output.seen:
                waited += self._clock() - started
            delay = self.policy.delay(attempt, failure.retry_after, self._rng)
            if attempt >= attempts or delay is None:
                raise _after(failure, attempt, delay is None)
            if limit is not None and waited + delay >= limit:
                raise _stalled(failure, attempt, waited, limit)
            attempt += 1
            yield RetryChunk(
                self.name, attempt, attempts, delay, failure.reason(self.name), round(waited, 1), limit
            )
            await self._sleep(delay)
            waited += delay

    async def _bounded(
        self, stream: AsyncIterator[Chunk], limit: float | None, waited: float, output: _Output
    ) -> AsyncIterator[Chunk]:
        """`stream`, closed with a timeout when it is still without output once the
        call has waited `limit` seconds in all."""
        if limit is None:
            async for chunk in stream:
                output.see(chunk)
                yield chunk
            return
        remaining = max(0.0, limit - waited)
        started = self._clock()
        while True:
            scope: asyncio.Timeout | None = None
            try:
                if output.seen:
                    chunk = await anext(stream)
                else:
                    scope = asyncio.timeout(max(0.0, remaining - (self._clock() - started)))
                    async with scope:
                        chunk = await anext(stream)
            except StopAsyncIteration:
                return
            except TimeoutError:
                if scope is None or not scope.expired():
                    raise
                raise ProviderTimeout(
                    f"{self.name}: no output after waiting {limit:g} s in all (stream_stall_limit); "
                    "the stream was closed",
                    provider=self.name,
                ) from None
            output.see(chunk)
            yield chunk
            if output.seen:  # the limit is off for the rest of the stream: pass it straight on
                async for chunk in stream:
                    yield chunk
                return


class _Output:
    """Whether an attempt produced output (text, thinking, a tool call, a server tool)."""

    seen = False

    def see(self, chunk: Chunk) -> None:
        if not self.seen and isinstance(chunk, TextChunk | ThinkingChunk | ToolCallChunk | ServerToolChunk):
            self.seen = True


def _stalled(error: ProviderError, attempts: int, waited: float, limit: float) -> ProviderError:
    """The last error, saying the total wait ran out (same class, same retry_after)."""
    note = (
        f" (waited {waited:.0f} s for output over {attempts} attempt(s); stream_stall_limit is {limit:g} s)"
    )
    again = type(error)(
        error.message + note, status=error.status, provider=error.provider, retry_after=error.retry_after
    )
    again.__cause__ = error
    return again


def _after(error: ProviderError, attempts: int, asked_longer: bool) -> ProviderError:
    """The last error, saying how often it was tried (same class, same retry_after)."""
    if asked_longer:
        note = f" (the server asked to wait {error.retry_after:g} s; not retried here)"
    elif attempts > 1:
        note = f" (after {attempts} attempts)"
    else:
        return error
    again = type(error)(
        error.message + note, status=error.status, provider=error.provider, retry_after=error.retry_after
    )
    again.__cause__ = error
    return again
