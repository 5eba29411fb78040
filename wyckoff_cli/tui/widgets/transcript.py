"""The transcript: a scrolling column of entries, most of them line-API widgets.

`Transcript` is a `VerticalScroll` anchored to the bottom: it follows new content
while an answer streams and lets go as soon as the user scrolls up (PageUp, mouse
wheel, scrollbar); scrolling back to the end follows again.

Its entries are ordinary widgets, so the app can put interactive ones in (tool
calls with spinners, expandable thinking). Text entries are `BlockLinesView`s: a
widget with `render_line` that sizes itself to its line count and keeps every line
as a cached `Strip`, so a long entry is one widget and Textual paints only the
lines on screen. `RenderableView` holds one Rich renderable (a user message, a
notice); `MarkdownStreamView` (markdown_stream.py) holds a streamed answer.
See docs/TUI-RENDERING.md.
"""

from __future__ import annotations

import math
import time
from bisect import bisect_right
from typing import Any
from weakref import WeakKeyDictionary

from rich.cells import cell_len
from rich.console import Console, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import App
from textual.containers import VerticalScroll
from textual.geometry import Region, Size
from textual.scrollbar import ScrollBar, ScrollBarCorner
from textual.selection import Selection
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

from wyckoff_cli.tui.textual_compat import (
    LinesKeptOnGrowth,
    SizedInOnePass,
    anchor_released,
    forget_line_cache,
    visible_widgets,
)

__all__ = ["BlockLinesView", "RenderableView", "Transcript", "render_renderable"]

_WIDTHS_KEPT = 2  # strips kept per block: the current width and the one before
SLICE_BUDGET = 0.008
"""Seconds of background re-wrapping per tick, for all entries together."""
SLICE_INTERVAL = 0.02
"""Seconds between background re-wrap ticks."""
RELAYOUT_INTERVAL = 0.25
"""Seconds between layout passes applying heights found by the background re-wrap."""
RELAYOUT_SHARE = 0.2
"""Longest share of the time those layout passes may take. A pass lays out every entry
of the screen, so in a transcript of thousands of entries (a long session with its
earlier messages shown) one takes ~0.3 s, and the passes are spaced further apart."""
PAINT_CACHE_LINES = 2048
"""Finished screen lines (styled, with selection offsets) kept per widget."""
PAINT_KEEP_SCREENS = 2.0
"""Entries shown recently, up to this many screens of lines besides what is on screen,
keep their painted lines cached (ours and Textual's); the others drop them after a
scroll, so memory stays flat however far the user scrolls."""


def render_renderable(renderable: RenderableType, width: int, console: Console) -> list[Strip]:
    options = console.options.update(width=width, min_width=width, max_width=width, height=None)
    return [Strip(line, width) for line in console.render_lines(renderable, options, pad=True)]


