"""Server-Sent Events, read raw: bytes from the HTTP response in, `(event, data)` out.

The adapters read each vendor's stream through the SDK's raw-response API and decode
it here instead of letting the SDK build a pydantic model per chunk (more than half of
the time of a long answer went there). One network read gives one batch of events;
`data` stays bytes, ready for one `json.loads`.

Follows the SSE rules the real streams need: `\\r\\n`, `\\r` or `\\n` line ends, comment
lines (`: OPENROUTER PROCESSING`), several `data:` lines joined with a newline, one
space after the colon dropped, unknown fields (and a line that starts with a space,
such as ` data: ...`) ignored, and a last event without its blank line discarded.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

Event = tuple[str, bytes]
_NAMES: dict[bytes, str] = {}  # event names seen, decoded once


async def sse_batches(pieces: AsyncIterator[bytes]) -> AsyncIterator[list[Event]]:
    """The events of each network read, in order (reads that complete none are skipped)."""
    buffer = b""
    async for piece in pieces:
        if not buffer and piece.endswith(b"\n\n") and b"\r" not in piece and piece.count(b"\n\n") == 1:
            # the common case: one whole event per network read
            event = parse_block(piece[:-2])
            if event is not None:
                yield [event]
            continue
        buffer = buffer + piece if buffer else piece
        if b"\r" in buffer:
            held = buffer.endswith(b"\r")  # may be the first half of "\r\n"
            if held:
                buffer = buffer[:-1]
            buffer = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            if held:
                buffer += b"\r"
        if b"\n\n" not in buffer:
            continue
        blocks = buffer.split(b"\n\n")
        buffer = blocks.pop()
        events = [event for block in blocks if (event := parse_block(block)) is not None]
        if events:
            yield events
    if buffer.endswith(b"\r"):  # a held "\r" that was a line end after all
        blocks = (buffer[:-1] + b"\n").split(b"\n\n")[:-1]
        events = [event for block in blocks if (event := parse_block(block)) is not None]
        if events:
            yield events


def parse_block(block: bytes) -> Event | None:
    """One event's lines to `(event name, data)`; None for a block without data."""
    if block.startswith(b"data: ") and b"\n" not in block:
        return "", block[6:]  # the common case: one data line, no event name
    if block.startswith(b"event: "):  # the other common case: one event line, one data line
        end = block.find(b"\n")
        rest = block[end + 1 :]
        if end > 0 and rest.startswith(b"data: ") and b"\n" not in rest:
            raw = block[7:end]
            name = _NAMES.get(raw)
            if name is None:
                name = _NAMES.setdefault(raw, raw.decode("utf-8", "replace"))
            return name, rest[6:]
    name = ""
    data: list[bytes] = []
    for line in block.split(b"\n"):
        if not line or line.startswith(b":"):
            continue
        field, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            data.append(value)
        elif field == b"event":
            name = value.decode("utf-8", "replace")
    joined = b"\n".join(data)
    if not joined:
        return None  # an empty data buffer dispatches nothing
    return name, joined
