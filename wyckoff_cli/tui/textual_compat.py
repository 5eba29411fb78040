"""Every use of Textual's private API, in one place (Textual is pinned below 9).

Each helper names why the public API does not do: they are speed measures of the
transcript and the prompt's own key handling. `tests/tui/test_textual_compat.py`
fails loudly, naming the attribute, when a Textual release changes one of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual import events
from textual.app import App
from textual.containers import ScrollableContainer
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import TextArea

# (owner, attribute) pairs this module relies on; checked by the test
PRIVATE_API = (
    ("Widget", "_styles_cache"),
    ("Screen", "_compositor"),
    ("ScrollableContainer", "_anchor_released"),
    ("TextArea", "_on_key"),
    ("App", "_driver"),
)


def forget_line_cache(widget: Widget) -> None:
    """Drop Textual's per-widget line cache. `refresh()` would clear it too, but
    refreshing a widget off screen makes the compositor lay out every entry again."""
    widget._styles_cache.clear()


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
