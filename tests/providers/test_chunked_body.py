"""The streamed body read straight from the connection (`providers/chunked_body.py`):
its chunk framing undone across any split of the reads, the connection kept alive for
the next request as the HTTP client would keep it, failures raised as the client's own,
and every response it does not take read through the HTTP client as before. Real SDKs
against a keep-alive HTTP/1.1 server on 127.0.0.1 (the fake server closes each
connection, so it cannot show the reuse)."""

from __future__ import annotations

import asyncio
import gzip
import random
import socket
import struct
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.providers.conftest import MODELS, TEST_KEY, call
from wyckoff_cli.core import errors
from wyckoff_cli.core.messages import Message, TextPart
from wyckoff_cli.providers import chunked_body as module
from wyckoff_cli.providers.chunked_body import _Dechunker
from wyckoff_cli.providers.factory import build_provider
from wyckoff_cli.providers.spec import ModelSpec
from wyckoff_cli.testing.wire import render, vendor_for_path

ANSWER = "Streamed straight from the socket, every delta in order. " * 40
VENDORS = ["anthropic", "openai", "openai-responses", "gemini"]


class KeepAliveServer:
    """HTTP/1.1 on 127.0.0.1 that keeps connections open; `framing` says how each
    answer's body is sent: "chunked" (one chunk an event), "trailers" (with chunk
    extensions and trailer fields), "gzip" (chunked, gzip-encoded), "length"
    (Content-Length), "drop" (the connection closed inside a chunk), "stall" (silent
    after half the events), "reset" (the connection reset after half the events),
    "pause" (silent for `pause` seconds half-way, then the rest)."""

    def __init__(self) -> None:
        self.framing = "chunked"
        self.pause = 0.0  # seconds of silence half-way, for "pause"
        self.connections = 0
        self.requests = 0
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for handler in self._handlers:
            handler.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        handler = asyncio.current_task()
        assert handler is not None
        self._handlers.add(handler)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1]
                length = next(
                    (
                        int(line.split(":", 1)[1])
                        for line in lines
                        if line.lower().startswith("content-length:")
                    ),
                    0,
                )
                await reader.readexactly(length)
                self.requests += 1
                vendor = vendor_for_path(path)
                assert vendor is not None, path
                rendered = render(vendor, {"text": ANSWER, "chunk_size": 5})
                events = rendered.events + rendered.tail
                if not await self._answer(writer, events):
                    return
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            return
        finally:
            writer.close()

    async def _answer(self, writer: asyncio.StreamWriter, events: list[bytes]) -> bool:
        body = b"".join(events)
        head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        if self.framing == "length":
            writer.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
            await writer.drain()
            return True
        if self.framing == "gzip":
            head += "Content-Encoding: gzip\r\n"
            events = [gzip.compress(body)]
        writer.write(f"{head}Transfer-Encoding: chunked\r\n\r\n".encode())
        extension = ";note=x" if self.framing == "trailers" else ""
        for n, event in enumerate(events):
            if self.framing == "drop" and n == len(events) // 2:
                writer.write(b"%X\r\n%s" % (len(event), event[: len(event) // 2]))
                await writer.drain()
                return False
            if self.framing == "pause" and n == len(events) // 2:
                await writer.drain()
                await asyncio.sleep(self.pause)  # the server thinks, then goes on
            if self.framing in ("stall", "reset") and n == len(events) // 2:
                await writer.drain()
                if self.framing == "reset":  # an RST, not a FIN: the peer's socket is gone
                    sock = writer.get_extra_info("socket")
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    writer.transport.abort()
                    return False
                await asyncio.Event().wait()  # silent until the client gives up
            writer.write(b"%X%s\r\n%s\r\n" % (len(event), extension.encode(), event))
            if n % 7 == 0:
                await writer.drain()
        trailer = b"X-Trailer: done\r\n" if self.framing == "trailers" else b""
        writer.write(b"0\r\n" + trailer + b"\r\n")
        await writer.drain()
        return True


@pytest.fixture
async def keep_alive() -> AsyncIterator[tuple[KeepAliveServer, str]]:
    server = KeepAliveServer()
    url = await server.start()
    yield server, url
    await server.stop()


def _provider(vendor: str, url: str) -> Any:
    base = url + "/v1" if vendor.startswith("openai") else url
    return build_provider(ModelSpec(vendor, MODELS[vendor], base_url=base, api_key=TEST_KEY), retry=None)


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each response was read straight from its connection."""
    from wyckoff_cli.providers import sdk_base

    seen: list[bool] = []

    def recording(response: Any) -> Any:
        body = module.chunked_body(response)
        seen.append(body is not None)
        return body

    monkeypatch.setattr(sdk_base, "chunked_body", recording)
    return seen


@pytest.mark.parametrize("vendor", VENDORS)
@pytest.mark.parametrize("framing", ["chunked", "trailers"])
async def test_the_connection_is_kept_alive_for_the_next_request(
    keep_alive: tuple[KeepAliveServer, str], taken: list[bool], vendor: str, framing: str
) -> None:
    server, url = keep_alive
    server.framing = framing
    provider = _provider(vendor, url)
    for _ in range(3):
        parts, _, _ = await call(provider, tools=())
        assert parts == [TextPart(ANSWER)]
    assert taken == [True, True, True]
    assert (server.requests, server.connections) == (3, 1)  # one connection for all three
    await provider.aclose()


@pytest.mark.parametrize("framing", ["gzip", "length"])
async def test_a_body_it_does_not_take_is_read_by_the_http_client(
    keep_alive: tuple[KeepAliveServer, str], taken: list[bool], framing: str
) -> None:
    server, url = keep_alive
    server.framing = framing
    provider = _provider("openai", url)
    for _ in range(2):
        parts, _, _ = await call(provider, tools=())
        assert parts == [TextPart(ANSWER)]
    assert taken == [False, False] and server.connections == 1
    await provider.aclose()


async def test_a_connection_closed_inside_a_chunk_is_a_dropped_stream(
    keep_alive: tuple[KeepAliveServer, str], taken: list[bool]
) -> None:
    server, url = keep_alive
    server.framing = "drop"
    provider = _provider("anthropic", url)
    with pytest.raises(errors.ConnectionFailed) as raised:
        await call(provider, tools=())
    assert taken == [True] and raised.value.retryable
    assert "RemoteProtocolError: peer closed connection without sending complete message body" in str(
        raised.value
    )
    server.framing = "chunked"
    parts, _, _ = await call(provider, tools=())  # a new connection, whole answer
    assert parts == [TextPart(ANSWER)] and server.connections == 2
    await provider.aclose()


async def test_a_body_closed_early_closes_its_connection(
    keep_alive: tuple[KeepAliveServer, str], taken: list[bool]
) -> None:
    server, url = keep_alive
    provider = _provider("openai", url)
    stream = provider.chat_stream([Message.user("x")], [], "")
    await anext(stream)
    await stream.aclose()  # as Esc does
    parts, _, _ = await call(provider, tools=())
    assert parts == [TextPart(ANSWER)] and server.connections == 2  # not reused half-read
    await provider.aclose()


def _wire(pieces: list[bytes], *, trailers: bytes = b"") -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n" + trailers + b"\r\n"


@pytest.mark.parametrize("seed", range(12))
def test_the_framing_is_undone_across_any_split_of_the_reads(seed: int) -> None:
    rng = random.Random(seed)
    pieces = [rng.randbytes(rng.randint(1, 300)) for _ in range(60)]
    wire = _wire(pieces, trailers=b"X-A: 1\r\n") + b"after"
    dechunker, body, position = _Dechunker(), [], 0
    while dechunker.ending is None:
        step = 1 if seed == 0 else rng.randint(1, 700)
        body.append(dechunker.feed(wire[position : position + step]))
        position += step
    assert b"".join(body) == b"".join(pieces)
    assert (dechunker.ending + wire[position:]) == b"0\r\nX-A: 1\r\n\r\nafter"


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        (b"zz\r\nabc\r\n", "illegal chunk header"),
        (b"3\r\nabcXY", "malformed chunk footer"),
        (b"-3\r\nabc\r\n", "illegal chunk header"),
        (b"3 3\r\nabc\r\n", "illegal chunk header"),
        (b"1" * 2000, "illegal chunk header: no end of line"),
        (b"11111111111111111\r\n", "illegal chunk header"),  # 17 hex digits
    ],
    ids=["not-hex", "bad-footer", "negative", "two-numbers", "endless-line", "too-long"],
)
def test_framing_the_http_client_refuses_is_refused(wire: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _Dechunker().feed(wire)


def test_upper_case_sizes_extensions_and_spaces_are_read() -> None:
    dechunker = _Dechunker()
    assert dechunker.feed(b"A;name=value\r\n0123456789\r\nb \r\nabcdefghijk\r\n0\r\n\r\n") == (
        b"0123456789abcdefghijk"
    )
    assert dechunker.ending == b"0\r\n\r\n"


@pytest.mark.parametrize(("framing", "kind"), [("stall", "ReadTimeout"), ("reset", "ReadError")])
async def test_network_failures_are_the_http_clients_own(
    keep_alive: tuple[KeepAliveServer, str], framing: str, kind: str
) -> None:
    """A read timeout (the SDK's: the time allowed between two arrivals) and a reset
    connection, half-way through a body read straight: the HTTP client's own errors."""
    import httpx2

    server, url = keep_alive
    server.framing = framing
    client = httpx2.AsyncClient(timeout=httpx2.Timeout(5.0, read=0.3))
    async with client, client.stream("POST", url + "/v1/chat/completions", content=b"{}") as response:
        body = module.chunked_body(response)
        assert body is not None
        read = b""
        with pytest.raises(getattr(httpx2, kind)):
            while (piece := await body.take()) is not None:
                read += piece
        await body.aclose()
        assert read.startswith(b"data: ")  # what came before the failure was handed on


@pytest.mark.parametrize(("framing", "message"), [("stall", "ReadTimeout"), ("reset", "ReadError")])
async def test_a_stalled_or_reset_stream_fails_through_the_sdk_as_a_network_failure(
    keep_alive: tuple[KeepAliveServer, str], taken: list[bool], framing: str, message: str
) -> None:
    server, url = keep_alive
    server.framing = framing
    spec = ModelSpec(
        "openai", MODELS["openai"], base_url=url + "/v1", api_key=TEST_KEY, extra={"request_timeout": 0.5}
    )
    provider = build_provider(spec, retry=None)
    with pytest.raises(errors.ProviderError) as raised:
        await call(provider, tools=())
    assert taken == [True] and raised.value.retryable and message in str(raised.value)
    server.framing = "chunked"
    parts, _, _ = await call(provider, tools=())  # the next call on a new connection
    assert parts == [TextPart(ANSWER)]
    await provider.aclose()


async def test_the_read_timeout_counts_the_wait_not_the_time_the_reader_was_busy(
    keep_alive: tuple[KeepAliveServer, str],
) -> None:
    """The HTTP client times each read: a reader busy elsewhere for longer than the read
    timeout, while the server was silent, still waits the whole timeout for what comes next."""
    import httpx2

    server, url = keep_alive
    server.framing, server.pause = "pause", 1.1
    client = httpx2.AsyncClient(timeout=httpx2.Timeout(5.0, read=0.8))
    async with client, client.stream("POST", url + "/v1/chat/completions", content=b"{}") as response:
        body = module.chunked_body(response)
        assert body is not None
        read = await body.take() or b""
        await asyncio.sleep(1.0)  # busy elsewhere (the span itself is the test, not a wait)
        while (piece := await body.take()) is not None:  # the rest arrives 0.1 s into the wait
            read += piece
        rendered = render("openai", {"text": ANSWER, "chunk_size": 5})
        assert read == b"".join(rendered.events + rendered.tail)  # all of it, no ReadTimeout
