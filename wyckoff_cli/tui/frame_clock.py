"""One coalescing clock for the whole app: what changed is drawn once per frame.

Everything that wants to redraw at the next frame asks the clock (`request(callback)`):
the router's buffered deltas, the streamed answer's flush, a spinner's next frame
(`animate(callback)`, called every frame while registered). The clock arms one
one-shot timer for the next frame only while something is pending, so an idle app has
no timer at all (0% CPU). Callbacks asked for during a frame run in that same frame
(the router hands the answer its text; the answer then renders it), each once per
frame however often it was asked for. See docs/TUI-RENDERING.md.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["FrameClock", "clock_of"]

FRAME_RATE = 12.5
"""Frames per second at most (one every 80 ms, the usual terminal spinner's step). A frame
costs a Textual repaint (a full one whenever the answer grows by a line and the
transcript scrolls): at 50 deltas/s, 12.5 frames took ~2.5 points of a core less than 20
and the text still streams continuously (docs/PERFORMANCE.md). The first change after a
quiet spell is drawn at once."""

_CLOCKS: weakref.WeakKeyDictionary[Any, FrameClock] = weakref.WeakKeyDictionary()


class FrameClock:
    """`request` runs a callback once at the next frame; `animate` every frame until
    `stop`. `app` is anything with Textual's `set_timer(delay, callback)`."""

    def __init__(self, app: Any, frame_rate: float = FRAME_RATE) -> None:
        self._app = app
        self.interval = 1.0 / frame_rate
        self._pending: dict[Callable[[], object], None] = {}
        self._animations: dict[Callable[[float], object], None] = {}
        self._timer: Any = None
        self._ticking = False  # in a frame: what is asked for runs in it, or arms the next
        self._last = 0.0
        self.frames = 0
        """Frames run so far (for tests and benchmarks)."""

    @property
    def idle(self) -> bool:
        """Nothing pending and no timer armed."""
        return self._timer is None and not self._pending and not self._animations

    def request(self, callback: Callable[[], object], *, soon: bool = False) -> None:
        """Run `callback` at the next frame (once, however often it is asked for).
        `soon`: that frame comes at once, also when one is armed for later (a spinner's
        next frame, up to a frame away): for the first text of an answer."""
        self._pending[callback] = None
        if soon and not self._ticking:
            if self._timer is not None:
                self._timer.stop()
                self._timer = None
            self._last = 0.0  # as after a quiet spell: drawn at once
        self._arm()

    def animate(self, callback: Callable[[float], object]) -> None:
        """Call `callback(now)` every frame until `stop(callback)`."""
        self._animations[callback] = None
        self._arm()

    def stop(self, callback: Callable[[float], object]) -> None:
        self._animations.pop(callback, None)

    def _arm(self) -> None:
        if self._timer is not None or self._ticking:
            return
        delay = self._last + self.interval - time.perf_counter()
        # The first change after a quiet spell is drawn at once; later ones wait for
        # the next frame, so changes in between are coalesced.
        self._timer = self._app.set_timer(
            max(delay, 0.001), self._tick, name="frame"
        )  # 0: Textual divides by it

    def _tick(self) -> None:
        self._timer = None
        now = self._last = time.perf_counter()
        self.frames += 1
        self._ticking = True
        try:
            for _ in range(8):  # callbacks asked for during the frame run in it too
                if not self._pending:
                    break
                pending, self._pending = self._pending, {}
                for callback in pending:
                    callback()
            for animation in list(self._animations):
                animation(now)
        finally:
            self._ticking = False
            if self._pending or self._animations:
                self._arm()


def clock_of(app: Any) -> FrameClock:
    """The app's clock (made on first use: any Textual app has one)."""
    clock = _CLOCKS.get(app)
    if clock is None:
        clock = _CLOCKS[app] = FrameClock(app)
    return clock
