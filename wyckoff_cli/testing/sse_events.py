"""Server-sent events as the fake vendor server writes them, shared by its scenario
renderers (wire.py, search_wire.py)."""

from __future__ import annotations

import json
from typing import Any


def sse(data: Any, event: str | None = None) -> bytes:
    """One event: `data` as compact JSON (a string is sent as it is), named `event`."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


class AnthropicBlocks:
    """Appends Anthropic content blocks to `events`, numbered in order: a start, its
    deltas, a stop."""

    def __init__(self, events: list[bytes]) -> None:
        self.events = events
        self.index = 0

    def add(self, start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        index = self.index
        self.events.append(
            sse(
                {"type": "content_block_start", "index": index, "content_block": start}, "content_block_start"
            )
        )
        for delta in deltas:
            self.events.append(
                sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta")
            )
        self.events.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        self.index += 1
