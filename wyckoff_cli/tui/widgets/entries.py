"""Simple transcript entries: the user's message and notices."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from wyckoff_cli.tui.literal import literal, visible

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


class NoticeLine(Static):
    DEFAULT_CSS = """
    NoticeLine { padding: 0 1; margin: 0 0 1 0; }
    """

    def __init__(self, kind: str, message: str, **kwargs: object) -> None:
        icon, style = NOTICE_STYLES.get(kind, NOTICE_STYLES["info"])
        super().__init__(Text.assemble((f"{icon} ", style), (visible(message), style)), **kwargs)  # type: ignore[arg-type]
        self.kind = kind
        self.message = message
