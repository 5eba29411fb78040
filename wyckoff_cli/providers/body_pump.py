"""Reading a streamed HTTP body in its own task, so what arrived together is handled together.

A vendor sends one Server-Sent Event per HTTP chunk, and the SDKs' HTTP client (httpx,
httpcore, h11) hands each chunk up through about eight generator layers. Read directly,
every 4-character delta of a fast answer then went on, alone, through the adapter, the
retry and watchdog wrappers, the runtime, the session's events and the app: 20,000
times for an 80 KB answer. `BodyPump` reads the body in a task of its own and keeps
what it read; the adapter takes everything read since it last looked (`take()`), so a
fast stream is decoded in batches of whatever arrived in the meantime (coalesced into
one text chunk per batch), and a slow one still reaches the reader piece by piece, at
once: a waiting reader is woken by every piece.

A slow stream (under SLOW_RATE bytes a second, e.g. a model writing 50 deltas a second)
is read in gathers: after a piece it waited for, the task waits GATHER_SECONDS before
reading on, so what the server sent meanwhile is in the socket and comes up in one
network read, and `take()` returns at most one batch every GATHER_SECONDS (at once when
the last was longer ago: the first delta after a pause is not held). Each delta
otherwise went through the HTTP client's read (anyio, a timeout scope, an event-loop
wake-up) and the whole way to the app alone, 50 times a second; the app draws at most
10 frames a second anyway (docs/PERFORMANCE.md). A stream's first RATE_WINDOW is read
piece by piece (the first token is on screen as soon as before), a fast stream always
(its reads are full already), and no piece waits more than twice GATHER_SECONDS.

Order is kept (a failure while reading is raised after the pieces read before it), and
`aclose()` stops the task before the caller closes the response.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

__all__ = ["GATHER_SECONDS", "RATE_WINDOW", "SLOW_RATE", "BodyPump"]

GATHER_SECONDS = 0.05
"""How long a slow stream's reader waits after a piece before reading on (half a frame
of the app's clock); a delta is held at most twice this."""
SLOW_RATE = 64 * 1024
"""Bytes a second under which a stream counts as slow and is read in gathers (50 deltas a
second on the OpenAI wire are ~10 KB/s; a fast answer 1-4 MB/s)."""
RATE_WINDOW = 0.25
"""Seconds over which the rate is measured, from the first piece on: a stream's first
window is read piece by piece, and a change of pace is noticed within one window."""
WAITED = 0.002
"""A piece that took longer than this to come was waited for on the network."""


class BodyPump:
    """The pieces of `body`, read ahead by a task; `take()` returns them joined."""

    def __init__(self, body: AsyncIterator[bytes], gather: float = GATHER_SECONDS) -> None:
        self._gather = gather
        self._slow = False  # as the last RATE_WINDOW measured: the first is read piece by piece
        self._taken = 0.0  # when take() last returned pieces
        self._pieces: list[bytes] = []
        self._done = False
        self._error: Exception | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._loop = asyncio.get_running_loop()
        self._task = self._loop.create_task(self._read(body), name="wyckoff-http-body")

    async def _read(self, body: AsyncIterator[bytes]) -> None:
        clock = self._loop.time
        window: float | None = None  # the current window's start (its first piece)
        read = 0  # bytes in the current window
        last = clock()  # when the task last asked for a piece
        try:
            async for piece in body:
                self._pieces.append(piece)
                self._wake()
                now = clock()
                if window is None:
                    window = now
                read += len(piece)
                if now - window >= RATE_WINDOW:
                    self._slow = read < SLOW_RATE * (now - window)
                    window, read = now, 0
                # Waited: the piece came from the network, not from what one read brought
                # (those come microseconds apart): what comes next gathers meanwhile.
                if self._slow and self._gather and now - last > WAITED:
                    await asyncio.sleep(self._gather)
                last = clock()
        except Exception as exc:  # raised by take(), after the pieces read before it
            self._error = exc
        finally:
            self._done = True
            self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def take(self) -> bytes | None:
        """Everything read since the last call (waiting for the next piece when there is
        none yet), or None once the body has ended."""
        while not self._pieces:
            if self._done:
                error, self._error = self._error, None
                if error is not None:
                    raise error
                return None
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        if self._slow and self._gather:
            hold = self._taken + self._gather - self._loop.time()
            if hold > 0:  # a slow stream: at most one batch every GATHER_SECONDS
                await asyncio.sleep(hold)
        self._taken = self._loop.time()
        pieces = self._pieces
        data = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        pieces.clear()
        return data

    async def aclose(self) -> None:
        """Stop reading (idempotent); returns once the reading task has ended."""
        task = self._task
        if not task.done():
            task.cancel()
            await asyncio.wait([task])
