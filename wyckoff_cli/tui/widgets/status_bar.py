"""The status bar: model, mode, context used, tokens, cache, cost, background tasks, state."""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.segment import Segment
from rich.text import Text
from textual.geometry import Region
from textual.strip import Strip
from textual.visual import VisualType
from textual.widgets import Static

from wyckoff_cli.session.status import SHORTEN_ORDER, StatusModel
from wyckoff_cli.tui.frame_clock import SPINNER, clock_of, spinner_frame
from wyckoff_cli.tui.literal import visible

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
        self._shown: tuple[object, ...] | None = None  # what the bar shows now, but the spinner's glyph
        self._frame = -1  # the spinner's frame shown (its index in SPINNER)
        self._glyph: tuple[int, str] | None = None  # where the spinner's glyph goes, and which
        self._line: tuple[object, Strip] | None = None  # the bar's line without the glyph, and its key
        self._patched: dict[str, Strip] = {}  # that line with each glyph
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
            self._frame = spinner_frame(elapsed)
            spinner = f"{elapsed:.0f}s"
        width = self.size.width - 2 if self.size.width else 200
        shown = (width, tuple(self.model.segments()), spinner)
        glyph = SPINNER[self._frame] if spinner is not None else None
        if shown == self._shown:
            if glyph is not None and self._glyph is not None and glyph != self._glyph[1]:
                # Only the spinner turned: the line Textual rendered stays, one cell changes.
                self._glyph = (self._glyph[0], glyph)
                self._refresh_glyph()
            return
        self._shown = shown
        # A spinner's glyph is a placeholder in the text, drawn over it in render_line:
        # its frames then cost no text layout (Textual's whole visual pipeline
        # was the bar's largest cost while a turn streamed, docs/PERFORMANCE.md).
        text, at = compose_status(self.model, width, None if spinner is None else (" ", spinner))
        self._glyph = (at, glyph) if at is not None and glyph is not None else None
        # The bar is one line high and as wide as the screen whatever it shows, so a new
        # text needs no layout pass (Static.update's default): one was a layout of the
        # whole screen and a repaint of the transcript ten times a second while busy,
        # more than the streaming answer's own (docs/PERFORMANCE.md).
        self.update(text, layout=False)

    def _tick(self, now: float) -> None:
        # Every frame while busy: work only when the spinner's frame or seconds change,
        # and while the seconds stay, only the glyph's cell: what else the bar shows is
        # refreshed by whoever changes it (the chat screen, once per frame with events).
        if self.busy_since is not None:
            elapsed = time.monotonic() - self.busy_since
            frame = spinner_frame(elapsed)
            if self._shown is not None and self._shown[2] == f"{elapsed:.0f}s":
                if frame != self._frame and self._glyph is not None:
                    self._frame = frame
                    self._glyph = (self._glyph[0], SPINNER[frame])
                    self._refresh_glyph()
                return
        self.refresh_status()

    def _refresh_glyph(self) -> None:
        """Repaint the spinner's cell: the terminal gets the cells up to it, not the bar's
        whole row (~600 bytes ten times a second while busy)."""
        if self._glyph is not None:
            self.refresh(Region(self._glyph[0], 0, 1, 1))

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        self._line = None
        super().update(content, layout=layout)

    def render_line(self, y: int) -> Strip:
        glyph = self._glyph
        if y or glyph is None:
            return super().render_line(y)
        key = (self.size, self.styles._cache_key)
        if self._line is None or self._line[0] != key:
            self._line = (key, super().render_line(0))
            self._patched = {}
        line = self._line[1]
        at, frame = glyph
        patched = self._patched.get(frame)
        if patched is None:
            if at >= line.cell_length:
                return line
            cell = list(line.crop(at, at + 1))
            style = cell[0].style if cell else None
            patched = Strip.join(
                [line.crop(0, at), Strip([Segment(frame, style)], 1), line.crop(at + 1, line.cell_length)]
            )
            self._patched[frame] = patched
        return patched

    @property
    def shown_text(self) -> str:
        """The bar's text as on screen, the spinner's glyph included."""
        text = str(self.content)
        if self._glyph is None:
            return text
        at, frame = self._glyph
        return text[:at] + frame + text[at + 1 :]

    def on_unmount(self) -> None:
        clock_of(self.app).stop(self._tick)


def render_status(model: StatusModel, width: int, spinner: tuple[str, str] | None = None) -> Text:
    """Segments joined by " │ ". While they do not fit, the steps of `SHORTEN_ORDER`
    shorten or drop them one after another; the state, the mode and the cost stay.
    Every text is shown literally (a model name or a state never holds markup or an
    escape sequence)."""
    return compose_status(model, width, spinner)[0]


def compose_status(
    model: StatusModel, width: int, spinner: tuple[str, str] | None = None
) -> tuple[Text, int | None]:
    """`render_status`'s text, and the cell where the spinner's glyph is (None without one)."""
    forms = dict(model.segment_forms())
    order = list(forms)
    if spinner:
        frame, elapsed = spinner
        forms["state"] = [f"{frame} {forms['state'][0]} {elapsed}"]
    level: dict[str, int | None] = dict.fromkeys(order, 0)
    steps = [(name, form) for name, form in SHORTEN_ORDER if name in forms]
    while True:
        text = Text()
        glyph_at: int | None = None
        for index, name in enumerate(name for name in order if level[name] is not None):
            if index:
                text.append(" │ ", style="dim")
            if spinner and name == "state":
                glyph_at = text.cell_len
            shown = forms[name][level[name] or 0]
            text.append(visible(shown), style=STYLES.get(name, ""))
        if text.cell_len <= width or not steps:
            return text, glyph_at
        name, form = steps.pop(0)
        if form is None or form < len(forms[name]):
            level[name] = form
