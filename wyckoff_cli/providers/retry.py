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
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from wyckoff_cli.core.errors import ProviderError
from wyckoff_cli.core.messages import Message, ToolSpec
from wyckoff_cli.providers.base import Chunk, LLMProvider, RetryChunk, WrappingProvider

DEFAULT_ATTEMPTS = 3
DEFAULT_INITIAL_DELAY = 1.0
DEFAULT_MAX_DELAY = 30.0


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """`attempts` in all (1 turns retries off); waits from `initial_delay`, at most `max_delay`."""

    attempts: int = DEFAULT_ATTEMPTS
    initial_delay: float = DEFAULT_INITIAL_DELAY
    max_delay: float = DEFAULT_MAX_DELAY

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
    ) -> None:
        self.inner = inner
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._rng = rng

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
        attempt = 1
        while True:
            failure: ProviderError | None = None
            stream = self.inner.chat_stream(messages, tools, system_prompt)
            try:
                async for chunk in stream:
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
            delay = self.policy.delay(attempt, failure.retry_after, self._rng)
            if attempt >= attempts or delay is None:
                raise _after(failure, attempt, delay is None)
            attempt += 1
            yield RetryChunk(self.name, attempt, attempts, delay, failure.reason(self.name))
            await self._sleep(delay)


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
