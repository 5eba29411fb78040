"""A round's reasoning: streams live, then collapses to one line (duration, size)."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Static

from wyckoff_cli.tui.literal import visible


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
        self.interrupted = False

    def append(self, text: str) -> None:
        self.text += text
        self.update(self._content())

    def finish(self, text: str, duration_ms: int | None) -> None:
        """`duration_ms` None: not known (a session saved before durations were)."""
        self.text = text or self.text
        self.duration_ms = duration_ms
        self.live = False
        self.update(self._content())

    def interrupt(self) -> None:
        """The turn ended (Esc, an error) while this round was still thinking: it stops
        saying "Thinking…" and keeps what was thought, collapsed like a finished one."""
        self.live = False
        self.interrupted = True
        self.duration_ms = None
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
            return Text.assemble(("✻ Thinking…\n", "italic"), (visible(tail), "italic dim"))
        words = len(self.text.split())
        marker = "▾" if self.expanded else "▸"
        took = "Thought" if self.duration_ms is None else f"Thought for {self.duration_ms / 1000:.1f}s"
        if self.interrupted:
            took = "Interrupted while thinking"
        header = Text(f"{marker} {took} ({words} words)", style="italic")
        if self.expanded:
            header.append("\n" + visible(self.text), style="italic dim")
        return header


def collapse_all(widgets: list[Widget], expanded: bool) -> None:
    for widget in widgets:
        if isinstance(widget, ThinkingPane) and not widget.live:
            widget.set_expanded(expanded)
