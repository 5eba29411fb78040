"""The status bar: model, mode, context used, tokens, cache, cost, background tasks, state."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from wyckoff_cli.session.status import StatusModel

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

    def __init__(self, model: StatusModel, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.model = model

    def on_mount(self) -> None:
        self.refresh_status()

    def on_resize(self) -> None:
        self.refresh_status()

    def refresh_status(self) -> None:
        self.update(render_status(self.model, self.size.width - 2 if self.size.width else 200))


def render_status(model: StatusModel, width: int) -> Text:
    """Segments joined by " │ ", dropping the least important ones that do not fit."""
    segments = model.segments()
    while segments:
        text = Text()
        for index, (name, value) in enumerate(segments):
            if index:
                text.append(" │ ", style="dim")
            text.append(value, style=STYLES.get(name, ""))
        if text.cell_len <= width or len(segments) == 1:
            return text
        segments = segments[:-1]
    return Text()
