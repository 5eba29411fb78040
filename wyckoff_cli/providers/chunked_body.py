"""A streamed HTTP/1.1 body read straight from its connection, its chunks undone here.

A vendor streams one Server-Sent Event per HTTP chunk: 20,000 chunks for an 80 KB
answer. The SDKs' HTTP client hands each one up alone, through h11's chunk reader and
state machine, httpcore's and httpx's generators and httpx's byte chunker — about 12 µs
of the event loop a chunk, more than decoding the event. `chunked_body(response)` takes
the response once its headers are in (the SDK built, authenticated and sent the request
and checked the status, as before) and reads the rest of the body from the connection's
socket itself: each read (up to 64 KB) has its chunk framing removed in one pass and is
handed on as one piece.

The connection is given back as the HTTP client would leave it: the final zero-size
chunk and any trailers are handed to h11, which sees the message end, so the connection
is kept alive for the next request; a body closed early closes the connection, as
before. Network failures and timeouts are raised as the HTTP client's own (`httpx2`)
errors, and framing the client would refuse is refused the same way.

This reaches into the HTTP client's objects (`httpcore2`, `h11`): it is taken only when
they are exactly as expected — a chunked body without a content encoding, on an HTTP/1.1
connection whose reader has not started on the body — and otherwise `None` is returned
and the response is read through `aiter_bytes()` as before.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["chunked_body"]

READ_BYTES = 64 * 1024  # as much as the HTTP client reads at a time
_LONGEST_HEADER = 1024  # a chunk-size line longer than this is not one
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}[ \t]*(?:;[^\r\n]*)?")


def chunked_body(response: Any) -> AsyncIterator[bytes] | None:
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
        network = connection._network_stream
        reader = state._reader
        buffered = state._receive_buffer
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
    leftover = bytes(buffered)
    state._receive_buffer = ReceiveBuffer()
    timeout = response.request.extensions.get("timeout", {}).get("read")
    return _read(_Dechunker(), state, network, leftover, timeout, response.request)


async def _read(
    dechunker: _Dechunker, state: Any, network: Any, data: bytes, timeout: float | None, request: Any
) -> AsyncIterator[bytes]:
    while True:
        try:
            piece = dechunker.feed(data)
        except ValueError as exc:
            raise _error("RemoteProtocolError", str(exc), request) from None
        if piece:
            yield piece
        if dechunker.ending is not None:
            await _finish(state, network, dechunker.ending, timeout, request)
            return
        data = await _receive(network, timeout, request)
        if not data:
            raise _error("RemoteProtocolError", _INCOMPLETE, request)


_INCOMPLETE = "peer closed connection without sending complete message body (incomplete chunked read)"


async def _finish(state: Any, network: Any, ending: bytes, timeout: float | None, request: Any) -> None:
    """Hand the last chunk and the trailers to h11 until it sees the message end, so the
    connection is reused as if h11 had read the whole body."""
    import h11

    state.receive_data(ending)
    while True:
        try:
            event = state.next_event()
        except h11.ProtocolError as exc:
            raise _error("RemoteProtocolError", str(exc), request) from exc
        if isinstance(event, h11.EndOfMessage) or event is h11.PAUSED:
            return
        if event is h11.NEED_DATA:
            data = await _receive(network, timeout, request)
            if not data:
                raise _error("RemoteProtocolError", _INCOMPLETE, request)
            state.receive_data(data)


async def _receive(network: Any, timeout: float | None, request: Any) -> bytes:
    import httpcore2

    try:
        data: bytes = await network.read(READ_BYTES, timeout=timeout)
    except httpcore2.TimeoutException as exc:
        raise _error("ReadTimeout", str(exc), request) from exc
    except httpcore2.NetworkError as exc:
        raise _error("ReadError", str(exc), request) from exc
    return data


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
