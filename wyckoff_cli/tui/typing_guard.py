"""Keys typed as text never answer a dialog.

A dialog that appears while the person is typing would otherwise take the next letter
as its answer ("also check…" → "a" = always allow). `TypingGuard` says whether the
dialog's keys are paused: for `PAUSE_SECONDS` after it opens, and for as long as the
prompt received a key within the last `PAUSE_SECONDS`. While paused, the dialog hands
every key to the prompt, so the sentence ends up where it was being typed.
"""

from __future__ import annotations

import time
from collections.abc import Callable

PAUSE_SECONDS = 1.0

Clock = Callable[[], float]


class TypingGuard:
    def __init__(
        self,
        last_typed: Callable[[], float] | None = None,
        *,
        pause: float | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        """`last_typed` returns the `clock()` time of the prompt's latest key (or
        `-inf` when it has none)."""
        self._last_typed = last_typed or (lambda: float("-inf"))
        self.pause = PAUSE_SECONDS if pause is None else pause
        self.clock = clock
        self.opened = clock()

    def remaining(self) -> float:
        """Seconds until the dialog's keys work (0 when they do)."""
        now = self.clock()
        until = max(self.opened, self._last_typed()) + self.pause
        return max(0.0, until - now)

    @property
    def paused(self) -> bool:
        return self.remaining() > 0
