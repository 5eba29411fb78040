"""Moving around the transcript: top, bottom, and finding text in it.

`find_lines(transcript, query)` lists every transcript line holding `query` (case
aside) as (entry, line within the entry); `FindBar` is the one-line input Ctrl+F
opens above the prompt (Enter: next match, Shift+Enter: previous, Esc closes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input

from wyckoff_cli.tui.widgets.transcript import BlockLinesView, Transcript


def entry_lines(entry: Widget) -> list[str]:
    """The lines an entry shows, as plain text."""
    if isinstance(entry, BlockLinesView):
        return entry.rendered_lines()
    from wyckoff_cli.tui.widgets.tool_call import ToolCallView, plain_text

    if isinstance(entry, ToolCallView):
        return plain_text(entry.render_call(), max(20, entry.size.width or 100)).splitlines()
    for attribute in ("text", "message"):
        value = getattr(entry, attribute, None)
        if isinstance(value, str):
            return value.splitlines()
    content = getattr(entry, "content", None)
    return str(content).splitlines() if content is not None else []


def find_lines(transcript: Transcript, query: str) -> list[tuple[Widget, int]]:
    needle = query.lower()
    found: list[tuple[Widget, int]] = []
    if not needle:
        return found
    for entry in transcript.children:
        for number, line in enumerate(entry_lines(entry)):
            if needle in line.lower():
                found.append((entry, number))
    return found


@dataclass
class Finder:
    """The matches of the last search and which one is shown."""

    query: str = ""
    matches: list[tuple[Widget, int]] = field(default_factory=list)
    index: int = -1

    def search(self, transcript: Transcript, query: str) -> int:
        self.query, self.matches, self.index = query, find_lines(transcript, query), -1
        return len(self.matches)

    def step(self, transcript: Transcript, forward: bool = True) -> tuple[int, int] | None:
        """Scroll to the next (or previous) match; (its number, how many) or None."""
        self.matches = [(e, n) for e, n in self.matches if e.is_attached]
        if not self.matches:
            return None
        if self.index < 0:
            # the first step from the bottom goes to the latest match going up
            self.index = len(self.matches) - 1 if not forward else 0
        else:
            self.index = (self.index + (1 if forward else -1)) % len(self.matches)
        entry, line = self.matches[self.index]
        y = entry.virtual_region.y + line - transcript.size.height // 3
        transcript.scroll_to(y=max(0, y), animate=False)
        return self.index + 1, len(self.matches)


class FindBar(Input):
    """Ctrl+F: type, Enter finds the next match, Shift+Enter the previous, Esc closes
    (the chat screen's Esc closes it)."""

    DEFAULT_CSS = """
    FindBar { display: none; height: 3; border: round $warning; }
    FindBar.-open { display: block; }
    """
    BINDINGS = [Binding("shift+enter", "previous", "Previous match", show=False)]

    class Step(Message):
        def __init__(self, query: str, forward: bool) -> None:
            super().__init__()
            self.query = query
            self.forward = forward

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            placeholder="Find in the transcript — Enter next, Shift+Enter previous, Esc closes", **kwargs
        )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Step(self.value, forward=True))

    def action_previous(self) -> None:
        self.post_message(self.Step(self.value, forward=False))
