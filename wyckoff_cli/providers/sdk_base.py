"""The shared base of the adapters that use a vendor SDK.

`SDKProvider` does what every such adapter does the same way: keep the spec, key and
base URL (never in reprs), create the SDK client on first use (with the SDK's own
retries off: `providers/retry.py` retries), open the stream through the SDK's
raw-response API, read its body ahead in a task (`providers/body_pump.py`) and decode
what arrived together as Server-Sent Events (`providers/sse.py`), hand each event
to the adapter's `StreamReader`, translate every failure into the error tree, and
close the client (`aclose`). An adapter supplies only its conversions:
`make_client`, `build_request`, `open_stream` and `new_reader`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, ClassVar

from wyckoff_cli.core.errors import ConnectionFailed, Overloaded
from wyckoff_cli.core.messages import Message, ToolSpec
from wyckoff_cli.providers.base import Chunk, StreamingProvider, TextChunk, ThinkingChunk
from wyckoff_cli.providers.body_pump import BodyPump
from wyckoff_cli.providers.chunked_body import chunked_body
from wyckoff_cli.providers.credentials import request_timeout
from wyckoff_cli.providers.sdk_errors import raise_translated
from wyckoff_cli.providers.spec import ModelSpec
from wyckoff_cli.providers.sse import Event, SSEDecoder

log = logging.getLogger(__name__)


class StreamReader:
    """Turns one vendor's decoded events into chunks, appended to `out`. `finish()`
    runs when the HTTP body ended: it adds the closing chunks (usage, stop reason) or
    raises `ConnectionFailed` when the stream never sent its end marker."""

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id
        self.out: list[Chunk] = []
        self.ended = False

    def feed(self, event: str, data: bytes) -> None:
        raise NotImplementedError

    def flush(self) -> None:
        """The events of one read were fed: add to `out` what a reader held back to
        handle together (the default holds nothing)."""

    def finish(self) -> None:
        raise NotImplementedError

    def cut_off(self, marker: str) -> ConnectionFailed:
        return ConnectionFailed(
            f"{self.model_id}: connection failed: the stream ended without {marker} "
            "(the answer is incomplete)",
            provider=self.model_id,
        )


class SDKProvider(StreamingProvider):
    """One model through one vendor SDK. Subclasses set `vendor` and implement the
    four conversion methods."""

    vendor: ClassVar[str] = ""

    def __init__(self, spec: ModelSpec, *, api_key: str, base_url: str | None = None) -> None:
        self.spec = spec
        self.base_url = base_url
        self._api_key = api_key
        self._client: Any = None

    @property
    def name(self) -> str:
        return self.spec.id

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec.id!r}, base_url={self.base_url!r})"

    def client_options(self) -> dict[str, Any]:
        """What the Anthropic and OpenAI clients are built with: the key, the base URL,
        no retries of their own (the retry wrapper retries) and the request timeout,
        when one is set."""
        options: dict[str, Any] = {"api_key": self._api_key, "base_url": self.base_url, "max_retries": 0}
        timeout = request_timeout(self.spec)
        if timeout is not None:
            options["timeout"] = timeout
        return options

    def client(self) -> Any:
        """The SDK client, created (and the SDK imported) on first use."""
        if self._client is None:
            self._client = self.make_client()
        return self._client

    # ------------------------------------------------------------------ per adapter

    def make_client(self) -> Any:
        raise NotImplementedError

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> dict[str, Any]:
        raise NotImplementedError

    def open_stream(self, request: dict[str, Any]) -> AbstractAsyncContextManager[Any]:
        """Send `request`; the context yields the raw HTTP response (`aiter_bytes()`).
        An HTTP error status raises the SDK's error on entering."""
        raise NotImplementedError

    def new_reader(self, request: dict[str, Any]) -> StreamReader:
        raise NotImplementedError

    # ------------------------------------------------------------------ shared

    def chat_stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> AsyncIterator[Chunk]:
        self.client()  # import the SDK now, not on the watchdog's clock
        return self._stream(self.build_request(messages, tools, system_prompt))

    async def _stream(self, request: dict[str, Any]) -> AsyncIterator[Chunk]:
        try:
            async with self.open_stream(request) as response:
                reader = self.new_reader(request)
                out = reader.out
                decoder = SSEDecoder()
                pump = chunked_body(response) or BodyPump(response.aiter_bytes())
                try:
                    while (data := await pump.take()) is not None:
                        failure = self._feed(reader, decoder.feed(data))
                        reader.flush()
                        if len(out) == 1:
                            yield out.pop()
                        elif out:
                            chunks = coalesce(out)
                            out.clear()
                            for chunk in chunks:
                                yield chunk
                        if failure is not None:
                            raise failure  # after what the events before it gave
                finally:
                    await pump.aclose()
                failure = self._feed(reader, decoder.end())
                if failure is not None:
                    raise failure
                reader.finish()
                chunks = list(out)
                out.clear()
            for chunk in chunks:
                yield chunk
        except Exception as exc:
            raise_translated(exc, provider=self.name, secret=self._api_key)

    def _feed(self, reader: StreamReader, events: list[Event]) -> Exception | None:
        """Hand `events` to the reader; the failure that stopped it (an error event, an
        event in an odd shape), to be raised once the chunks before it are passed on."""
        feed = reader.feed
        for event, data in events:
            try:
                feed(event, data)
            except (KeyError, TypeError, AttributeError, IndexError) as exc:
                odd = self._odd_event(event, data, exc)
                odd.__cause__ = exc
                return odd
            except Exception as exc:
                return exc
        return None

    def _odd_event(self, event: str, data: bytes, exc: Exception) -> Overloaded:
        """An event whose JSON parsed but has a shape the reader cannot use: logged in
        full, reported as a (retryable) server error."""
        log.warning("%s: unexpected stream event %r %r", self.name, event, data[:500], exc_info=exc)
        return Overloaded(
            f"{self.name}: server error or overloaded: the stream sent an event in an unexpected "
            f"shape ({type(exc).__name__})",
            provider=self.name,
        )

    async def aclose(self) -> None:
        """Close the SDK client's connections (idempotent)."""
        client, self._client = self._client, None
        if client is None:
            return
        close = getattr(client, "close", None) or getattr(client, "aclose", None)
        if close is not None:
            result = close()
            if hasattr(result, "__await__"):
                await result


def coalesce(chunks: list[Chunk]) -> list[Chunk]:
    """Join neighbouring plain text (and plain thinking) chunks of one network read:
    a delta boundary means nothing, and fewer chunks mean less work downstream."""
    merged: list[Chunk] = []
    for chunk in chunks:
        last = merged[-1] if merged else None
        if (
            type(chunk) is TextChunk
            and type(last) is TextChunk
            and last.signature is None
            and chunk.signature is None
        ):
            merged[-1] = TextChunk(last.text + chunk.text)
        elif type(chunk) is ThinkingChunk and type(last) is ThinkingChunk and _plain(last) and _plain(chunk):
            merged[-1] = ThinkingChunk(last.text + chunk.text)
        else:
            merged.append(chunk)
    return merged


def _plain(chunk: ThinkingChunk) -> bool:
    return chunk.signature is None and chunk.redacted_data is None and chunk.extra is None