class _Rewrapper:
    """Renders entries' blocks in the background (after a resize, or for text given
    before mount), for the whole app at once: however many entries there are, at most
    SLICE_BUDGET of work runs per tick, the entries mounted last (nearest the bottom,
    where the view usually is) first. The heights found are applied with one layout
    pass every RELAYOUT_INTERVAL, not one per tick, or less often when a pass is slow
    (see RELAYOUT_SHARE)."""

    def __init__(self, app: App[object]) -> None:
        self.app = app
        self.pending: dict[BlockLinesView, None] = {}
        self.rendered: set[BlockLinesView] = set()
        self.timer: Timer | None = None
        self.last_layout = 0.0
        self.layout_cost = 0.0  # seconds the last layout pass we caused took (roughly)
        self._due = 0.0  # when the next tick is due
        self._measure = False  # the next tick's delay is the layout pass just asked for

    def add(self, view: BlockLinesView) -> None:
        self.pending[view] = None
        if self.timer is None:
            self._schedule()

    def _schedule(self) -> None:
        self._due = time.perf_counter() + SLICE_INTERVAL
        self.timer = self.app.set_timer(SLICE_INTERVAL, self._tick)

    def _tick(self) -> None:
        self.timer = None
        started = time.perf_counter()
        if self._measure:
            # Since the last tick the event loop ran the layout pass (and repaint) we
            # asked for: how late this tick is tells how long that took.
            self._measure = False
            self.layout_cost = max(0.0, started - self._due)
            self.last_layout = started
        deadline = started + SLICE_BUDGET
        for view in reversed(list(self.pending)):
            if not view.is_attached:
                del self.pending[view]
                continue
            self.rendered.add(view)
            if view._render_for(deadline - time.perf_counter()):
                del self.pending[view]
            if time.perf_counter() >= deadline:
                break
        now = time.perf_counter()
        interval = max(RELAYOUT_INTERVAL, self.layout_cost / RELAYOUT_SHARE)
        if self.rendered and (not self.pending or now - self.last_layout >= interval):
            # Heights change only here (and after a paint), so lines never move on screen
            # between layout passes; an anchored transcript keeps its bottom in place.
            self.last_layout = now
            changed = False
            for view in self.rendered:
                if view.is_attached:
                    changed = view._apply_heights() or changed
            self.rendered.clear()
            self._measure = changed
        if self.pending:
            self._schedule()


_REWRAPPERS: WeakKeyDictionary[App[object], _Rewrapper] = WeakKeyDictionary()


def _rewrapper(view: BlockLinesView) -> _Rewrapper:
    app = view.app
    rewrapper = _REWRAPPERS.get(app)
    if rewrapper is None:
        rewrapper = _REWRAPPERS[app] = _Rewrapper(app)
    return rewrapper


class Block:
    """One block of a view: its source, strips per width, and its height in the layout."""

    __slots__ = ("height", "renderable", "source", "strips")

    def __init__(self, source: str | None = None, renderable: RenderableType | None = None) -> None:
        self.source = source
        self.renderable = renderable
        self.strips: dict[int, list[Strip]] = {}
        self.height = 0

    def store(self, width: int, strips: list[Strip]) -> None:
        if width not in self.strips and len(self.strips) >= _WIDTHS_KEPT:
            del self.strips[next(iter(self.strips))]
        self.strips[width] = strips

    def estimate(self, width: int) -> int:
        """A height guess at `width` for a block not yet rendered at that width."""
        if self.strips:
            old_width, strips = next(reversed(self.strips.items()))
            used = sum(max(1, math.ceil(len(strip.text.rstrip()) / width)) for strip in strips)
            return max(1, used if width < old_width else min(len(strips), used))
        text = self.source if self.source is not None else str(self.renderable)
        return max(1, sum(max(1, math.ceil(len(line) / max(1, width))) for line in text.splitlines()))


