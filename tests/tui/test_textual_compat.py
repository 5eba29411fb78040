"""The private Textual API Wyckoff uses is still there (all of it in tui/textual_compat.py)."""

from __future__ import annotations

from importlib.metadata import version

from textual.app import App, ComposeResult
from textual.containers import ScrollableContainer, VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static, TextArea

from wyckoff_cli.tui import textual_compat

OWNERS = {
    "Widget": Widget,
    "Screen": Screen,
    "ScrollableContainer": ScrollableContainer,
    "TextArea": TextArea,
    "App": App,
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
