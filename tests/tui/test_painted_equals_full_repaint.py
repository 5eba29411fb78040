"""What the terminal shows after every update equals a full repaint from nothing.

The transcript keeps painted lines where Textual would drop them (a streamed answer
that grows keeps its lines above the new ones; a size set by a layout pass needs no
second pass, tui/textual_compat.py). Here every update Textual writes is played into
a terminal emulator (pyte) and, after each flush of a streamed answer, the emulator's
screen, characters and colours, must equal a full repaint of the same state with
every widget's line cache emptied: nothing stale stays on screen, the scrollbar
included."""

from __future__ import annotations

from typing import Any

import pyte
import pytest
from textual._compositor import CompositorUpdate
from textual.app import App

from tests.tui.test_frame_clock import long_answer
from tests.tui.test_transcript_widget import TranscriptApp, _new_view, _settle
from tests.waiting import until
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.transcript import RenderableView


class Terminal:
    """A pyte screen the app's updates are played into, as a real terminal gets them."""

    def __init__(self, app: App[Any], size: tuple[int, int]) -> None:
        self.screen = pyte.Screen(*size)
        self.stream = pyte.Stream(self.screen)
        self.app = app
        self.sizes: list[int] = []  # of each update, in characters
        original = app._display

        def display(screen: Any, renderable: Any) -> None:
            if isinstance(renderable, CompositorUpdate):
                data = renderable.render_segments(app.console)
                self.sizes.append(len(data))
                self.stream.feed(data)
            original(screen, renderable)

        app._display = display  # type: ignore[method-assign]

    def cells(self) -> list[list[tuple[str, str, str]]]:
        return cells_of(self.screen)

    def full_repaint(self) -> list[list[tuple[str, str, str]]]:
        """The screen painted whole, every widget's line cache emptied first."""
        screen = self.app.screen
        for widget in screen.walk_children(with_self=True):
            widget._styles_cache.clear()
        fresh = pyte.Screen(self.screen.columns, self.screen.lines)
        update = screen._compositor.render_update(full=True)
        pyte.Stream(fresh).feed(update.render_segments(self.app.console))
        return cells_of(fresh)


def cells_of(screen: pyte.Screen) -> list[list[tuple[str, str, str]]]:
    return [
        [(cell.data, cell.fg, cell.bg) for cell in (screen.buffer[y][x] for x in range(screen.columns))]
        for y in range(screen.lines)
    ]


def differences(painted: list[list[Any]], whole: list[list[Any]]) -> list[str]:
    return [
        f"row {y}: painted {''.join(c[0] for c in a)!r} / whole {''.join(c[0] for c in b)!r}"
        for y, (a, b) in enumerate(zip(painted, whole, strict=True))
        if a != b
    ]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_every_flush_of_a_streamed_answer_paints_what_a_full_repaint_shows(
    size: tuple[int, int],
) -> None:
    answer = long_answer(8)
    app = TranscriptApp()
    async with app.run_test(size=size) as pilot:
        await app.transcript.mount(RenderableView("an earlier message, already on screen"))
        terminal = Terminal(app, size)
        view = await _new_view(app, pilot, MarkdownStreamView())
        checked = grown = 0
        height = view.size.height
        for start in range(0, len(answer), 17):
            view.append(answer[start : start + 17])
            await until(pilot, lambda: not view._dirty, what="the flush")
            await pilot.pause()
            grew = view.size.height != height
            if grew:
                grown += 1
                height = view.size.height
            if grew or start % 85 == 0:
                painted = terminal.cells()
                assert differences(painted, terminal.full_repaint()) == [], f"after {start} characters"
                checked += 1
        view.finish()
        await _settle(pilot, view)
        assert differences(terminal.cells(), terminal.full_repaint()) == []
        assert grown > 3 and checked > 10 and len(terminal.sizes) > checked
        assert app.transcript.max_scroll_y > 0  # the answer outgrew the screen: it scrolled
