"""The app's start-up heap: no collector passes while it is built, then set aside.

Starting the app builds a heap that lives as long as the process: modules, the SDK's
classes, Textual's and the session's objects. While it grows, the garbage collector
keeps scanning it: ~0.28 s of collector passes between launch and the first answer's
first token on a slow 2-core machine (docs/PERFORMANCE.md), on the paint's and the
first message's path, and almost nothing to free (a few hundred cycles).

`hold_collection()`, as `wyckoff chat` starts, turns the collector off. `settle_heap()`,
once the app is warm and no turn is running (or when that turn ends), makes one full
pass (what start-up left as cycles is freed), then moves what is alive to the
collector's permanent generation (`gc.freeze()`: later full passes scan only what came
after, ~7 ms instead of ~50 ms every ~15 s while an answer streams) and turns the
collector back on. Should the app never get there, the collector is back on after
`HOLD_LIMIT` seconds whatever happens. Frozen objects are still freed when nothing
refers to them; only a cycle among them would stay. Once per process: a second freeze
would keep the cycles of everything since the first.
"""

from __future__ import annotations

import gc
import threading

__all__ = ["HOLD_LIMIT", "app_warm", "hold_collection", "release_collection", "settle_heap", "turn_ended"]

HOLD_LIMIT = 20.0
"""Seconds the collector stays off at most, settled or not (a first turn sent before
the app was warm settles when it ends, or at this limit)."""


class _Hold:
    """The process's one hold: whether the collector is held, the heap settled, the app warm."""

    held = False
    settled = False
    warm = False
    timer: threading.Timer | None = None


_lock = threading.Lock()
_hold = _Hold()


def hold_collection(limit: float = HOLD_LIMIT) -> bool:
    """Turn the collector off until `settle_heap()`, or for `limit` seconds at most;
    True if it did (not when it was off already, or the heap is settled)."""
    with _lock:
        if _hold.held or _hold.settled or not gc.isenabled():
            return False
        gc.disable()
        _hold.held, _hold.timer = True, threading.Timer(limit, settle_heap)
        _hold.timer.daemon = True
        _hold.timer.start()
    return True


def release_collection() -> None:
    """The collector back on, nothing frozen, if it is held and the heap not settled (the
    app refused to start, or closed before it was warm); nothing otherwise."""
    with _lock:
        if not _hold.held or _hold.settled:
            return
        timer, _hold.held, _hold.timer = _hold.timer, False, None
    if timer is not None:
        timer.cancel()
    gc.enable()


def settle_heap() -> bool:
    """The first time: one full pass if the collector was held, the heap as it is then
    frozen, the collector back on. True if it did (False on every later call)."""
    with _lock:
        if _hold.settled:
            return False
        _hold.settled = True
        held, timer = _hold.held, _hold.timer
    if timer is not None:
        timer.cancel()  # nothing when this is the timer's own thread
    if held:
        gc.collect()  # the cycles start-up left, before they would be frozen for good
    gc.freeze()
    if held:
        gc.enable()
    return True


def app_warm(busy: bool) -> None:
    """The app's warm-up is done: settle now, or when the turn running (`busy`) ends, so
    that turn's request does not wait for the full pass."""
    _hold.warm = True
    if not busy:
        settle_heap()


def turn_ended() -> None:
    """A turn ended: settle if the app is warm (a first message sent before it was)."""
    if _hold.warm:
        settle_heap()
