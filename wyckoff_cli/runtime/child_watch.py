"""Time limits for a sub-agent: `[agents] max_seconds` and `[agents] idle_seconds`.

`ChildWatch` is fed every event of a child's run; `next_timeout()` is how long the
task may wait for the next one before a limit is reached: the wall-time limit from the
child's start, or the no-progress watchdog's limit from the child's last new tool call
or text (streamed answer text or a tool's output). When the wait runs out the task
stops the child and says why (`message()`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

from wyckoff_cli.core import events as ev

_PROGRESS = (ev.ToolCallsReceived, ev.ToolStarted, ev.TextDelta, ev.ToolOutput)

Limit = Literal["max_seconds", "idle_seconds"]


class ChildWatch:
    def __init__(
        self,
        max_seconds: float | None,
        idle_seconds: float | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_seconds = max_seconds
        self.idle_seconds = idle_seconds
        self.clock = clock
        self.started = self.last_progress = clock()

    def saw(self, event: ev.RuntimeEvent) -> None:
        if isinstance(event, _PROGRESS):
            self.last_progress = self.clock()

    def next_timeout(self) -> float | None:
        """Seconds until the nearer limit (at least 0); None when neither is set."""
        now = self.clock()
        waits = []
        if self.max_seconds is not None:
            waits.append(self.started + self.max_seconds - now)
        if self.idle_seconds is not None:
            waits.append(self.last_progress + self.idle_seconds - now)
        return max(0.0, min(waits)) if waits else None

    def reached(self) -> Limit:
        """Which limit a wait that ran out reached (the wall time when both did)."""
        now = self.clock()
        if self.max_seconds is not None and now - self.started >= self.max_seconds:
            return "max_seconds"
        return "idle_seconds" if self.idle_seconds is not None else "max_seconds"

    def message(self, limit: Limit) -> str:
        if limit == "max_seconds":
            return f"The agent was stopped: it ran longer than [agents] max_seconds ({self.max_seconds:g} s)."
        return (
            "The agent was stopped: no new tool call or text for [agents] idle_seconds "
            f"({self.idle_seconds:g} s)."
        )
