"""The private Textual API Wyckoff uses is still there (all of it in tui/textual_compat.py)."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from rich.segment import Segment
from textual._compositor import Compositor
from textual._styles_cache import StylesCache
from textual._xterm_parser import XTermParser
from textual.app import App, ComposeResult
from textual.containers import Horizontal, ScrollableContainer, VerticalScroll
from textual.drivers.linux_driver import LinuxDriver
from textual.geometry import Region
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static, TextArea

from tests.tui.support import quiet_driver
from tests.waiting import until
from wyckoff_cli.tui import textual_compat

OWNERS = {
    "Widget": Widget,
    "Screen": Screen,
    "ScrollableContainer": ScrollableContainer,
    "TextArea": TextArea,
    "App": App,
    "Compositor": Compositor,
    "LinuxDriver": LinuxDriver,
    "XTermParser": XTermParser,
    "StylesCache": StylesCache,
}


def test_textual_is_below_the_next_major() -> None:
    assert int(version("textual").split(".")[0]) == 8, "textual_compat.py was written for Textual 8"


async def test_every_private_attribute_used_exists_on_a_live_app() -> None:
    class Probe(App[None]):
        def compose(self) -> ComposeResult:
            with VerticalScroll():
                yield Static("x")
            yield TextArea()

    async with Probe().run_test() as pilot:
        live = {
            "Widget": pilot.app.query_one(Static),
            "Screen": pilot.app.screen,
            "ScrollableContainer": pilot.app.query_one(VerticalScroll),
            "TextArea": pilot.app.query_one(TextArea),
            "App": pilot.app,
            "Compositor": pilot.app.screen._compositor,
            "LinuxDriver": quiet_driver(pilot.app),
            "XTermParser": XTermParser(),
            "StylesCache": pilot.app.query_one(Static)._styles_cache,
        }
        missing = [
            f"{owner}.{name}" for owner, name in textual_compat.PRIVATE_API if not hasattr(live[owner], name)
        ]
        assert missing == [], f"Textual changed its private API: {missing} (see tui/textual_compat.py)"
        assert all(isinstance(live[owner], OWNERS[owner]) for owner, _ in textual_compat.PRIVATE_API)
        # and the helpers work against it
        static = live["Widget"]
        textual_compat.forget_line_cache(static)
        assert static in list(textual_compat.visible_widgets(pilot.app.screen))
        assert textual_compat.anchor_released(live["ScrollableContainer"]) in (True, False)


class _Terminal(App[None]):
    """An app that believes it has a terminal (the headless driver still runs it)."""

    pretend_terminal = False

    @property
    def is_headless(self) -> bool:
        return not self.pretend_terminal


async def test_write_to_terminal_goes_through_the_driver_and_not_headless() -> None:
    written: list[str] = []
    app = _Terminal()
    async with app.run_test():
        driver = app._driver
        assert driver is not None
        driver.write = written.append  # type: ignore[method-assign]
        textual_compat.write_to_terminal(app, "\x07")
        assert written == []  # headless: no terminal to ring
        app.pretend_terminal = True
        textual_compat.write_to_terminal(app, "\x1b]9;hi\x07")
        app.pretend_terminal = False
        assert written == ["\x1b]9;hi\x07"]


class _RowsScreen(Screen[None]):
    """Overlapping widgets of every kind the chat screen has: a scrolling transcript of
    styled lines with its scroll bar, a bordered editor beside a panel, a bar below."""

    CSS = """
    _RowsScreen { layers: base float; }
    #float { layer: float; offset: 12 4; width: 24; height: 4; background: red 40%; border: tall $accent; }
    VerticalScroll { height: 1fr; }
    .line { background: $panel; color: $text; }
    Horizontal { height: 5; }
    TextArea { width: 2fr; border: round $accent; }
    #side { width: 1fr; border: solid red; padding: 0 1; }
    #bar { height: 1; background: $primary; }
    """

    def __init__(self) -> None:
        super().__init__()
        textual_compat.draw_changed_rows_only(self)

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            for n in range(40):
                yield Static(f"[b]line {n}[/b] " + "word " * (n % 9), classes="line" if n % 3 else "")
        with Horizontal():
            yield TextArea("def f():\n    return 1\n", language=None)
            yield Static("a panel\nwith lines", id="side")
        yield Static("status ⠋ busy 3s", id="bar")
        yield Static("a toast over the lines", id="float")  # on a layer above, half transparent


class _RowsApp(App[None]):
    def on_mount(self) -> None:
        self.push_screen(_RowsScreen())


DIRTY = [
    [Region(0, 3, 60, 1)],  # one streamed line
    [Region(0, 12, 60, 1), Region(2, 23, 1, 1)],  # a line and the spinner's cell, far apart
    [Region(10, 0, 5, 2), Region(0, 14, 60, 3), Region(30, 21, 20, 2), Region(0, 23, 60, 1)],
    [Region(35, 18, 25, 5)],  # inside the bordered panel only
    [Region(0, 0, 60, 23)],  # the transcript scrolled: nearly everything
    [Region(0, 22, 60, 2), Region(0, 0, 4, 1)],  # the first and the last rows
]


@pytest.mark.parametrize("regions", DIRTY)
async def test_the_rows_compositor_draws_exactly_what_textuals_own_draws(regions: list[Region]) -> None:
    app = _RowsApp()
    async with app.run_test(size=(60, 24)) as pilot:
        await pilot.pause()
        compositor = app.screen._compositor
        assert isinstance(compositor, textual_compat.RowsCompositor)
        app.screen.query_one(VerticalScroll).scroll_to(y=7, animate=False)
        await pilot.pause()
        compositor._dirty_regions.update(regions)
        stock = Compositor.render_partial_update(compositor)  # Textual's, on the same map
        compositor._dirty_regions.update(regions)
        rows = compositor.render_partial_update()
        assert stock is not None and rows is not None
        assert rows.render_segments(app.console) == stock.render_segments(app.console)
        assert rows.spans == stock.spans
        # a full update too: every cell, the screen and the containers under the widgets
        full = compositor.render_full_update()
        assert full.render_segments(app.console) == Compositor.render_full_update(compositor).render_segments(
            app.console
        )


async def test_the_rows_compositor_renders_only_the_changed_rows() -> None:
    rendered: list[tuple[str, int]] = []

    class Counted(Static):
        def render_lines(self, crop: Region) -> list:  # type: ignore[type-arg]
            rendered.append((str(self.id), crop.height))
            return super().render_lines(crop)

    class Tall(_RowsScreen):
        def compose(self) -> ComposeResult:
            yield Counted("\n".join(f"row {n}" for n in range(20)), id="tall")
            yield Counted("bar", id="bar")

    class TallApp(App[None]):
        def on_mount(self) -> None:
            self.push_screen(Tall())

    app = TallApp()
    async with app.run_test(size=(40, 24)) as pilot:
        await pilot.pause()
        bar_row = app.screen.query_one("#bar").region.y
        assert bar_row >= 20
        rendered.clear()
        app.screen._compositor._dirty_regions.update([Region(0, 2, 40, 1), Region(0, bar_row, 3, 1)])
        assert app.screen._compositor.render_partial_update() is not None
        # the tall widget draws its one changed row, not the 20 between it and the bar
        assert sorted(rendered) == [("bar", 1), ("tall", 1)]


async def test_the_chat_screen_draws_with_the_rows_compositor(tmp_path: Path) -> None:
    from tests.tui.support import make_app

    app, _ = make_app(tmp_path, [])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen._compositor, textual_compat.RowsCompositor)


class _Growing(textual_compat.LinesKeptOnGrowth):
    """`height` lines, each naming its row and how often it was drawn; counts draws."""

    DEFAULT_CSS = "_Growing { height: auto; }"

    def __init__(self, height: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lines = height
        self.drawn: list[int] = []

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        return self.lines

    def render_line(self, y: int) -> Strip:
        self.drawn.append(y)
        return Strip([Segment(f"row {y} drawn {self.drawn.count(y)}")])


class _GrowApp(App[None]):
    CSS = "VerticalScroll { height: 1fr; }"

    def __init__(self, view: _Growing) -> None:
        super().__init__()
        self.view = view

    def compose(self) -> ComposeResult:
        with _OnePassScroll():
            yield self.view


class _OnePassScroll(VerticalScroll, textual_compat.SizedInOnePass):
    pass


async def test_a_widget_that_grows_keeps_its_lines_and_needs_one_layout_pass(monkeypatch: Any) -> None:
    app = _GrowApp(_Growing(6))
    layouts: list[object] = []
    original = Screen._refresh_layout

    def counted(self: Screen[Any], *args: Any, **kwargs: Any) -> None:
        layouts.append(self)
        original(self, *args, **kwargs)

    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        view = app.view
        assert sorted(view.drawn) == list(range(6))
        monkeypatch.setattr(Screen, "_refresh_layout", counted)
        view.drawn.clear()
        view.lines = 9
        view.refresh(Region(0, 5, 40, 4), layout=True)  # its last line changed, and it grew
        await until(pilot, lambda: view.size.height == 9, what="the widget to grow")
        await pilot.pause()
        # the lines above the changed one were not drawn again; the changed and new ones were
        assert sorted(view.drawn) == [5, 6, 7, 8]
        assert len(layouts) == 1, "a second layout pass after the one that set the size"
        assert app.query_one(_OnePassScroll).styles.overflow_y == "auto"  # VerticalScroll's CSS kept


async def test_a_widget_whose_lines_depend_on_its_height_draws_them_all_again() -> None:
    view = _Growing(6)
    view.styles.padding = (0, 0, 1, 0)  # a bottom padding moves as it grows
    app = _GrowApp(view)
    async with app.run_test(size=(40, 14)) as pilot:
        await pilot.pause()
        view.drawn.clear()
        view.lines = 8
        view.refresh(Region(0, 5, 40, 1), layout=True)
        await until(pilot, lambda: view.outer_size.height == 9, what="the widget to grow")
        await pilot.pause()
        assert sorted(view.drawn) == list(range(8))
