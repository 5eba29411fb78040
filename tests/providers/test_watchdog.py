"""The stream watchdog: a silent stream becomes a retryable timeout and is closed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence

import pytest

from tests.providers.conftest import VENDORS, drain, make_provider
from tests.waiting import eventually
from wyckoff_cli.core.errors import ProviderTimeout
from wyckoff_cli.core.messages import Message, ToolSpec
from wyckoff_cli.providers.base import Chunk, TextChunk
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.providers.watchdog import WatchdogProvider
from wyckoff_cli.testing.fake_server import FakeServer


@pytest.mark.parametrize("vendor", VENDORS)
async def test_stall_longer_than_the_watchdog(server: FakeServer, vendor: str) -> None:
    server.script({"text": "warm"}, {"text": "Before the stall.", "chunk_size": 5, "stall": 5})
    warm = make_provider(server, vendor)  # the SDK imported, outside the 0.3 s under test
    await drain(warm.chat_stream([Message.user("warm up")], [], ""))
    provider = make_provider(server, vendor, watchdog=True, stream_idle_timeout=0.3)
    seen: list[Chunk] = []
    stream = provider.chat_stream([Message.user("hi")], [], "")
    with pytest.raises(ProviderTimeout) as caught:
        async for chunk in stream:
            if not seen:
                first = time.monotonic()
            seen.append(chunk)
    assert time.monotonic() - first < 2.5  # the server stalls for 5 s
    assert caught.value.retryable and caught.value.kind == "timeout"
    assert "0.3 s" in caught.value.message
    assert "".join(c.text for c in seen if isinstance(c, TextChunk)) == "Before the stall."


class _Silent:
    """A provider whose stream goes silent; records whether it was closed."""

    name = "test:silent"

    def __init__(self) -> None:
        self.closed = False
        self.blocked = False  # inside the long silence

    def chat_stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> AsyncIterator[Chunk]:
        return self._stream()

    async def _stream(self) -> AsyncIterator[Chunk]:
        try:
            yield TextChunk("hi")
            self.blocked = True
            await asyncio.sleep(30)
            yield TextChunk("never")
        finally:
            self.closed = True

    async def chat(self, *args: object) -> object:
        raise NotImplementedError


async def test_the_inner_stream_is_closed_and_nothing_stays_blocked() -> None:
    inner = _Silent()
    guarded = WatchdogProvider(inner, 0.05)  # type: ignore[arg-type]
    with pytest.raises(ProviderTimeout):
        await drain(guarded.chat_stream([], [], ""))
    assert inner.closed
    pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert pending == []


async def test_a_slow_but_steady_stream_is_fine_and_attributes_pass_through() -> None:
    inner = ScriptedProvider([{"text": "abcdef", "chunk_size": 1, "delay": 0.02}])
    guarded = WatchdogProvider(inner, 0.5)
    chunks = await drain(guarded.chat_stream([Message.user("x")], [], ""))
    assert "".join(c.text for c in chunks if isinstance(c, TextChunk)) == "abcdef"
    assert guarded.name == "scripted:test"
    assert len(guarded.requests) == 1  # the scripted provider's own attribute


async def test_cancelling_the_consumer_closes_the_stream() -> None:
    inner = _Silent()
    guarded = WatchdogProvider(inner, 10)  # type: ignore[arg-type]

    async def consume() -> None:
        await drain(guarded.chat_stream([], [], ""))

    task = asyncio.create_task(consume())
    await eventually(lambda: inner.blocked, what="the stream to be blocked in its silence")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert inner.closed


@pytest.mark.parametrize("vendor", VENDORS)
async def test_closing_a_stream_early_closes_the_http_response(server: FakeServer, vendor: str) -> None:
    """What a cancelled turn does: the runtime closes the stream; the server sees the
    connection go away while it is still sending."""
    server.script({"text": "x" * 4000, "chunk_size": 4, "chars_per_second": 4000})
    stream = make_provider(server, vendor, watchdog=True).chat_stream([Message.user("hi")], [], "")
    first = await anext(stream)
    assert isinstance(first, TextChunk)
    await stream.aclose()  # type: ignore[attr-defined]
    await eventually(lambda: server.disconnects > 0, what="the server to see the connection go away")
    assert server.disconnects == 1
    assert server.completed == 0


async def test_the_scripted_providers_request_log_is_bounded() -> None:
    from wyckoff_cli.core.messages import Message
    from wyckoff_cli.providers.scripted import ScriptedProvider

    provider = ScriptedProvider([{"text": str(n)} for n in range(250)], keep_requests=100)
    history: list[Message] = []
    for n in range(250):
        history.append(Message.user(f"q{n}"))
        async for _ in provider.chat_stream(history, [], ""):
            pass
    assert provider.request_count == 250
    assert len(provider.requests) == 100
    assert (
        provider.requests[0].messages[-1].text == "q150" and provider.requests[-1].messages[-1].text == "q249"
    )
    unbounded = ScriptedProvider([{"text": "a"}, {"text": "b"}], keep_requests=None)
    for _ in range(2):
        async for _ in unbounded.chat_stream([], [], ""):
            pass
    assert len(unbounded.requests) == 2
    silent = ScriptedProvider([{"text": "a"}], keep_requests=0)
    async for _ in silent.chat_stream([], [], ""):
        pass
    assert silent.requests == [] and silent.request_count == 1
