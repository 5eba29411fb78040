"""Simple transcript entries: the user's message and notices."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from wyckoff_cli.core.messages import ImagePart
from wyckoff_cli.tui.literal import literal, visible
from wyckoff_cli.tui.widgets.image_chips import chips_line

NOTICE_STYLES = {
    "info": ("ℹ", "dim"),
    "warning": ("⚠", "bold yellow"),
    "error": ("✗", "bold red"),
    "compaction": ("⇣", "cyan"),
    "retry": ("↻", "yellow"),
    "fallback": ("⇄", "magenta"),
    "background": ("◷", "cyan"),
    "aborted": ("■", "bold red"),
    "queued": ("…", "dim"),
}


class UserMessage(Static):
    DEFAULT_CSS = """
    UserMessage { border-left: thick $accent; padding: 0 1; margin: 1 0 1 0; color: $text; }
    """

    def __init__(self, text: str, **kwargs: object) -> None:
        super().__init__(literal(text), **kwargs)  # type: ignore[arg-type]
        self.text = text

    def show_images(self, images: Sequence[ImagePart]) -> None:
        """The chips of all the message's images under its text, as the message was
        committed (an `@` mention's images are attached then): a chips line of the
        prompt's images becomes the whole line; shown already, nothing changes."""
        line = chips_line(list(images))
        if not line:
            return
        lines = self.text.split("\n")
        if any(lines[-1] == chips_line(list(images[:count])) for count in range(1, len(images) + 1)):
            lines.pop()
        text = "\n".join([*lines, line])
        if text != self.text:
            self.text = text
            self.update(literal(text))


class NoticeLine(Static):
    DEFAULT_CSS = """
    NoticeLine { padding: 0 1; margin: 0 0 1 0; }
    """

    def __init__(self, kind: str, message: str, **kwargs: object) -> None:
        icon, style = NOTICE_STYLES.get(kind, NOTICE_STYLES["info"])
        super().__init__(Text.assemble((f"{icon} ", style), (visible(message), style)), **kwargs)  # type: ignore[arg-type]
        self.kind = kind
        self.message = message
