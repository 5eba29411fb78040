"""A round's reasoning: streams live, then collapses to one line (duration, size)."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Static


class ThinkingPane(Static, can_focus=True):
    """Click or Enter toggles; `ChatScreen` toggles all with Ctrl+O."""

    DEFAULT_CSS = """
    ThinkingPane { color: $text-muted; padding: 0 1; margin: 0 0 1 0; }
    ThinkingPane:focus { background: $boost; }
    """
    BINDINGS = [Binding("enter,space", "toggle_open", "Expand/collapse", show=False)]

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.text = ""
        self.live = True
        self.expanded = False
        self.duration_ms: int | None = 0

    def append(self, text: str) -> None:
        self.text += text
        self.update(self._content())

    def finish(self, text: str, duration_ms: int | None) -> None:
        """`duration_ms` None: not known (a session saved before durations were)."""
        self.text = text or self.text
        self.duration_ms = duration_ms
        self.live = False
        self.update(self._content())

    def action_toggle_open(self) -> None:
        self.set_expanded(not self.expanded)

    def set_expanded(self, expanded: bool) -> None:
        self.expanded = expanded
        self.update(self._content())

    def on_click(self) -> None:
        self.action_toggle_open()

    def _content(self) -> Text:
        if self.live:
            tail = self.text[-600:]
            return Text.assemble(("✻ Thinking…\n", "italic"), (tail, "italic dim"))
        words = len(self.text.split())
        marker = "▾" if self.expanded else "▸"
        took = "Thought" if self.duration_ms is None else f"Thought for {self.duration_ms / 1000:.1f}s"
        header = Text(f"{marker} {took} ({words} words)", style="italic")
        if self.expanded:
            header.append("\n" + self.text, style="italic dim")
        return header


def collapse_all(widgets: list[Widget], expanded: bool) -> None:
    for widget in widgets:
        if isinstance(widget, ThinkingPane) and not widget.live:
            widget.set_expanded(expanded)
