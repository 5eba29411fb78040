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

Order is kept (a failure while reading is raised after the pieces read before it), and
`aclose()` stops the task before the caller closes the response.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

__all__ = ["BodyPump"]


class BodyPump:
    """The pieces of `body`, read ahead by a task; `take()` returns them joined."""

    def __init__(self, body: AsyncIterator[bytes]) -> None:
        self._pieces: list[bytes] = []
        self._done = False
        self._error: Exception | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._loop = asyncio.get_running_loop()
        self._task = self._loop.create_task(self._read(body), name="wyckoff-http-body")

    async def _read(self, body: AsyncIterator[bytes]) -> None:
        try:
            async for piece in body:
                self._pieces.append(piece)
                self._wake()
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
