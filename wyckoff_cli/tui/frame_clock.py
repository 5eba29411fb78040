"""One coalescing clock for the whole app: what changed is drawn once per frame.

Everything that wants to redraw at the next frame asks the clock (`request(callback)`):
the router's buffered deltas, the streamed answer's flush, a spinner's next frame
(`animate(callback)`, called every frame while registered). The clock arms one
one-shot timer for the next frame only while something is pending, so an idle app has
no timer at all (0% CPU). Callbacks asked for during a frame run in that same frame
(the router hands the answer its text; the answer then renders it), each once per
frame however often it was asked for. `request(callback, not_before=t)` runs it at the
first frame from `t` on (the transcript's new entries wait so for the frame after the
last batch's interval, tui/entry_batch.py). See docs/TUI-RENDERING.md.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["SPINNER", "FrameClock", "clock_of", "spinner_frame"]

FRAME_RATE = 10.0
"""Frames per second at most (one every 100 ms, a spinner's step). A frame costs a
Textual repaint (a full one whenever the answer grows by a line and the transcript
scrolls): at 50 deltas/s, 12.5 frames took ~2.5 points of a core less than 20, and 10
1.6 points less than 12.5, the text still streaming continuously (docs/PERFORMANCE.md).
Not lower: spinners step once a frame. The first change after a quiet spell is drawn at once."""

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
"""The glyphs of every spinner in the app (the status bar's, a running tool call's)."""
SPIN_SECONDS = 1.0 / FRAME_RATE
"""A spinner's glyph changes once a frame."""


def spinner_frame(elapsed: float) -> int:
    """The spinner's frame (an index into SPINNER) `elapsed` seconds after it started."""
    return int(elapsed / SPIN_SECONDS) % len(SPINNER)


_CLOCKS: weakref.WeakKeyDictionary[Any, FrameClock] = weakref.WeakKeyDictionary()


class _LoopTimer:
    """A one-shot timer on the event loop, stopped like Textual's (`stop()`)."""

    __slots__ = ("_handle",)

    def __init__(self, delay: float, callback: Callable[[], object]) -> None:
        self._handle = asyncio.get_running_loop().call_later(delay, callback)

    def stop(self) -> None:
        self._handle.cancel()


def _reraise(error: Exception) -> None:
    raise error


class FrameClock:
    """`request` runs a callback once at the next frame; `animate` every frame until
    `stop`. `app` is the Textual app; `schedule(delay, callback)` arms a one-shot timer
    that has `stop()`: by default one on the event loop, not Textual's `set_timer` (a
    Textual timer is a task of its own, ~0.2 ms of CPU a frame, docs/PERFORMANCE.md);
    a callback's error is raised in the app as from any of its callbacks."""

    def __init__(
        self,
        app: Any,
        frame_rate: float = FRAME_RATE,
        schedule: Callable[[float, Callable[[], object]], Any] | None = None,
    ) -> None:
        self._app = app
        self._schedule = schedule or _LoopTimer
        self.interval = 1.0 / frame_rate
        self._pending: dict[Callable[[], object], float] = {}  # callback -> not before
        self._animations: dict[Callable[[float], object], None] = {}
        self._timer: Any = None
        self._timer_at = 0.0  # when the armed timer fires
        self._ticking = False  # in a frame: what is asked for runs in it, or arms the next
        self._last = 0.0
        self.frames = 0
        """Frames run so far (for tests and benchmarks)."""

    @property
    def idle(self) -> bool:
        """Nothing pending and no timer armed."""
        return self._timer is None and not self._pending and not self._animations

    def request(self, callback: Callable[[], object], not_before: float = 0.0, *, soon: bool = False) -> None:
        """Run `callback` at the next frame (once, however often it is asked for), or
        at the first frame from `not_before` on (a `time.perf_counter()` time).
        `soon`: that frame comes at once, also when one is armed for later (a spinner's
        next frame, up to a frame away): for the first text of an answer."""
        earlier = self._pending.get(callback)
        self._pending[callback] = not_before if earlier is None else min(earlier, not_before)
        if soon and not self._ticking:
            self._last = 0.0  # as after a quiet spell: drawn at once (_arm re-arms sooner)
        self._arm()

    def animate(self, callback: Callable[[float], object]) -> None:
        """Call `callback(now)` every frame until `stop(callback)`."""
        self._animations[callback] = None
        self._arm()

    def stop(self, callback: Callable[[float], object]) -> None:
        self._animations.pop(callback, None)

    def _arm(self) -> None:
        if self._ticking or not (self._pending or self._animations):
            return
        # The first change after a quiet spell is drawn at once; later ones wait for
        # the next frame, so changes in between are coalesced.
        due = self._last + self.interval
        if not self._animations:
            due = max(due, min(self._pending.values()))
        if self._timer is not None:
            if self._timer_at <= due:
                return
            self._timer.stop()  # asked for sooner than the frame armed
        self._timer_at = due
        delay = max(due - time.perf_counter(), 0.001)
        self._timer = self._schedule(delay, self._fire)

    def _fire(self) -> None:
        if not getattr(self._app, "is_running", True):
            self._timer = None
            return  # the app has ended
        try:
            self._tick()
        except Exception as error:  # handed to the app, as Textual's timers do
            self._app.call_next(_reraise, error)

    def _tick(self) -> None:
        self._timer = None
        now = self._last = time.perf_counter()
        self.frames += 1
        self._ticking = True
        try:
            for _ in range(8):  # callbacks asked for during the frame run in it too
                due = [callback for callback, not_before in self._pending.items() if not_before <= now]
                if not due:
                    break
                for callback in due:
                    del self._pending[callback]
                for callback in due:
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
