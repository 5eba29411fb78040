"""A running turn's new transcript entries, mounted together at a frame of the app's clock.

Every mount costs the screen a layout pass and a full repaint: Textual arranges every
entry of the transcript and rebuilds every line on screen (~20 ms under load, a second,
smaller pass follows for the new entries' sizes), and a tool round mounts two or three
entries (its answer, its call, a notice). Run live, each fast round paid for those passes
while the same round headless costs a few milliseconds (bench/live_session.py,
docs/PERFORMANCE.md). While a turn runs, `EntryBatch` holds the entries a screen adds
and mounts them in one `mount_all` at a frame of the app's clock (tui/frame_clock.py),
at most one batch every MOUNT_INTERVAL: rounds faster than that share the passes.

A held entry is an ordinary widget not yet in the DOM: the router updates it as usual
(a tool call that starts and finishes before the frame is mounted finished, without a
pass of its own), and entries are mounted in the order they were added. The first batch
after a quiet spell waits only for the next frame, the one its text is drawn in anyway,
so a slow model's rounds show as soon as before. Outside a turn (a command's output, a
notice, the user's own message) an entry is mounted at once, and what the person must
act on never waits: `flush()` mounts what is held at once, before an approval dialog
opens (the call asking is on screen behind it), for a sub-agent's call (its own
transcript mounts into it), before a held entry is removed (a retried answer) and when
the turn ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from textual.widget import Widget

from wyckoff_cli.tui.frame_clock import clock_of

__all__ = ["MOUNT_INTERVAL", "EntryBatch"]

MOUNT_INTERVAL = 0.2
"""Seconds between two batches at least (four frames of the app's clock). The app's CPU
seconds for 200 fast rounds (bench/live_session.py, mean of three, load 2.6-3.2): 0.05 s
4.6, 0.1 s 3.5, 0.2 s 3.1, 0.3 s 2.8 (docs/PERFORMANCE.md). Tool calls streaming by at
five batches a second still read as continuous."""


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
        self._last = 0.0  # when the last batch was mounted at a frame
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
            clock_of(self._owner.app).request(self._on_frame, not_before=self._last + self.interval)

    def _on_frame(self) -> None:
        if self._pending:
            self._last = time.perf_counter()
            self.flush()

    def flush(self) -> None:
        """Mount what is held, now (a no-op when nothing is)."""
        if not self._pending:
            return
        widgets, self._pending = self._pending, []
        if not self._owner.is_attached:  # the app is closing: they have nowhere to go
            return
        self.batches += 1
        self._mount(widgets)
