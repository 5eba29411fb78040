"""`AbortSignal`: how a host stops a running turn without owning the task that runs
it. The runtime subscribes to it; a host (or the chat controller, on an `Interrupt`
request) calls `abort()`. Imports nothing of ours."""

from __future__ import annotations

from collections.abc import Callable


class AbortSignal:
    """Lets a host abort a running turn without owning the consuming task."""

    def __init__(self) -> None:
        self.aborted = False
        self._callbacks: list[Callable[[], object]] = []

    def abort(self) -> None:
        self.aborted = True
        for callback in list(self._callbacks):
            callback()

    def subscribe(self, callback: Callable[[], object]) -> Callable[[], None]:
        self._callbacks.append(callback)
        if self.aborted:
            callback()
        return lambda: self._callbacks.remove(callback)
