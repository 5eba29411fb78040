"""Showing a resumed session: the last messages at once, earlier ones on demand."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from wyckoff_cli.core.messages import Message
from wyckoff_cli.tui.widgets.entries import NoticeLine, UserMessage
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.thinking import ThinkingPane
from wyckoff_cli.tui.widgets.tool_call import ToolCallView
from wyckoff_cli.tui.widgets.transcript import Transcript

SHOWN_AT_ONCE = 50


class LoadEarlier(Static, can_focus=True):
    """Click (or Enter) to show earlier messages."""

    def __init__(self, transcript: Transcript, messages: Sequence[Message]) -> None:
        super().__init__(
            Text(f"↑ {len(messages)} earlier messages — click or Enter to show", style="dim italic")
        )
        self.transcript = transcript
        self.messages = messages

    def on_click(self) -> None:
        self.show_earlier()

    def key_enter(self) -> None:
        self.show_earlier()

    def show_earlier(self) -> None:
        widgets = widgets_for(self.messages[-SHOWN_AT_ONCE:])
        rest = self.messages[:-SHOWN_AT_ONCE]
        if rest:
            widgets.insert(0, LoadEarlier(self.transcript, rest))
        self.transcript.mount_all(widgets, after=self)
        self.remove()


def replay_history(transcript: Transcript, history: Sequence[Message]) -> None:
    start = max(0, len(history) - SHOWN_AT_ONCE)
    while start > 0 and history[start].role == "tool":  # never split a call from its results
        start -= 1
    widgets = widgets_for(history[start:])
    if start:
        widgets.insert(0, LoadEarlier(transcript, history[:start]))
    transcript.mount_all(widgets)
    transcript.follow()


def widgets_for(messages: Sequence[Message]) -> list[Widget]:
    widgets: list[Widget] = []
    calls: dict[str, ToolCallView] = {}
    for message in messages:
        if message.role == "user":
            synthetic = message.meta.get("synthetic")
            if synthetic:
                widgets.append(
                    NoticeLine("retry" if synthetic == "loop_guard" else "background", message.text[:300])
                )
            else:
                widgets.append(UserMessage(message.text))
        elif message.role == "assistant":
            for thinking in message.thinking:
                pane = ThinkingPane()
                pane.finish(thinking.text, 0)
                widgets.append(pane)
            if message.text:
                widgets.append(MarkdownStreamView(message.text))
            for call in message.tool_calls:
                view = ToolCallView(call.id, call.name, call.arguments)
                calls[call.id] = view
                widgets.append(view)
        else:
            answered = calls.get(message.tool_call_id or "")
            if answered is None:
                continue
            if message.is_error:
                answered.fail(message.text, 0)
            else:
                answered.succeed(message.text, 0, None)
            answered.elapsed_ms = None
    return widgets
