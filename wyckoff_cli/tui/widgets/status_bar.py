"""The status bar: model, mode, context used, tokens, cache, cost, background tasks, state."""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual.widgets import Static

from wyckoff_cli.session.status import SHORTEN_ORDER, StatusModel
from wyckoff_cli.tui.frame_clock import clock_of
from wyckoff_cli.tui.literal import visible

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPIN_SECONDS = 0.1

STYLES = {
    "state": "bold",
    "model": "cyan",
    "mode": "magenta",
    "context": "",
    "tokens": "dim",
    "cache": "green",
    "cost": "yellow",
    "background": "cyan",
    "waiting": "bold black on yellow",
    "line": "",
}


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    spin = True  # snapshot tests turn the spinner off (its frame and seconds vary)

    def __init__(self, model: StatusModel, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.model = model
        self.busy_since: float | None = None  # while not idle: a spinner and the elapsed time
        self._shown: tuple[object, ...] | None = None  # what the bar shows now
        self.on_refresh: Callable[[], None] | None = None  # the status line command's refresher

    def on_mount(self) -> None:
        self.refresh_status()

    def on_resize(self) -> None:
        self.refresh_status()

    def refresh_status(self) -> None:
        """Repaint, only if what the bar shows changed: a figure, the width, or (while
        busy) the spinner's frame or the elapsed seconds. The spinner runs on the app's
        frame clock, only while busy."""
        if self.on_refresh is not None:
            self.on_refresh()  # runs the status line command again if its input changed
        busy = self.spin and self.model.state not in ("idle", "waiting for approval")
        if busy and self.busy_since is None:
            self.busy_since = time.monotonic()
            clock_of(self.app).animate(self._tick)
        elif not busy and self.busy_since is not None:
            self.busy_since = None
            clock_of(self.app).stop(self._tick)
        spinner = None
        if self.busy_since is not None:
            elapsed = time.monotonic() - self.busy_since
            spinner = (SPINNER[int(elapsed / SPIN_SECONDS) % len(SPINNER)], f"{elapsed:.0f}s")
        width = self.size.width - 2 if self.size.width else 200
        shown = (width, tuple(self.model.segments()), spinner)
        if shown == self._shown:
            return
        self._shown = shown
        # The bar is one line high and as wide as the screen whatever it shows, so a new
        # frame of the spinner needs no layout pass (Static.update's default): one was a
        # layout of the whole screen and a repaint of the transcript ten times a second
        # while busy, more than the streaming answer's own (docs/PERFORMANCE.md).
        self.update(render_status(self.model, width, spinner), layout=False)

    def on_unmount(self) -> None:
        clock_of(self.app).stop(self._tick)

    def _tick(self, now: float) -> None:
        self.refresh_status()


def render_status(model: StatusModel, width: int, spinner: tuple[str, str] | None = None) -> Text:
    """Segments joined by " │ ". While they do not fit, the steps of `SHORTEN_ORDER`
    shorten or drop them one after another; the state, the mode and the cost stay.
    Every text is shown literally (a model name or a state never holds markup or an
    escape sequence)."""
    forms = dict(model.segment_forms())
    order = list(forms)
    if spinner:
        frame, elapsed = spinner
        forms["state"] = [f"{frame} {forms['state'][0]} {elapsed}"]
    level: dict[str, int | None] = dict.fromkeys(order, 0)
    steps = [(name, form) for name, form in SHORTEN_ORDER if name in forms]
    while True:
        text = Text()
        for index, name in enumerate(name for name in order if level[name] is not None):
            if index:
                text.append(" │ ", style="dim")
            shown = forms[name][level[name] or 0]
            text.append(visible(shown), style=STYLES.get(name, ""))
        if text.cell_len <= width or not steps:
            return text
        name, form = steps.pop(0)
        if form is None or form < len(forms[name]):
            level[name] = form
