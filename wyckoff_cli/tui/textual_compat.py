"""Every use of Textual's private API, in one place (Textual is pinned below 9).

Each helper names why the public API does not do: they are speed measures of the
transcript and the prompt's own key handling. `tests/tui/test_textual_compat.py`
fails loudly, naming the attribute, when a Textual release changes one of them.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import selectors
import sys
import threading
from collections.abc import Iterable
from typing import Any

from textual import events
from textual._compositor import Compositor
from textual.app import App
from textual.containers import ScrollableContainer
from textual.geometry import Region
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import TextArea

# (owner, attribute) pairs this module relies on; checked by the test
PRIVATE_API = (
    ("Widget", "_styles_cache"),
    ("Widget", "_size_updated"),
    ("StylesCache", "_cache"),
    ("StylesCache", "_dirty_lines"),
    ("Screen", "_compositor"),
    ("ScrollableContainer", "_anchor_released"),
    ("TextArea", "_on_key"),
    ("App", "_driver"),
    ("Compositor", "render_partial_update"),
    ("Compositor", "_get_renders"),
    ("Compositor", "_dirty_regions"),
    ("LinuxDriver", "run_input_thread"),
    ("LinuxDriver", "_debug"),
    ("XTermParser", "_timeout_time"),
)


def forget_line_cache(widget: Widget) -> None:
    """Drop Textual's per-widget line cache. `refresh()` would clear it too, but
    refreshing a widget off screen makes the compositor lay out every entry again."""
    widget._styles_cache.clear()


class SizedInOnePass(Widget):
    """A widget whose new size, set by a layout pass, needs no second pass.

    Textual's compositor hands each widget its size and virtual size after arranging
    the screen, and the virtual size is a reactive that asks for a layout: every pass
    that changed a size (a streamed answer that grew, the transcript that scrolls with
    it) was followed by a second full pass that found nothing to change, ~3-4 ms each
    (docs/PERFORMANCE.md). The pass that set the size has already arranged and
    repainted with it, as Textual's own scroll path does (`layout=False`).

    A mixin for the last place among a widget's bases: Textual takes default CSS only
    along the first base of each class (`class Transcript(VerticalScroll, SizedInOnePass)`)."""

    def _size_updated(self, size: Any, virtual_size: Any, container_size: Any, layout: bool = True) -> bool:
        return super()._size_updated(size, virtual_size, container_size, layout=False)


class LinesKeptOnGrowth(SizedInOnePass):
    """A widget whose painted lines stay valid when it grows taller.

    Textual drops a widget's whole line cache (its styled lines: padding, background,
    filters) on any change of size. A streamed answer grows a few lines at a time and
    every line above the new ones is unchanged: those are kept (the lines it refreshed
    itself stay dirty), so the full repaint that follows restyles only the new lines.
    Only where a line cannot depend on the height: no bottom border, outline or
    padding, as wide as before."""

    def _size_updated(self, size: Any, virtual_size: Any, container_size: Any, layout: bool = True) -> bool:
        cache = self._styles_cache
        old = self.outer_size
        kept: dict[int, Strip] = {}
        if size.width == old.width and size.height > old.height and self._lines_ignore_height():
            dirty = cache._dirty_lines
            kept = {y: strip for y, strip in cache._cache.items() if y not in dirty}
        resized = super()._size_updated(size, virtual_size, container_size, layout)
        if kept:
            cache._cache.update(kept)
            cache._dirty_lines.difference_update(kept)
        return resized

    def _lines_ignore_height(self) -> bool:
        styles = self.styles
        return styles.gutter.bottom == 0 and styles.outline_bottom[0] in ("", "none")


def visible_widgets(screen: Screen[object]) -> Iterable[Widget]:
    """The widgets with a line on screen as last laid out (the compositor's map, as
    Textual's own scrolling code reads it: `get_widgets_at` row by row costs ~0.3 ms,
    too much for every streamed line)."""
    return screen._compositor.visible_widgets


def anchor_released(container: ScrollableContainer) -> bool:
    """True when the user scrolled an anchored container away from its end
    (`is_anchored` stays true then; Textual exposes no public flag for it)."""
    return bool(container._anchor_released)


class KeyFirstTextArea(TextArea):
    """A TextArea whose subclass sees every key before the editor handles it:
    `handle_key` returns True when it used the key. (TextArea handles keys in its
    private `_on_key`, before bindings, so overriding `on_key` comes too late.)"""

    async def handle_key(self, event: events.Key) -> bool:
        return False

    async def _on_key(self, event: events.Key) -> None:
        if await self.handle_key(event):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)


def write_to_terminal(app: App[Any], data: str) -> None:
    """Write raw bytes (a notification's escape sequence) through the app's driver, in
    order with its frames. Textual writes the bell this way (`App.bell`) but has no
    public call for other sequences; headless (tests) there is no terminal."""
    driver = app._driver
    if driver is not None and not app.is_headless:
        driver.write(data)


class RowsCompositor(Compositor):
    """Textual's compositor, drawing only the cells an update shows.

    Textual draws a frame front to back: the first widget to draw a cell wins it. For a
    partial update it has every widget that overlaps the box around the changed regions
    render all of its visible lines, then writes the changed cells; for a full one, every
    widget renders everything, the screen and the containers under the entries too.
    While an answer streams (its last line and the status bar's spinner change), that
    was the screen's 40 lines, the transcript's and its scroll bar's 36, the answer's
    lines on screen and the prompt, every frame, to write 2 or 3 rows; and after each
    layout pass, the screen and the transcript rendered again under the entries that
    hide them (docs/PERFORMANCE.md). Here each widget, in Textual's order, renders only
    the rows where it holds a cell the update writes that no widget in front has drawn:
    the cells written, and the widget each comes from, are the same."""

    _to_draw: dict[int, list[tuple[int, int]]] | None = None

    def render_partial_update(self) -> Any:
        screen = self.size.region
        to_draw: dict[int, list[tuple[int, int]]] = {}
        for region in self._dirty_regions:
            region = region.intersection(screen)
            for y in region.line_range:
                to_draw[y] = _merged(to_draw.get(y), region.x, region.right)
        self._to_draw = to_draw
        try:
            return super().render_partial_update()
        finally:
            self._to_draw = None

    def render_full_update(self, simplify: bool = False) -> Any:
        width, height = self.size
        self._to_draw = {y: [(0, width)] for y in range(height)}
        try:
            return super().render_full_update(simplify)
        finally:
            self._to_draw = None

    def _get_renders(self, crop: Region | None = None) -> Iterable[tuple[Region, Region, list[Strip]]]:
        to_draw = self._to_draw  # row -> the spans of cells still to draw, sorted, apart
        if to_draw is None or crop is None:
            yield from super()._get_renders(crop)
            return
        for widget, (region, clip) in self.visible_widgets.items():
            if not to_draw:
                return  # every cell is drawn: the widgets behind are hidden
            visible = region.intersection(clip)
            left, right = visible.x, visible.right
            rows = [
                y for y in visible.line_range if (spans := to_draw.get(y)) and _overlap(spans, left, right)
            ]
            for first, end in _runs(rows):
                part = Region(left, first, right - left, end - first)
                strips = widget.render_lines(
                    Region(left - region.x, first - region.y, part.width, part.height)
                )
                for y, strip in zip(part.line_range, strips, strict=False):
                    if strip.cell_length >= part.width:  # a short line draws only what it has
                        rest = _without(to_draw[y], left, right)
                        if rest:
                            to_draw[y] = rest
                        else:
                            del to_draw[y]
                yield region, part, strips


def _overlap(spans: list[tuple[int, int]], left: int, right: int) -> bool:
    return any(start < right and left < end for start, end in spans)


def _merged(spans: list[tuple[int, int]] | None, left: int, right: int) -> list[tuple[int, int]]:
    """`spans` (sorted, apart) with [left, right) added, merging what touches it."""
    kept: list[tuple[int, int]] = []
    for start, end in spans or ():
        if end < left or start > right:
            kept.append((start, end))
        else:
            left, right = min(left, start), max(right, end)
    if left < right:
        kept.append((left, right))
    kept.sort()
    return kept


def _without(spans: list[tuple[int, int]], left: int, right: int) -> list[tuple[int, int]]:
    """`spans` (sorted, apart) less [left, right)."""
    if left <= spans[0][0] and spans[-1][1] <= right:
        return []  # the usual case: a widget as wide as the row's cells to draw
    kept: list[tuple[int, int]] = []
    for start, end in spans:
        if start < left:
            kept.append((start, min(end, left)))
        if end > right:
            kept.append((max(start, right), end))
    return kept


def _runs(rows: list[int]) -> list[tuple[int, int]]:
    """Sorted rows as runs of consecutive rows, each (first, one past the last)."""
    runs: list[tuple[int, int]] = []
    for y in rows:
        if runs and runs[-1][1] == y:
            runs[-1] = (runs[-1][0], y + 1)
        else:
            runs.append((y, y + 1))
    return runs


def draw_changed_rows_only(screen: Screen[Any]) -> None:
    """Give `screen` (before it is mounted) a RowsCompositor in place of Textual's."""
    screen._compositor = RowsCompositor()


if sys.platform != "win32":  # the Linux driver needs termios
    from textual.drivers.linux_driver import LinuxDriver

    class _WakingEvent(threading.Event):
        """The driver's exit flag; setting it also wakes the input thread's `select`
        through the thread's pipe (`wake_fd`, -1 while no thread runs)."""

        def __init__(self) -> None:
            super().__init__()
            self.wake_fd = -1
            self.lock = threading.Lock()

        def set(self) -> None:
            super().set()
            with self.lock:
                if self.wake_fd >= 0:
                    with contextlib.suppress(OSError):
                        os.write(self.wake_fd, b"x")

    class QuietLinuxDriver(LinuxDriver):
        """Textual's terminal driver, its input thread asleep until there is something to do.

        Textual's input thread polls the terminal ten times a second (`select` with a 0.1 s
        timeout), to see its exit flag and to time out a lone Escape: an idle app woke ten
        times a second for nothing. This one waits until a key arrives, the parser's own
        timeout for an escape sequence is due (then exactly, not up to 0.1 s late), or the
        exit flag is set, which writes to a pipe the thread also waits on. Each run of the
        thread has its own pipe (the app suspended for an editor stops it and starts a new
        one)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.exit_event: _WakingEvent = _WakingEvent()

        def run_input_thread(self) -> None:
            from textual._time import get_time
            from textual._xterm_parser import XTermParser

            wake_read, wake_write = os.pipe()
            os.set_blocking(wake_read, False)
            os.set_blocking(wake_write, False)
            flag = self.exit_event
            with flag.lock:
                flag.wake_fd = wake_write
            selector = selectors.SelectSelector()  # as Textual's: a terminal on every platform
            selector.register(self.fileno, selectors.EVENT_READ)
            selector.register(wake_read, selectors.EVENT_READ)
            parser = XTermParser(self._debug)
            decode = codecs.getincrementaldecoder("utf-8")().decode
            try:
                while not flag.is_set():
                    due = parser._timeout_time  # when a pending escape sequence times out
                    timeout = None if due is None else max(0.0, due - get_time())
                    for key, _ in selector.select(timeout):
                        if key.fd == wake_read:
                            with contextlib.suppress(BlockingIOError):
                                os.read(wake_read, 64)
                            continue
                        data = os.read(self.fileno, 4096)
                        if not data:  # the terminal is gone: wait for the exit flag alone
                            selector.unregister(self.fileno)
                            continue
                        for event in parser.feed(decode(data)):
                            self.process_message(event)
                    for event in parser.tick():
                        self.process_message(event)
                for event in parser.tick():  # an escape sequence that timed out meanwhile
                    self.process_message(event)
            finally:
                selector.close()
                with flag.lock:
                    flag.wake_fd = -1
                os.close(wake_read)
                os.close(wake_write)


def quiet_driver_class() -> type[Any] | None:
    """`QuietLinuxDriver` where Textual would use its Linux driver (every POSIX terminal,
    unless `TEXTUAL_DRIVER` names another); None elsewhere, for Textual's own choice."""
    if sys.platform == "win32" or os.environ.get("TEXTUAL_DRIVER"):
        return None
    return QuietLinuxDriver
