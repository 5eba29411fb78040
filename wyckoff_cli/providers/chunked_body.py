"""A streamed HTTP/1.1 body read straight from its connection, its chunks undone here.

A vendor streams one Server-Sent Event per HTTP chunk: 20,000 chunks for an 80 KB
answer. The SDKs' HTTP client hands each one up alone, through h11's chunk reader and
state machine, httpcore's and httpx's generators and httpx's byte chunker — about 12 µs
of the event loop a chunk, more than decoding the event — and each read of the socket
through anyio costs a cancel scope for its timeout and two changes of the event loop's
watch on the socket (anyio stops reading between reads). `chunked_body(response)` takes
the response once its headers are in (the SDK built, authenticated and sent the request
and checked the status, as before) and receives the rest of the body itself, as the
connection's protocol: what arrives is kept as it arrives, its chunk framing removed in
one pass when the reader takes it (`take()`, everything since the last take), and the
reader is woken directly, with no task or timer per read.

The connection is given back as the HTTP client would leave it: its own protocol is put
back, the final zero-size chunk and any trailers are handed to h11, which sees the
message end, so the connection is kept alive for the next request; a body closed early
closes the connection, as before. Network failures and the read timeout (the time the
SDK allows between two arrivals) are raised as the HTTP client's own (`httpx2`) errors,
and framing the client would refuse is refused the same way.

This reaches into the HTTP client's objects (`httpcore2`, `h11`, anyio's socket stream
on an asyncio transport): it is taken only when they are exactly as expected — a chunked
body without a content encoding, on an HTTP/1.1 connection whose reader has not started
on the body, over a live transport that can change protocols — and otherwise `None` is
returned and the response is read through `aiter_bytes()` as before.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

__all__ = ["ChunkedBody", "chunked_body"]

_LONGEST_HEADER = 1024  # a chunk-size line longer than this is not one
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}[ \t]*(?:;[^\r\n]*)?")
HIGH_WATER = 4 * 1024 * 1024
"""Bytes kept unread before the connection stops reading until the reader catches up."""
_INCOMPLETE = "peer closed connection without sending complete message body (incomplete chunked read)"


def chunked_body(response: Any) -> ChunkedBody | None:
    """The body of `response` (an `httpx2.Response` whose body is not read yet), read as
    described above, or None when this response is not one this reads."""
    headers = response.headers
    if headers.get("transfer-encoding", "").lower() != "chunked":
        return None
    if headers.get("content-encoding", "identity").lower() != "identity":
        return None
    try:
        import h11
        from h11._receivebuffer import ReceiveBuffer

        connection = response.stream._stream._httpcore_stream._stream._connection
        state = connection._h11_state
        stream = connection._network_stream._stream  # anyio's SocketStream
        transport, protocol = stream._transport, stream._protocol
        reader = state._reader
        buffered = state._receive_buffer
        queued = protocol.read_queue
    except (AttributeError, ImportError):
        return None
    fresh = (
        type(reader).__name__ == "ChunkedReader"
        and not reader._bytes_in_chunk
        and not reader._bytes_to_discard
        and not reader._reading_trailer
    )
    if not fresh or state.their_state is not h11.SEND_BODY or type(buffered) is not ReceiveBuffer:
        return None
    live = (
        isinstance(transport, asyncio.Transport)
        and not transport.is_closing()
        and not protocol.is_at_eof
        and protocol.exception is None
        and transport.get_protocol() is protocol
    )
    if not live:
        return None
    leftover = bytes(buffered) + b"".join(queued)
    queued.clear()
    protocol.read_event.clear()
    state._receive_buffer = ReceiveBuffer()
    timeout = response.request.extensions.get("timeout", {}).get("read")
    return ChunkedBody(state, transport, protocol, leftover, timeout, response.request)


class ChunkedBody(asyncio.Protocol):
    """The connection's protocol while its body is read: `take()` returns the body bytes
    that arrived since the last call (waiting for more when there are none), None once
    the body has ended; `aclose()` gives the connection back (idempotent)."""

    def __init__(
        self,
        state: Any,
        transport: asyncio.Transport,
        protocol: Any,
        leftover: bytes,
        timeout: float | None,
        request: Any,
    ) -> None:
        self._state = state  # h11's connection state, given the body's end
        self._transport = transport
        self._protocol = protocol  # anyio's, put back when the body is done
        self._request = request
        self._timeout = timeout
        self._dechunker = _Dechunker()
        self._arrived: list[bytes] = [leftover] if leftover else []
        self._size = len(leftover)
        self._lost = False  # the connection ended (EOF, or `_failure`)
        self._failure: Exception | None = None
        self._paused = False
        self._done = False
        self._waiter: asyncio.Future[None] | None = None
        self._loop = asyncio.get_running_loop()
        self._last = self._loop.time()  # when something last arrived
        self._timer: asyncio.TimerHandle | None = None
        self._waiting_since = self._last  # when the reader last began to wait
        transport.set_protocol(self)
        transport.resume_reading()  # anyio stops reading between its reads

    # -- the protocol (called by the transport) --------------------------------------

    def data_received(self, data: bytes) -> None:
        self._arrived.append(bytes(data))
        self._size += len(data)
        self._last = self._loop.time()
        if self._size > HIGH_WATER and not self._paused:
            self._paused = True
            self._transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self._lost = True
        self._protocol.eof_received()
        self._wake()
        return True  # as anyio's: the connection's closing is left to the HTTP client

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        if exc is not None and self._failure is None:
            self._failure = _error("ReadError", str(exc) or type(exc).__name__, self._request)
        self._protocol.connection_lost(exc)  # anyio's stream sees the end too
        self._wake()

    def pause_writing(self) -> None:
        self._protocol.pause_writing()

    def resume_writing(self) -> None:
        self._protocol.resume_writing()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- the reader -------------------------------------------------------------------

    async def take(self) -> bytes | None:
        """The body bytes since the last call; None once the body has ended."""
        while not self._done:
            data = await self._next()
            try:
                piece = self._dechunker.feed(data)
            except ValueError as exc:
                self._give_back()
                raise _error("RemoteProtocolError", str(exc), self._request) from None
            if self._dechunker.ending is not None:
                await self._finish()
            if piece:
                return piece
        return None

    async def _next(self) -> bytes:
        """What arrived since the last call (waiting for it, the connection reading again
        if it stopped at `HIGH_WATER`); the failure once the connection ended first."""
        while not self._arrived:
            if self._lost:
                self._give_back()
                raise self._failure or _error("RemoteProtocolError", _INCOMPLETE, self._request)
            await self._wait()
        data = self._arrived[0] if len(self._arrived) == 1 else b"".join(self._arrived)
        self._arrived.clear()
        self._size = 0
        if self._paused:
            self._paused = False
            self._transport.resume_reading()
        return data

    async def _wait(self) -> None:
        """Until something arrives, the connection ends, or the read timeout passes."""
        self._waiter = self._loop.create_future()
        self._waiting_since = self._loop.time()
        if self._timeout is not None and self._timer is None:
            self._timer = self._loop.call_at(self._deadline(), self._check_timeout)
        try:
            await self._waiter
        finally:
            self._waiter = None

    def _check_timeout(self) -> None:
        # One timer for the whole body: it fires at the deadline it knew of, and is armed
        # again while later arrivals (or a later wait) moved the deadline on.
        self._timer = None
        if self._done or self._timeout is None:
            return
        deadline = self._deadline()
        if self._loop.time() < deadline:
            self._timer = self._loop.call_at(deadline, self._check_timeout)
        elif self._waiter is not None:
            self._lost = True
            self._failure = _error("ReadTimeout", "timed out reading the response body", self._request)
            self._wake()

    def _deadline(self) -> float:
        """The read timeout from the later of the last arrival and the start of this wait
        (as the HTTP client times each read: a reader busy elsewhere is not the network's
        silence)."""
        return max(self._last, self._waiting_since) + (self._timeout or 0.0)

    async def _finish(self) -> None:
        """Hand the last chunk and the trailers to h11 until it sees the message end, so
        the connection is reused as if h11 had read the whole body."""
        import h11

        ending = self._dechunker.ending or b""
        self._dechunker.ending = b""
        state = self._state
        state.receive_data(ending)
        while True:
            try:
                event = state.next_event()
            except h11.ProtocolError as exc:
                self._give_back()
                raise _error("RemoteProtocolError", str(exc), self._request) from exc
            if isinstance(event, h11.EndOfMessage) or event is h11.PAUSED:
                self._give_back()
                return
            if event is h11.NEED_DATA:
                state.receive_data(await self._next())

    def _give_back(self) -> None:
        """The connection to the HTTP client, reading paused as anyio keeps it between
        reads; what arrived after the body is anyio's to read."""
        if self._done:
            return
        self._done = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        transport, protocol = self._transport, self._protocol
        if not transport.is_closing():
            transport.pause_reading()
        transport.set_protocol(protocol)
        if self._arrived:  # past the message's end: the next response's, for anyio
            for data in self._arrived:
                protocol.data_received(data)
            self._arrived.clear()

    async def aclose(self) -> None:
        """Stop reading: the connection goes back to the HTTP client, which closes it if
        the body was not read to its end."""
        self._give_back()


