"""Reading a streamed body ahead: what arrived together is taken together, in order."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from tests.waiting import eventually
from wyckoff_cli.providers import body_pump
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


def server_writing(pieces: list[bytes], every: float) -> AsyncIterator[bytes]:
    """A body as the HTTP client gives it: the server writes a piece every `every`
    seconds (the second a while after the first) whether or not it is read; a read
    returns what has arrived, piece by piece."""
    arrived: asyncio.Queue[bytes | None] = asyncio.Queue()

    async def write() -> None:
        for n, piece in enumerate(pieces):
            await asyncio.sleep(0.05 if n == 1 else every)
            arrived.put_nowait(piece)
        arrived.put_nowait(None)

    async def body() -> AsyncIterator[bytes]:
        writer = asyncio.ensure_future(write())
        while (piece := await arrived.get()) is not None:
            yield piece
        await writer

    return body()


async def taken_from(pump: BodyPump) -> list[bytes]:
    taken: list[bytes] = []
    while (data := await pump.take()) is not None:
        taken.append(data)
    return taken


async def test_a_slow_stream_is_taken_in_gathers_after_its_first_piece(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(body_pump, "RATE_WINDOW", 0.02)  # judged slow after 20 ms, not 250
    pieces = [f"delta {n};".encode() for n in range(30)]
    pump = BodyPump(server_writing(pieces, every=0.005), gather=0.05)  # ~2 KB/s
    taken = await taken_from(pump)
    assert taken[0] == pieces[0]  # the first delta is not held
    assert b"".join(taken) == b"".join(pieces)  # every piece, in order
    assert len(taken) < len(pieces) // 3  # the rest came several at a time