class BlockLinesView(LinesKeptOnGrowth):
    """A line-API widget made of blocks of cached strips, one blank line between blocks.

    The widget is `height: auto`: it sizes itself to its line count, and its parent
    (a scrolling container) decides which lines are visible. Subclasses decide how a
    block is rendered (`_render_block`).
    """

    DEFAULT_CSS = """
    BlockLinesView {
        width: 1fr;
        height: auto;
    }
    """
    ALLOW_SELECT = True
    BLOCK_GAP = 1

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._blocks: list[Block] = []
        self._width = 0
        self._starts: list[int] | None = None
        self._total = 0
        self._focus_line = 0
        self._heights_stale = False
        self._line_style: Style | None = None
        self._painted: dict[int, tuple[Strip | None, int, Strip]] = {}
        self._paint_state: tuple[int, Selection | None] | None = None
        self._laid_out = -1  # the height the last layout pass was given
        self.block_renders = 0
        """How many times a block was rendered (for tests and benchmarks)."""
        self.lines_painted = 0
        """How many lines Textual asked for (for tests and benchmarks)."""

    # -- rendering a block --------------------------------------------------

    def _render_block(self, block: Block, width: int) -> list[Strip]:
        raise NotImplementedError

    def _render_at(self, block: Block, width: int) -> list[Strip]:
        strips = block.strips.get(width)
        if strips is None:
            strips = self._render_block(block, width)
            block.store(width, strips)
            self.block_renders += 1
        return strips

    # -- line layout ----------------------------------------------------------

    @property
    def line_count(self) -> int:
        """Lines in the current layout."""
        self._line_starts()
        return self._total

    def _line_starts(self) -> list[int]:
        if self._starts is None:
            starts: list[int] = []
            y = 0
            gap = self.BLOCK_GAP
            for block in self._blocks:
                starts.append(y)
                y += block.height + gap
            self._starts = starts
            self._total = max(0, y - gap) if starts else 0
        return self._starts

    def _locate(self, y: int) -> tuple[int, int] | None:
        starts = self._line_starts()
        if not starts or y < 0 or y >= self._total:
            return None
        index = bisect_right(starts, y) - 1
        local = y - starts[index]
        if local >= self._blocks[index].height:
            return None  # the gap after a block
        return index, local

    def _priority(self) -> list[Block]:
        """Blocks not rendered at the current width, nearest the last painted line first."""
        width = self._width
        focus = self._locate(min(self._focus_line, max(0, self._total - 1)))
        center = focus[0] if focus else len(self._blocks) - 1
        pending = [(abs(i - center), i) for i, b in enumerate(self._blocks) if width not in b.strips]
        pending.sort()
        return [self._blocks[i] for _, i in pending]

    def _set_width(self, width: int) -> None:
        """Adopt a new content width: exact heights where strips for it are cached,
        estimates elsewhere. Nothing is rendered here (this runs inside Textual's layout
        for every entry): lines on screen are rendered when painted, the rest in the
        background, nearest the bottom first."""
        if width == self._width or width <= 0:
            return
        self._width = width
        for block in self._blocks:
            strips = block.strips.get(width)
            block.height = len(strips) if strips is not None else block.estimate(width)
        self._starts = None
        if any(width not in block.strips for block in self._blocks):
            self._render_later()

    def _render_later(self) -> None:
        """Have the blocks not rendered at the current width rendered in the background."""
        if self.is_mounted:
            _rewrapper(self).add(self)

    def _render_for(self, budget: float) -> bool:
        """Render blocks not yet rendered at this width, nearest the screen first, for up
        to `budget` seconds (at least one). Heights are left alone (see `_apply_heights`).
        True when no block is left."""
        width = self._width
        if width <= 0:
            return True
        deadline = time.perf_counter() + budget
        pending = self._priority()
        index = 0
        while index < len(pending):
            self._render_at(pending[index], width)
            index += 1
            if time.perf_counter() > deadline:
                break
        return index == len(pending)

    def _height_fits(self, block: Block, lines: int) -> bool:
        """Whether a block's layout height suits its `lines` rendered lines (subclasses
        may allow some slack, see MarkdownStreamView)."""
        return block.height == lines

    def _apply_heights(self) -> bool:
        """Give rendered blocks their exact heights; lay out again if any changed (and
        say so)."""
        self._heights_stale = False
        changed = False
        for block in self._blocks:
            strips = block.strips.get(self._width)
            if strips is not None and not self._height_fits(block, len(strips)):
                block.height = len(strips)
                changed = True
        if changed:
            self._starts = None
            self.refresh(layout=True)
        return changed

    def ensure_rendered(self) -> None:
        """Render every block at the current width now and make the layout exact."""
        self._render_for(math.inf)
        self._apply_heights()

    # -- Textual hooks ----------------------------------------------------------

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._set_width(width)
        self._laid_out = self._layout_height(self.line_count)
        return self._laid_out

    def _layout_height(self, lines: int) -> int:
        """The height given to the layout for `lines` lines (subclasses may add slack)."""
        return lines

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._line_style = None
        self._painted.clear()
        self.refresh()

    def render_lines(self, crop: Region) -> list[Strip]:
        # Look the width and selection up once per paint, not once per line (both walk
        # the DOM / compositor).
        self._paint_state = (self.size.width, self.text_selection)
        try:
            return super().render_lines(crop)
        finally:
            self._paint_state = None

    def render_line(self, y: int) -> Strip:
        self.lines_painted += 1
        self._focus_line = y
        paint_state = self._paint_state
        width, selection = paint_state if paint_state is not None else (self.size.width, self.text_selection)
        if width != self._width:
            self._set_width(width)
        base: Strip | None = None
        location = self._locate(y)
        if location is not None:
            index, local = location
            block = self._blocks[index]
            strips = block.strips.get(width)
            if strips is None:
                strips = self._render_at(block, width)
            if not self._height_fits(block, len(strips)) and not self._heights_stale:
                # A block on screen with an estimated height: exact after this paint.
                self._heights_stale = True
                self.call_after_refresh(self._apply_heights)
            if local < len(strips):
                base = strips[local]
        if selection is None:
            cached = self._painted.get(y)
            if cached is not None and cached[0] is base and cached[1] == width:
                return cached[2]
        style = self._line_style
        if style is None:
            style = self._line_style = self.rich_style
        if base is None:
            strip = Strip.blank(width, style)
        else:
            # Not base.crop_extend(...).apply_style(...): Textual caches the strips made
            # from a strip on that strip, and the blocks' strips live as long as the
            # transcript, so every line ever painted would stay in memory with them.
            line = base
            if line.cell_length != width:
                line = Strip(list(line), line.cell_length).crop_extend(0, width, None)
            strip = Strip(Segment.apply_style(list(line), style), width)
        if selection is not None:
            return self._highlight(strip, y, selection).apply_offsets(0, y)
        strip = strip.apply_offsets(0, y)
        if len(self._painted) > PAINT_CACHE_LINES:
            self._painted.clear()
        self._painted[y] = (base, width, strip)
        return strip

    def _highlight(self, strip: Strip, y: int, selection: Selection) -> Strip:
        span = selection.get_span(y)
        if span is None:
            return strip
        text = strip.text
        start, end = span
        end = len(text.rstrip()) if end == -1 else min(end, len(text))
        if end <= start:
            return strip
        left, right = cell_len(text[:start]), cell_len(text[:end])
        before, middle, after = strip.divide([left, right, strip.cell_length])
        selected = self.screen.get_component_rich_style("screen--selection")
        return Strip.join([before, middle.apply_style(selected), after])

    def rendered_lines(self) -> list[str]:
        """The text of every line as laid out on screen (trailing spaces removed)."""
        self.ensure_rendered()
        lines = [""] * self.line_count
        for block, start in zip(self._blocks, self._line_starts(), strict=True):
            for offset, strip in enumerate(block.strips.get(self._width, [])):
                lines[start + offset] = strip.text.rstrip()
        return lines

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selection.extract("\n".join(self.rendered_lines())), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self._painted.clear()
        self.refresh()

    def _refresh_from(self, first_line: int) -> None:
        """Repaint from `first_line` down; a layout pass only if the height changed.
        The lines above stay painted, also through that pass (LinesKeptOnGrowth)."""
        layout = self._layout_height(self.line_count) != self._laid_out
        if self._width:
            self.refresh(Region(0, first_line, self._width, max(1, self._total - first_line)), layout=layout)
        elif layout:
            self.refresh(layout=True)


