"""A screen's new transcript entries, mounted together once per frame of the app's clock.

Every mount costs the screen a layout pass and a full repaint: Textual arranges every
entry of the transcript and rebuilds every line on screen (~20 ms under load), and a
tool round mounts two or three entries (its answer, its call, a notice). Run live,
each fast round paid for those passes while the same round headless costs about a
millisecond (bench/live_session.py, docs/PERFORMANCE.md). `EntryBatch` holds the entries
a screen adds and mounts them in one `mount_all` at the next frame of the app's clock
(tui/frame_clock.py), so rounds that end within one frame share one layout pass and one
repaint.

A held entry is an ordinary widget not yet in the DOM: the router updates it as usual
(a tool call that starts and finishes within the frame is mounted finished, without a
pass of its own), and entries are mounted in the order they were added. Nothing waits
longer than a frame, and the clock's first frame after a quiet spell runs at once
(~1 ms), so a lone entry is not delayed. What must not wait at all is mounted at once
by `flush()`: the screen calls it before an approval dialog opens (the call asking is on
screen behind it), for a sub-agent's call (its own transcript mounts into it), before a
held entry is removed (a retried answer) and at the end of a turn.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from textual.widget import Widget

from wyckoff_cli.tui.frame_clock import clock_of

__all__ = ["MOUNT_INTERVAL", "EntryBatch"]

MOUNT_INTERVAL = 0.1
"""Seconds between two batches at least while a turn runs (two frames of the app's
clock): fast rounds share one layout pass. After a quiet spell the next frame comes at
once (~1 ms)."""


class EntryBatch:
    """`add(widget)` holds an entry; `flush()` mounts every held entry with one call of
    `mount` (the screen's transcript's `mount_all`), at the next frame or at once."""

    def __init__(
        self, owner: Widget, mount: Callable[[list[Widget]], object], hold: Callable[[], bool]
    ) -> None:
        self._owner = owner  # the screen: its app's clock, and whether it is still there
        self._mount = mount
        self._hold = hold  # True while entries may wait for a frame (a turn runs)
        self._pending: list[Widget] = []
        self._last = 0.0  # when the last batch was mounted
        self.interval = MOUNT_INTERVAL
        self.batches = 0
        """How many `mount` calls ran (for tests and benchmarks)."""

    @property
    def pending(self) -> Sequence[Widget]:
        """The entries added and not mounted yet, in order."""
        return self._pending

    def add(self, widget: Widget) -> None:
        self._pending.append(widget)
        if not self._hold():
            self.flush()  # no turn runs (a command's output, a notice): at once
        elif len(self._pending) == 1:  # at the first frame `interval` after the last batch
            clock_of(self._owner.app).request(self.flush, not_before=self._last + self.interval)

    def flush(self) -> None:
        """Mount what is held, now (a no-op when nothing is)."""
        if not self._pending:
            return
        widgets, self._pending = self._pending, []
        if not self._owner.is_attached:  # the app is closing: they have nowhere to go
            return
        self.batches += 1
        self._last = time.perf_counter()
        self._mount(widgets)
