"""Server-Sent Events, read raw: bytes from the HTTP response in, `(event, data)` out.

The adapters read each vendor's stream through the SDK's raw-response API and decode
it here instead of letting the SDK build a pydantic model per chunk (more than half of
the time of a long answer went there). `SSEDecoder` is fed whatever arrived (one batch
of events per feed); `data` stays bytes, ready for one `json.loads`.

Follows the SSE rules the real streams need: `\\r\\n`, `\\r` or `\\n` line ends, comment
lines (`: OPENROUTER PROCESSING`), several `data:` lines joined with a newline, one
space after the colon dropped, unknown fields (and a line that starts with a space,
such as ` data: ...`) ignored, and a last event without its blank line discarded.
"""

from __future__ import annotations

Event = tuple[str, bytes]
_NAMES: dict[bytes, str] = {}  # event names seen, decoded once


class SSEDecoder:
    """An incremental decoder: `feed()` the body's bytes as they arrive and get the events
    each piece completed; `end()` when the body ended."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, piece: bytes) -> list[Event]:
        """The events `piece` completes, in order (an empty list when it completes none)."""
        buffer = self._buffer
        if not buffer and piece.endswith(b"\n\n") and b"\r" not in piece and piece.count(b"\n\n") == 1:
            # the common case: one whole event per network read
            event = parse_block(piece[:-2])
            return [] if event is None else [event]
        buffer = buffer + piece if buffer else piece
        if b"\r" in buffer:
            held = buffer.endswith(b"\r")  # may be the first half of "\r\n"
            if held:
                buffer = buffer[:-1]
            buffer = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            if held:
                buffer += b"\r"
        if b"\n\n" not in buffer:
            self._buffer = buffer
            return []
        blocks = buffer.split(b"\n\n")
        self._buffer = blocks.pop()
        return [event for block in blocks if (event := parse_block(block)) is not None]

    def end(self) -> list[Event]:
        """The body ended: a held "\\r" was a line end after all; a last event without its
        blank line is discarded."""
        buffer, self._buffer = self._buffer, b""
        if not buffer.endswith(b"\r"):
            return []
        blocks = (buffer[:-1] + b"\n").split(b"\n\n")[:-1]
        return [event for block in blocks if (event := parse_block(block)) is not None]


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