class RenderableView(BlockLinesView):
    """A Rich renderable (user message, notice) as a line-API entry, wrapped per width."""

    DEFAULT_CSS = """
    RenderableView {
        width: 1fr;
        height: auto;
    }
    """

    def __init__(
        self,
        renderable: RenderableType = "",
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._blocks = [Block(renderable=renderable)]

    @property
    def renderable(self) -> RenderableType:
        return self._blocks[0].renderable or ""

    def update(self, renderable: RenderableType) -> None:
        """Replace the content."""
        self._blocks = [Block(renderable=renderable)]
        self._starts = None
        width, self._width = self._width, 0
        if width:
            self._set_width(width)
        self.refresh(layout=True)

    def _render_block(self, block: Block, width: int) -> list[Strip]:
        return render_renderable(block.renderable or "", width, self.app.console)

    def plain_text(self) -> str:
        renderable = self.renderable
        if isinstance(renderable, str | Text):
            return str(renderable)
        return "\n".join(self.rendered_lines())


def _forget_painted_lines(entry: Widget) -> None:
    """Drop an entry's painted lines, ours and Textual's (for one scrolled far off
    screen). Nothing is repainted: if it is shown again its lines are made again from
    its rendered content."""
    if isinstance(entry, BlockLinesView):
        entry._painted.clear()
    forget_line_cache(entry)


class Transcript(VerticalScroll, SizedInOnePass):
    """The chat column. Anchored: follows the end until the user scrolls away.

    The scrollbar gutter is reserved from the start: otherwise the content width
    shrinks when the first answer outgrows the screen, and every block rendered so
    far would have to be re-wrapped.

    Painted lines are cached per entry (by `BlockLinesView` and by Textual), which
    would keep a copy of every line ever scrolled past: after each scroll, the
    entries shown longest ago drop those caches (see PAINT_KEEP_SCREENS).
    """

    DEFAULT_CSS = """
    Transcript {
        height: 1fr;
        scrollbar-gutter: stable;
    }
    """

    def __init__(self, *children: Widget, **kwargs: Any) -> None:
        super().__init__(*children, **kwargs)
        self._paint_cached: dict[Widget, None] = {}  # entries that may hold painted lines
        self._trim_pending = False

    def on_mount(self) -> None:
        self.anchor()

    @property
    def following(self) -> bool:
        """True while the view is pinned to the end (the user has not scrolled up)."""
        return self.is_anchored and not anchor_released(self)

    def follow(self) -> None:
        """Jump to the end and follow new content again."""
        self.anchor()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if round(old_value) == round(new_value) or not self.is_mounted:
            return
        # What is on screen now (before this scroll is painted) was painted; what will be
        # on screen is painted by the next refresh, after which the caches are trimmed.
        self._note_painted()
        if not self._trim_pending:
            self._trim_pending = True
            self.call_after_refresh(self._trim_paint_caches)

    def _note_painted(self) -> list[Widget]:
        """Remember the entries on screen (most recent last); returns them."""
        shown = self._entries_on_screen()
        for entry in shown:
            self._paint_cached.pop(entry, None)
            self._paint_cached[entry] = None
        return shown

    def _trim_paint_caches(self) -> None:
        """Drop the painted lines of the entries shown longest ago, keeping about
        PAINT_KEEP_SCREENS screens of them besides what is on screen."""
        self._trim_pending = False
        for entry in [e for e in self._paint_cached if e.parent is not self]:
            del self._paint_cached[entry]  # removed from the transcript
        shown = set(self._note_painted())
        budget = self.scrollable_content_region.height * PAINT_KEEP_SCREENS
        kept = sum(entry.outer_size.height for entry in self._paint_cached if entry not in shown)
        for entry in list(self._paint_cached):
            if kept <= budget:
                break
            if entry not in shown:
                kept -= entry.outer_size.height
                del self._paint_cached[entry]
                _forget_painted_lines(entry)

    def _entries_on_screen(self) -> list[Widget]:
        """The entries with a line on screen as last laid out."""
        return [
            widget
            for widget in visible_widgets(self.screen)
            if widget.parent is self and not isinstance(widget, ScrollBar | ScrollBarCorner)
        ]

    def export_text(self) -> str:
        """The transcript as plain text: each entry's `plain_text()`, or its rendered lines."""
        parts: list[str] = []
        for child in self.children:
            plain = getattr(child, "plain_text", None)
            if callable(plain):
                parts.append(str(plain()))
            elif isinstance(child, BlockLinesView):
                parts.append("\n".join(child.rendered_lines()))
        return "\n\n".join(part for part in parts if part)
