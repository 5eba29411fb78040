"""The app's start-up heap, set aside from the garbage collector's full passes.

Once the app is up (modules, SDK, Textual's and the session's objects), most of the
heap lives as long as the process. The collector's full pass scans all of it: ~50 ms
on the event loop every ~15 s while an answer streams (the objects each frame keeps
count toward the next pass), a stall in the stream and in typing. `freeze_startup_heap()`
moves what is alive at that moment to the collector's permanent generation
(`gc.freeze()`): later full passes scan only what came after, ~7 ms. Those objects are
still freed when nothing refers to them; only a reference cycle among them would stay.
Once per process: a second freeze would keep the cycles of everything since the first.
"""

from __future__ import annotations

import gc

__all__ = ["freeze_startup_heap"]

_frozen = False


def freeze_startup_heap() -> bool:
    """Freeze the heap as it is now, the first time this is called; True if it did."""
    global _frozen
    if _frozen:
        return False
    _frozen = True
    gc.freeze()
    return True
