"""Reading a streamed body ahead: what arrived together is taken together, in order."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from tests.waiting import eventually
from wyckoff_cli.providers.body_pump import BodyPump


async def test_pieces_read_while_the_reader_was_busy_come_as_one() -> None:
    async def body() -> AsyncIterator[bytes]:
        for piece in (b"a", b"b", b"c"):
            yield piece  # all in one network read: no wait between them

    pump = BodyPump(body())
    await eventually(lambda: pump._done, what="the body was read")
    assert await pump.take() == b"abc"
    assert await pump.take() is None
    await pump.aclose()


async def test_a_waiting_reader_gets_each_piece_as_it_arrives() -> None:
    gates = [asyncio.Event() for _ in range(3)]

    async def body() -> AsyncIterator[bytes]:
        for n, gate in enumerate(gates):
            await gate.wait()
            yield f"piece {n}".encode()

    pump = BodyPump(body())
    taken: list[bytes | None] = []
    for gate in gates:
        waiting = asyncio.ensure_future(pump.take())
        await asyncio.sleep(0)
        assert not waiting.done()  # nothing has arrived yet
        gate.set()
        taken.append(await waiting)
    assert taken == [b"piece 0", b"piece 1", b"piece 2"]
    assert await pump.take() is None


async def test_a_failure_is_raised_after_the_pieces_read_before_it() -> None:
    async def body() -> AsyncIterator[bytes]:
        yield b"kept"
        raise ConnectionResetError("peer closed")

    pump = BodyPump(body())
    assert await pump.take() == b"kept"
    with pytest.raises(ConnectionResetError, match="peer closed"):
        await pump.take()
    await pump.aclose()


async def test_closing_stops_a_body_that_never_ends() -> None:
    closed = asyncio.Event()

    async def body() -> AsyncIterator[bytes]:
        try:
            yield b"first"
            await asyncio.Event().wait()  # a silent server
            yield b"never"
        finally:
            closed.set()

    pump = BodyPump(body())
    assert await pump.take() == b"first"
    await pump.aclose()
    assert closed.is_set()
    assert pump._task.cancelled()
    await pump.aclose()  # idempotent


async def test_a_reader_cancelled_while_waiting_leaves_the_pump_usable_to_close() -> None:
    async def body() -> AsyncIterator[bytes]:
        await asyncio.Event().wait()
        yield b"never"

    pump = BodyPump(body())
    waiting = asyncio.ensure_future(pump.take())
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await pump.aclose()
    assert pump._task.done()