def _error(kind: str, message: str, request: Any) -> Exception:
    import httpx2

    error: Exception = getattr(httpx2, kind)(message, request=request)
    return error


class _Dechunker:
    """Chunked transfer coding undone across reads: `feed(data)` returns the body bytes
    in `data` (with what was kept from before), `ValueError` for bad framing; `ending`
    is set to the bytes from the zero-size chunk on (the trailers and the message's end,
    for h11)."""

    def __init__(self) -> None:
        self._tail = b""  # an incomplete chunk-size line or chunk end, kept for the next read
        self._remaining = 0  # body bytes still to come in the current chunk
        self._crlf = False  # the current chunk's data is done; its CRLF is next
        self.ending: bytes | None = None

    def feed(self, data: bytes) -> bytes:
        if self._tail:
            data, self._tail = self._tail + data, b""
        pieces: list[bytes] = []
        position, size = 0, len(data)
        while position < size:
            if self._remaining:
                end = min(size, position + self._remaining)
                pieces.append(data[position:end])
                self._remaining -= end - position
                self._crlf = not self._remaining
                position = end
                continue
            if self._crlf:
                if size - position < 2:
                    break
                if data[position : position + 2] != b"\r\n":
                    raise ValueError(f"malformed chunk footer: {data[position : position + 2]!r}")
                self._crlf = False
                position += 2
                continue
            line_end = data.find(b"\r\n", position, position + _LONGEST_HEADER)
            if line_end < 0:
                if size - position >= _LONGEST_HEADER:
                    raise ValueError("illegal chunk header: no end of line")
                break
            header = data[position:line_end]
            if not _CHUNK_SIZE.fullmatch(header):
                raise ValueError(f"illegal chunk header: {header[:40]!r}")
            length = int(header.split(b";", 1)[0].strip(), 16)
            if not length:
                self.ending = data[position:]
                return b"".join(pieces)
            self._remaining = length
            position = line_end + 2
        self._tail = data[position:]
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)
