"""A notice that counts the seconds while a model call waits (its retries, issue 27).

`CountingNotice` re-renders its text once a second from `render(seconds since shown)`
until `stop()` (the router stops it when output comes, the model changes or the turn
ends); `retry_wait_text` is the retry notice's text: what failed, when the next attempt
starts, how long the call has waited of its `stream_stall_limit`, and which fallback
Esc would try now.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual.timer import Timer

from wyckoff_cli.core import events as ev
from wyckoff_cli.tui.widgets.entries import NOTICE_STYLES, NoticeLine

TICK_SECONDS = 1.0


class CountingNotice(NoticeLine):
    def __init__(self, kind: str, render: Callable[[float], str], **kwargs: object) -> None:
        super().__init__(kind, render(0.0), **kwargs)
        self._text_of = render
        self._shown_at = time.monotonic()
        self._timer: Timer | None = None
        self.counting = True

    def on_mount(self) -> None:
        if self.counting:
            self._timer = self.set_interval(TICK_SECONDS, self.tick)

    def tick(self) -> None:
        self.show(self._text_of(time.monotonic() - self._shown_at))

    def show(self, message: str) -> None:
        if message == self.message:
            return
        self.message = message
        icon, style = NOTICE_STYLES.get(self.kind, NOTICE_STYLES["info"])
        self.update(Text.assemble((f"{icon} ", style), (message, style)))

    def stop(self) -> None:
        """Stop counting; the text stays as it was last shown."""
        self.counting = False
        if self._timer is not None:
            self._timer.stop()
            self._timer = None


def retry_wait_text(event: ev.Retrying) -> Callable[[float], str]:
    """The retry notice's text after `elapsed` seconds on screen."""
    head = (
        f"{event.model} failed ({event.error}); retrying in {event.delay:.1f} s "
        f"(attempt {event.attempt} of {event.attempts})"
    )
    skip = f" · Esc: try {event.fallback} now" if event.fallback else ""

    def render(elapsed: float) -> str:
        if event.limit is None:
            return head + skip
        waited = min(event.waited + elapsed, event.limit)
        return f"{head} · waited {waited:.0f} s of {event.limit:g} s{skip}"

    return render
