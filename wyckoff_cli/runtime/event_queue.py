"""The queue between a turn's producer task and the `run_stream` generator.

A stream of 20,000 deltas puts 20,000 events. `asyncio.Queue` costs a wake-up per
item when the consumer waits; this queue wakes the consumer once for everything put
since it last looked, and the consumer takes the whole batch without awaiting (`wait()`, then
`get_nowait()` until `empty()`).
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any


class EventQueue:
    """Single producer, single consumer; `put_nowait` never blocks."""

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: deque[Any] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: Any) -> None:
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def empty(self) -> bool:
        return not self._items

    def get_nowait(self) -> Any:
        return self._items.popleft()

    async def wait(self) -> None:
        """Return when there is at least one item (at once if there is one already)."""
        if self._items:
            return
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        try:
            await waiter
        finally:
            self._waiter = None
