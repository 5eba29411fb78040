"""The streamed assistant answer: a line-API Markdown widget.

`MarkdownStreamView` shows one assistant answer. Text arrives through `append()`
(cheap: it only feeds the block splitter). At most once per frame of the app's one
clock (tui/frame_clock.py) a flush renders
the blocks that finished since the last flush (each exactly once per width, with
Rich's Markdown renderer and Pygments highlighting) and re-renders only the block
still growing. The widget paints with `render_line`: Textual asks only for the
lines on screen, and every line is a cached `Strip`.

Widths are re-wrapped lazily: on a resize every block keeps its strips for the old
width, gets an estimated height for the new one, and is re-rendered when it is
painted, by a bounded pass during layout (nearest to what was last on screen
first), or by a background pass in ~8 ms slices. See docs/TUI-RENDERING.md.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Console
from textual.geometry import Size
from textual.strip import Strip

from wyckoff_cli.tui.frame_clock import FRAME_RATE as CLOCK_RATE
from wyckoff_cli.tui.frame_clock import clock_of
from wyckoff_cli.tui.markdown_blocks import BlockSplitter, last_list_item
from wyckoff_cli.tui.widgets.code_theme import DEFAULT_CODE_THEME
from wyckoff_cli.tui.widgets.transcript import Block, BlockLinesView

if TYPE_CHECKING:
    from wyckoff_cli.tui.widgets.markdown_render import CodeLines

__all__ = ["MarkdownStreamView", "render_markdown"]

_FENCE_START = re.compile(r"^(`{3,}|~{3,})")
RENDERER = "wyckoff_cli.tui.widgets.markdown_render"
"""The renderer's module: imported on first use, or ahead by the chat screen's warm-up."""


def render_markdown(
    source: str,
    width: int,
    console: Console,
    code_theme: str = DEFAULT_CODE_THEME,
    hyperlinks: bool = True,
) -> list[Strip]:
    """Render one Markdown block into strips `width` cells wide (the transcript's hot path);
    links as OSC 8 hyperlinks, or as `text (url)` when `hyperlinks` is False.

    The renderer (markdown_render.py: markdown-it, Rich's Markdown, Pygments, ~30 ms of
    imports) is imported on first use, so it is not on the way to the app's first paint."""
    from wyckoff_cli.tui.widgets.markdown_render import render_markdown as render

    return render(source, width, console, code_theme, hyperlinks)


def render_code_head(
    source: str,
    width: int,
    console: Console,
    code_theme: str,
    drawn: tuple[int, CodeLines] | None,
) -> tuple[list[Strip], CodeLines, bool]:
    """A fenced code block still streaming in: its new lines, or all of them (see
    markdown_render.render_code_head)."""
    from wyckoff_cli.tui.widgets.markdown_render import render_code_head as render

    return render(source, width, console, code_theme, drawn)


def _drawn_code_lines(head: str) -> int:
    """How many lines of code a render of `head` (a fence and whole lines) draws, all of
    them as they will stay: up to the last line with text (trailing blank lines are not
    drawn yet). 0, so that the next render draws the whole block, when that line ends
    with spaces (the render strips them; once a line follows it they are kept) or the
    code starts with a blank line (the lexer drops it, so its lines are counted
    otherwise)."""
    lines = head.split("\n")[1:]
    last = len(lines)
    while last and not lines[last - 1].strip():
        last -= 1
    if not last or lines[last - 1] != lines[last - 1].rstrip() or not lines[0].strip():
        return 0
    return last


def render_code_line(
    line: str, width: int, console: Console, code_theme: str = DEFAULT_CODE_THEME
) -> list[Strip]:
    """One line of code as the code block shows it, without highlighting (cheap)."""
    from wyckoff_cli.tui.widgets.markdown_render import render_code_line as render

    return render(line, width, console, code_theme)


@dataclass(frozen=True, slots=True)
class _CodeHead:
    """The open code block's complete lines as last drawn."""

    source: str
    width: int
    strips: list[Strip]
    lines: int  # its lines of code drawn as they will stay (_drawn_code_lines)
    tokens: CodeLines  # their tokens then


def _common_prefix(old: list[Strip], new: list[Strip]) -> int:
    """How many leading lines two renders of a block share."""
    same = 0
    for before, after in zip(old, new, strict=False):
        if before != after:
            break
        same += 1
    return same


class MarkdownStreamView(BlockLinesView):
    """One assistant answer, streamed as Markdown.

    `append(delta)` buffers (cheap); a flush at most once per frame renders newly
    finished blocks once and re-renders only the growing block. `finish()` ends the
    stream; `discard()` drops the answer (a fallback replaces it).
    """

    DEFAULT_CSS = """
    MarkdownStreamView {
        width: 1fr;
        height: auto;
    }
    """
    FRAME_RATE = CLOCK_RATE
    """Flushes per second at most while text streams: the app's frame clock's rate
    (tui/frame_clock.py). See docs/PERFORMANCE.md."""
    GROW_STEP = 4
    """While a live stream grows, the view's height grows at least this many lines at a
    time (blank lines below the text until they fill), and a fifth of the screen's
    height on a taller screen (`GROW_SCREEN_SHARE`). A layout pass, with the full repaint
    of the transcript that scrolls, costs more than the rest of a frame, and that repaint
    costs as many rows as the screen has: growing a share of the screen at a time keeps
    its cost per line of text the same on any screen (docs/PERFORMANCE.md). Exact once
    finished, and always for text given before mount (a restored answer)."""
    GROW_SCREEN_SHARE = 0.2
    """The share of the screen's height a live stream grows at a time, when that is more
    than `GROW_STEP` lines: 8 lines on a 40-line screen, 4 on a 24-line one."""
    TAIL_SHARE = 0.25
    """Longest share of the time the growing block's re-render may take: a slow one
    (a long code block) stretches the flush interval so it is re-rendered less often."""
    BURST_INTERVAL = 0.25
    """Seconds between flushes while more than a screenful of text arrives per frame (a
    replayed or very fast answer): frames in between could not be read, and each costs
    a layout pass and a full repaint that the stream waits behind. The answer's end is
    still drawn at once (`finish`)."""

    def __init__(
        self,
        markdown: str = "",
        *,
        code_theme: str = DEFAULT_CODE_THEME,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.code_theme = code_theme
        self._splitter = BlockSplitter()
        self._chunks: list[str] = []
        self._finished_blocks = 0  # blocks taken from the splitter
        self._tail: Block | None = None
        self._flush_pending = False
        self._last_flush = 0.0
        self._interval = 1.0 / self.FRAME_RATE
        self._dirty = False
        self._lazy = False  # text arrived before mount: estimate finished blocks' heights
        self._provisional: Block | None = None  # a tail showing a line not yet highlighted
        self._code_head: _CodeHead | None = None
        self._list_head: tuple[str, int, list[Strip]] | None = None  # a growing list's items but the last
        self._deferred = False  # finished blocks left unrendered while streaming
        self._live = False  # text appended after mount: a live stream (GROW_STEP applies)
        self._arrived = 0  # characters appended since the last flush
        self.flushes = 0
        """How many flushes ran (for tests and benchmarks)."""
        if markdown:
            self.append(markdown)

    # -- the API for the app ----------------------------------------------------

    @property
    def markdown(self) -> str:
        """The Markdown source received so far (what a copy of the answer should give)."""
        if len(self._chunks) > 1:
            self._chunks = ["".join(self._chunks)]
        return self._chunks[0] if self._chunks else ""

    @property
    def hyperlinks(self) -> bool:
        """Links as OSC 8 hyperlinks, or as `text (url)`: the app's `hyperlinks` (WyckoffApp
        decides it from `[ui] hyperlinks` and the terminal); True in an app without one."""
        return bool(getattr(self.app, "hyperlinks", True))

    @property
    def is_finished(self) -> bool:
        return self._splitter.closed

    @property
    def is_settled(self) -> bool:
        """Finished, flushed, and every block rendered at the current width (text given
        before mount, such as a restored answer, is rendered lazily: what is on screen
        when painted, the rest in the background)."""
        return (
            self.is_finished
            and not self._dirty
            and self._width > 0
            and all(
                self._width in block.strips and block.height == len(block.strips[self._width])
                for block in self._blocks
            )
        )

    def append(self, delta: str) -> None:
        """Add streamed text. Cheap: rendering happens at most once per frame."""
        if not delta:
            return
        if self._splitter.closed:
            raise RuntimeError("append() after finish()")
        self._chunks.append(delta)
        self._arrived += len(delta)
        self._splitter.feed(delta)
        self._dirty = True
        if not self.is_mounted:
            self._lazy = True  # e.g. a restored answer: render what is on screen first
        else:
            self._live = True
        self._schedule_flush()

    def finish(self) -> None:
        """End of the answer: the growing block becomes final and is shown at once."""
        if self._splitter.closed:
            return
        self._splitter.close()
        self._dirty = True
        if self._width and self.is_mounted:
            self._flush()

    def discard(self, remove: bool = True) -> None:
        """Drop the partial answer (a fallback retried elsewhere). Removes the widget
        unless `remove` is False, in which case the view is empty and can stream again."""
        self._splitter = BlockSplitter()
        self._chunks = []
        self._blocks = []
        self._finished_blocks = 0
        self._tail = None
        self._provisional = None
        self._code_head = None
        self._list_head = None
        self._deferred = False
        self._dirty = False
        self._arrived = 0
        self._starts = None
        if remove and self.parent is not None:
            self.remove()
        else:
            self.refresh(layout=True)

    def plain_text(self) -> str:
        return self.markdown

    # -- flushing -----------------------------------------------------------------

    def _schedule_flush(self) -> None:
        if self._flush_pending or not self.is_mounted:
            return
        self._flush_pending = True
        clock_of(self.app).request(self._on_frame)

    def _on_frame(self) -> None:
        self._flush_pending = False
        if not self.is_attached:
            return
        if self._interval > 1.0 / self.FRAME_RATE and time.perf_counter() < self._last_flush + self._interval:
            self._schedule_flush()  # a slow growing block: skip frames (TAIL_SHARE)
            return
        self._flush()

    def on_mount(self) -> None:
        if self._dirty:
            # Not _schedule_flush(): `is_mounted` is still False while on_mount runs, so
            # it would do nothing, and a view laid out before that (a restored answer
            # among many mounted at once) would stay empty.
            self.call_later(self._flush)

    def _flush(self, repaint: bool = True) -> None:
        """Render what changed since the last flush and repaint it (`repaint` False: in
        the view's first layout pass, which sizes and paints it anyway)."""
        if not self._dirty:
            return
        width = self._width
        if width <= 0:
            return  # not laid out yet: get_content_height() sets the width, then we flush
        self._dirty = False
        self.flushes += 1
        first_changed = len(self._blocks) - (1 if self._tail is not None else 0)
        if self._tail is not None:
            self._blocks.pop()
        finished = self._splitter.finished
        tail = previous_tail = self._tail
        lazy, self._lazy = self._lazy, False
        new_blocks: list[Block] = []
        for source in finished[self._finished_blocks :]:
            block = Block(source)
            if tail is not None and tail.source == source and tail is not self._provisional:
                block = tail  # the growing block is final exactly as last rendered
                tail = None
            self._tail = None
            new_blocks.append(block)
        # Render the new blocks from the bottom up, a screen's worth of lines. Those
        # above that (a fast stream scrolls past them before the frame is painted) get
        # an estimated height and are rendered when painted, or in the background once
        # the answer is finished: the last line reaches the screen first.
        budget = 0 if lazy else self._render_budget()
        for block in reversed(new_blocks):
            if width in block.strips or budget > 0:
                block.height = len(self._render_at(block, width))
                budget -= block.height
            else:
                block.height = block.estimate(width)
                self._deferred = True
        self._blocks.extend(new_blocks)
        if lazy or (self._deferred and self._splitter.closed):
            self._deferred = False
            self._render_later()
        self._finished_blocks = len(finished)
        tail_cost = 0.0
        source = self._splitter.tail
        if source:
            if tail is None or tail.source != source or width not in tail.strips:
                tail_started = time.perf_counter()
                tail = self._tail = Block(source)
                lines = len(self._render_at(tail, width))
                tail_cost = time.perf_counter() - tail_started
                if previous_tail is not None and first_changed == len(self._blocks):
                    # The same block still growing: never shrink it by one line (a line
                    # that just ended and the next not yet begun would otherwise cost
                    # two layout passes and a jiggle).
                    tail.height = max(lines, min(previous_tail.height, lines + 1))
                else:
                    tail.height = lines
            self._blocks.append(tail)
        self._tail = tail if source else None
        if self._provisional is not self._tail:
            self._provisional = None  # that growing block is gone (finished and rendered whole)
        self._starts = None
        starts = self._line_starts()
        self._last_flush = time.perf_counter()
        self._interval = max(1.0 / self.FRAME_RATE, tail_cost / self.TAIL_SHARE)
        arrived, self._arrived = self._arrived, 0
        if self._live and arrived > self._screen_cells():
            self._interval = max(self._interval, self.BURST_INTERVAL)
        if not repaint:
            return
        first_line = starts[first_changed] if first_changed < len(starts) else self._total
        growing = self._tail  # None once the answer is finished: then repaint the whole last block
        if previous_tail is not None and growing is not None and first_changed == len(starts) - 1:
            # Only the growing block changed: repaint from its first changed line (usually
            # just the last one), not the whole block.
            first_line += _common_prefix(previous_tail.strips.get(width, []), growing.strips.get(width, []))
        else:
            first_line = max(0, first_line - self.BLOCK_GAP)
        self._refresh_from(first_line)

    def _layout_height(self, lines: int) -> int:
        # While the answer streams, its height grows in steps of `grow_step` lines: a
        # layout pass (and a full repaint, as the transcript scrolls) every few lines,
        # not every line. Finished, or given whole before mount (a restored answer): exact.
        if self._splitter.closed or not self._live or lines == 0:
            return lines
        step = self.grow_step
        return -(-lines // step) * step

    @property
    def grow_step(self) -> int:
        """Lines a live stream's height grows at a time on this screen (see GROW_STEP)."""
        rows = self.app.size.height if self.is_attached else 0
        return max(self.GROW_STEP, int(rows * self.GROW_SCREEN_SHARE))

    def _screen_cells(self) -> int:
        size = self.app.size if self.is_attached else None
        return size.width * size.height if size else 1 << 30

    def _render_budget(self) -> int:
        """Lines of new blocks worth rendering in a flush: what the screen can show."""
        return max(24, self.app.size.height) if self.is_attached else 1 << 30

    def _height_fits(self, block: Block, lines: int) -> bool:
        # The growing block may keep one spare line (see _flush).
        return block.height == lines or (block is self._tail and block.height == lines + 1)

    def _set_width(self, width: int) -> None:
        previous = self._width
        super()._set_width(width)
        if previous == 0 and self._width and self._dirty and self.is_mounted:
            if self._lazy:
                # Text given before mount (a restored answer, or a round's mounted with
                # the others at a frame, tui/entry_batch.py), laid out for the first time:
                # its blocks get their (estimated) heights in this pass, not the next.
                # Nothing is rendered but a growing block (see `_flush`).
                self._flush(repaint=False)
            else:
                self.call_later(self._flush)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if not self._width and width > 0 and self._live and self._dirty:
            # A stream's first text, which came before the view's first layout: rendered
            # for this layout pass, which then paints it, rather than by the flush that
            # `_set_width` asks for (a frame later; it finds nothing left to do).
            self._set_width(width)
            self._flush(repaint=False)
        return super().get_content_height(container, viewport, width)

    def _render_block(self, block: Block, width: int) -> list[Strip]:
        source = block.source or ""
        if block is self._provisional:
            self._provisional = None
        if block is self._tail and self._splitter.in_fence and _FENCE_START.match(source):
            strips, provisional = self._render_open_code(source, width)
            if provisional:
                self._provisional = block
            return strips
        if block is self._tail and (last := last_list_item(source)):
            self._provisional = block  # finished, the list is rendered whole
            return self._render_list_head(source[:last].rstrip("\n"), width) + render_markdown(
                source[last:], width, self.app.console, self.code_theme, self.hyperlinks
            )
        return render_markdown(source, width, self.app.console, self.code_theme, self.hyperlinks)

    def _render_list_head(self, head: str, width: int) -> list[Strip]:
        """A growing bullet list's items before the last: rendered once (a list's lines are
        its items' lines, each item rendered alone, markdown_blocks.last_list_item)."""
        cached = self._list_head
        if cached is None or cached[0] != head or cached[1] != width:
            strips = render_markdown(head, width, self.app.console, self.code_theme, self.hyperlinks)
            cached = self._list_head = (head, width, strips)
        return cached[2]

    def _render_open_code(self, source: str, width: int) -> tuple[list[Strip], bool]:
        """The growing block is a fenced code block: highlight each complete line once,
        in the context of the lines before it, and show the line still arriving without
        highlighting until it ends."""
        head, _, partial = source.rpartition("\n")
        if not head:
            return [], False  # only the opening fence has arrived
        cached = self._code_head
        console = self.app.console
        if cached is not None and cached.source == head and cached.width == width:
            strips = cached.strips
        elif "\n" not in head:
            strips = []  # the fence line only
        else:
            drawn = None  # lines drawn already: the same block at the same width, grown by lines
            if (
                cached is not None
                and cached.width == width
                and cached.lines
                and head.startswith(cached.source + "\n")
            ):
                drawn = (cached.lines, cached.tokens)
            new, tokens, follow = render_code_head(head, width, console, self.code_theme, drawn)
            strips = cached.strips + new if follow and cached is not None else new
            self._code_head = _CodeHead(head, width, strips, _drawn_code_lines(head), tokens)
        if not partial:
            return strips, False
        return strips + render_code_line(partial, width, console, self.code_theme), True
