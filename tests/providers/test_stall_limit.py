"""The total wait for output is bounded (issue 27), and a waiting retry can be skipped to
the next fallback. Real SDKs against the fake server (a dead endpoint: `stall_before`),
short configured timeouts; what is asserted is how many attempts were made and what
the chunks and the error say, never how long anything took."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.providers.conftest import call, make_provider
from wyckoff_cli.core import errors
from wyckoff_cli.core.messages import Message, TextPart
from wyckoff_cli.providers.base import Chunk, FallbackChunk, LLMProvider, RetryChunk, TextChunk
from wyckoff_cli.providers.fallback import FallbackProvider
from wyckoff_cli.providers.retry import RetryingProvider, RetryPolicy
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.providers.watchdog import WatchdogProvider
from wyckoff_cli.testing.fake_server import FakeServer

DEAD = {"stall_before": 30}


class Sleeps(list[float]):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def retrying(server: FakeServer, vendor: str, **policy: Any) -> LLMProvider:
    inner = make_provider(server, vendor, watchdog=True, stream_idle_timeout=0.4)
    return RetryingProvider(inner, RetryPolicy(**policy), sleep=Sleeps(), rng=lambda: 1.0)


@pytest.fixture
def server() -> Any:
    with FakeServer() as running:
        yield running


@pytest.mark.parametrize("vendor", ["anthropic", "openai", "gemini", "openai-responses"])
async def test_a_dead_endpoint_is_given_up_within_the_stall_limit(server: FakeServer, vendor: str) -> None:
    """Five attempts of a 0.4 s watchdog would wait 2 s; the 1 s total cuts them short
    (how many fit depends on the machine; fewer than five always)."""
    server.script({"text": "warm"}, DEAD, DEAD, DEAD, DEAD, DEAD)  # the SDK imported and warm first
    provider = retrying(server, vendor, attempts=5, initial_delay=0.1, stall_limit=1.0)
    await call(provider)
    chunks: list[Chunk] = []
    with pytest.raises(errors.ProviderTimeout) as raised:
        async for chunk in provider.chat_stream([Message.user("hi")], [], "sys"):
            chunks.append(chunk)
    dead_requests = len(server.requests) - 1
    assert 1 <= dead_requests < 5
    retries = [c for c in chunks if isinstance(c, RetryChunk)]
    assert len(retries) == dead_requests - 1
    assert all(r.limit == 1.0 and r.waited + r.delay < 1.0 for r in retries)  # none started past it
    assert "stream_stall_limit" in str(raised.value)


async def test_without_a_stall_limit_every_attempt_is_made(server: FakeServer) -> None:
    server.script({"text": "warm"}, DEAD, DEAD, DEAD, DEAD, DEAD)
    provider = retrying(server, "anthropic", attempts=5, initial_delay=0.1, stall_limit=0)
    await call(provider)
    with pytest.raises(errors.ProviderTimeout, match="after 5 attempts"):
        await call(provider)
    assert len(server.requests) == 6


async def test_output_is_not_counted_against_the_stall_limit(server: FakeServer) -> None:
    """An attempt that streamed text and then failed is a failure, not a stall: the
    retry still comes, and its answer is the whole answer."""
    server.script({"text": "warm"}, {"text": "Part", "midstream_error": True}, {"text": "Whole answer."})
    provider = retrying(server, "anthropic", attempts=3, initial_delay=0.1, stall_limit=0.3)
    await call(provider)  # the SDK imported and warm first: a slow first parse is no stall
    parts, _, chunks = await call(provider)
    assert parts == [TextPart("Whole answer.")] and len(server.requests) - 1 == 2
    retry = next(c for c in chunks if isinstance(c, RetryChunk))
    assert retry.waited == 0 and retry.limit == 0.3


def stalling_then(
    fallback_text: str, *, next_model: bool = True
) -> tuple[FallbackProvider, ScriptedProvider]:
    """A model whose every attempt stalls (watchdog 0.2 s) and whose retry waits 600 s,
    then (optionally) a fallback that answers."""
    stalls = ScriptedProvider([{"stall": 600}] * 3, model="scripted:stalls")
    first = RetryingProvider(
        WatchdogProvider(stalls, 0.2),
        RetryPolicy(attempts=3, initial_delay=600, max_delay=600, stall_limit=0),
    )
    second = ScriptedProvider([{"text": fallback_text}], model="scripted:fallback")
    return FallbackProvider([first, second] if next_model else [first]), second


async def next_retry(stream: AsyncIterator[Chunk], seen: list[Chunk]) -> RetryChunk:
    async for chunk in stream:
        seen.append(chunk)
        if isinstance(chunk, RetryChunk):
            return chunk
    raise AssertionError("no retry")


async def test_a_waiting_retry_is_skipped_to_the_next_model() -> None:
    chain, second = stalling_then("from the fallback")
    assert chain.skip_waiting() is None  # nothing waits yet
    stream = chain.chat_stream([Message.user("hi")], [], "sys")
    seen: list[Chunk] = []
    retry = await next_retry(stream, seen)
    assert retry.fallback == "scripted:fallback"  # the host can say what Esc does
    rest = asyncio.ensure_future(_drain(stream))
    await _until(lambda: chain.skip_waiting() == "scripted:fallback")
    after = await asyncio.wait_for(rest, 30)
    switch = next(c for c in after if isinstance(c, FallbackChunk))
    assert (switch.from_model, switch.to_model) == ("scripted:stalls", "scripted:fallback")
    assert "skipped" in switch.error
    assert [c.text for c in after if isinstance(c, TextChunk)] == ["from the fallback"]
    assert len(second.requests) == 1
    assert chain.cooling_down() == ["scripted:stalls"]  # the next round starts with the fallback


async def test_without_a_next_model_nothing_is_skipped() -> None:
    chain, _ = stalling_then("never", next_model=False)
    stream = chain.chat_stream([Message.user("hi")], [], "sys")
    retry = await next_retry(stream, [])
    assert retry.fallback is None
    waiting = asyncio.ensure_future(_drain(stream))
    await asyncio.sleep(0)
    assert chain.skip_waiting() is None  # Esc then interrupts, as before
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await stream.aclose()  # type: ignore[attr-defined]


async def _drain(stream: AsyncIterator[Chunk]) -> list[Chunk]:
    return [chunk async for chunk in stream]


async def _until(predicate: Any, timeout: float = 20) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.01)


def test_one_attempt_may_always_stay_silent_as_long_as_the_watchdog_allows(server: FakeServer) -> None:
    """A raised `stream_idle_timeout` (a model that thinks for minutes before its first
    token) is never cut by a smaller `stream_stall_limit`."""
    provider = make_provider(
        server, "anthropic", watchdog=True, stream_idle_timeout=300, retry=RetryPolicy(stall_limit=90)
    )
    assert isinstance(provider, RetryingProvider) and provider.policy.stall_limit == 300
    default = make_provider(server, "anthropic", watchdog=True, retry=RetryPolicy())
    assert isinstance(default, RetryingProvider) and default.policy.stall_limit == 90
