"""The status bar: model, mode, context used, tokens, cache, cost, background tasks, state."""

from __future__ import annotations

import time

from rich.text import Text
from textual.timer import Timer
from textual.widgets import Static

from wyckoff_cli.session.status import DROP_ORDER, StatusModel

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

STYLES = {
    "state": "bold",
    "model": "cyan",
    "mode": "magenta",
    "context": "",
    "tokens": "dim",
    "cache": "green",
    "cost": "yellow",
    "background": "cyan",
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
        self._timer: Timer | None = None
        self._frame = 0

    def on_mount(self) -> None:
        self.refresh_status()

    def on_resize(self) -> None:
        self.refresh_status()

    def refresh_status(self) -> None:
        busy = self.spin and self.model.state not in ("idle", "waiting for approval")
        if busy and self.busy_since is None:
            self.busy_since = time.monotonic()
            self._timer = self.set_interval(0.1, self._tick)  # runs only while busy
        elif not busy and self.busy_since is not None:
            self.busy_since = None
            if self._timer is not None:
                self._timer.stop()
                self._timer = None
        spinner = None
        if self.busy_since is not None:
            spinner = (SPINNER[self._frame % len(SPINNER)], f"{time.monotonic() - self.busy_since:.0f}s")
        self.update(render_status(self.model, self.size.width - 2 if self.size.width else 200, spinner))

    def _tick(self) -> None:
        self._frame += 1
        self.refresh_status()


def render_status(model: StatusModel, width: int, spinner: tuple[str, str] | None = None) -> Text:
    """Segments joined by " │ ", dropping the least important ones (`DROP_ORDER`) that
    do not fit; the state and the cost are never dropped."""
    segments = model.segments()
    if spinner:
        frame, elapsed = spinner
        segments = [(n, f"{frame} {v} {elapsed}" if n == "state" else v) for n, v in segments]
    droppable = [name for name in DROP_ORDER if any(n == name for n, _ in segments)]
    while True:
        text = Text()
        for index, (name, value) in enumerate(segments):
            if index:
                text.append(" │ ", style="dim")
            text.append(value, style=STYLES.get(name, ""))
        if text.cell_len <= width or not droppable:
            return text
        dropped = droppable.pop(0)
        segments = [(n, v) for n, v in segments if n != dropped]
