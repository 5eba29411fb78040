"""Headless output with one flush per pass of the event loop, not one per event.

`wyckoff run` used to write and flush every event (`stream-json`: one JSON line a text
delta; text on a terminal: each delta): 20,000 `write` system calls for an 80 KB
answer. `CoalescingOut` writes into the stream's buffer and asks the running event
loop to flush it once, on its next pass: the flush comes as soon as the turn waits for
anything (the next network read, a tool), so a reader of the pipe sees each event as
early as before, but all the events decoded from one network read leave in one write.
Without a running loop (tests calling it directly) it flushes at once. A flush that
fails on the loop (the reader went away: `| head`) is raised by the next write or
flush, in the run's own code, as a direct flush's error was.

`line_encoder` is `json.dumps(..., ensure_ascii=False)` without building a new
`JSONEncoder` per call (which `json.dumps` does for any non-default argument); the
bytes are the same.
"""

from __future__ import annotations

import asyncio
import json
from typing import TextIO

line_encoder = json.JSONEncoder(ensure_ascii=False).encode


class CoalescingOut:
    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._pending = False
        self._failed: OSError | None = None

    def write(self, text: str) -> None:
        self._raise_failure()
        self.out.write(text)
        self.request_flush()

    def request_flush(self) -> None:
        """Flush on the event loop's next pass (at once without a running loop)."""
        if self._pending:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.out.flush()
            return
        self._pending = True
        loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._pending = False
        try:
            self.out.flush()
        except OSError as exc:  # BrokenPipeError and the like: the run's next write raises it
            self._failed = exc

    def flush(self) -> None:
        """Flush now (the end of the run, before anything goes to stderr)."""
        self._pending = False
        self._raise_failure()
        self.out.flush()

    def _raise_failure(self) -> None:
        failed, self._failed = self._failed, None
        if failed is not None:
            raise failed
