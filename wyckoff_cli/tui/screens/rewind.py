"""Screens for /rewind, /undo, /redo and /diff (the requests are answered in
session/checkpoint_requests.py; tui/chat_requests.py shows these).

- `RewindPickerScreen(points)`: the session's user messages, newest first, each with
  the files changed after it; Enter picks one, then one of the three choices (code and
  conversation · conversation only · code only). Dismisses with a `RewindSelection`, or
  None on Esc (Esc on the choices goes back to the messages).
- `RestorePreviewScreen(title, text)`: what a restore will do (a plan's
  `preview_text()` or a rewind preview's `text()`), files changed by hand highlighted
  and the diff coloured; `y`/Enter on "Restore" confirms (True), `n`/Esc cancels,
  PgUp/PgDn scroll the preview.
- `DiffScreen(diff)`: the session's changes (/diff), coloured; Esc or `q` closes.
- `DoubleEscape`: tells the prompt when Esc was pressed twice quickly (Esc Esc on an
  empty input opens the picker).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from wyckoff_cli.session.checkpoint_requests import CHOICES, RewindChoice, RewindPoint
from wyckoff_cli.tui.literal import literal, visible
from wyckoff_cli.tui.widgets.diff import render_diff

GRACE_SECONDS = 0.3  # keys this soon after a confirmation dialog opens are ignored
DOUBLE_ESCAPE_SECONDS = 0.6


class DoubleEscape:
    """Call `press()` on each Esc; it returns True on the second within the window."""

    def __init__(
        self, window: float = DOUBLE_ESCAPE_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.window = window
        self.clock = clock
        self._last: float | None = None

    def press(self) -> bool:
        now = self.clock()
        if self._last is not None and now - self._last <= self.window:
            self._last = None
            return True
        self._last = now
        return False


@dataclass(frozen=True)
class RewindSelection:
    point: RewindPoint
    choice: RewindChoice


class RewindPickerScreen(ModalScreen[RewindSelection | None]):
    DEFAULT_CSS = """
    RewindPickerScreen { align: center middle; }
    RewindPickerScreen > Vertical {
        width: 90%; max-width: 120; height: auto; max-height: 90%;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    RewindPickerScreen #title { text-style: bold; margin: 0 0 1 0; }
    RewindPickerScreen OptionList { height: auto; max-height: 20; border: none; }
    RewindPickerScreen #choices, RewindPickerScreen.-choosing #messages { display: none; }
    RewindPickerScreen.-choosing #choices { display: block; }
    RewindPickerScreen #hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "back", "Back", show=False)]

    def __init__(self, points: Sequence[RewindPoint]) -> None:
        super().__init__()
        self.points = list(points)
        self.point: RewindPoint | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Rewind to before which message?", id="title")
            if self.points:
                yield OptionList(
                    *(Option(literal(p.label), id=f"m{i}") for i, p in enumerate(self.points)), id="messages"
                )
            else:
                yield Static("No messages in this session yet.", id="messages")
            yield OptionList(
                *(Option(f"{i}  {c.label}", id=c.value) for i, c in enumerate(CHOICES, start=1)), id="choices"
            )
            yield Static("Enter chooses · Esc goes back", id="hint")

    def on_mount(self) -> None:
        if self.points:
            self.query_one("#messages", OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        option_id = event.option.id or ""
        if event.option_list.id == "messages":
            self.point = self.points[int(option_id[1:])]
            self.add_class("-choosing")
            self.query_one("#title", Static).update(literal(f"Rewind to before: {self.point.label}"))
            self.query_one("#choices", OptionList).focus()
        elif self.point is not None:
            self.dismiss(RewindSelection(self.point, RewindChoice(option_id)))

    def on_key(self, event: events.Key) -> None:
        if self.has_class("-choosing") and event.character in ("1", "2", "3") and self.point is not None:
            event.stop()
            self.dismiss(RewindSelection(self.point, CHOICES[int(event.character) - 1]))

    def action_back(self) -> None:
        if self.has_class("-choosing"):
            self.remove_class("-choosing")
            self.point = None
            self.query_one("#title", Static).update("Rewind to before which message?")
            self.query_one("#messages", OptionList).focus()
            return
        self.dismiss(None)


def render_restore_preview(text: str) -> RenderableType:
    """A preview's text with its parts styled: files changed by hand and warnings stand
    out, the diff is coloured."""
    head, marker, diff = text.partition("\ndiff --git ")
    lines = Text()
    for number, line in enumerate(visible(head).rstrip("\n").splitlines()):
        if number:
            lines.append("\n")
        if "! changed by you" in line:
            style = "bold yellow"
        elif line.startswith("Warning:"):
            style = "yellow"
        elif line.startswith(("Restore to", "Rewind to", "Code:", "Conversation:")):
            style = "bold"
        elif line.startswith("Left alone"):
            style = "dim"
        else:
            style = ""
        lines.append(line, style=style)
    if not marker:
        return lines
    return Group(lines, Text(""), render_diff("diff --git " + diff))


class RestorePreviewScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    RestorePreviewScreen { align: center middle; }
    RestorePreviewScreen > Vertical {
        width: 95%; max-width: 140; height: auto; max-height: 95%;
        border: thick $warning; background: $surface; padding: 0 1;
    }
    RestorePreviewScreen #title { text-style: bold; margin: 0 0 1 0; }
    RestorePreviewScreen #preview { height: auto; max-height: 70vh; margin: 0 0 1 0; }
    RestorePreviewScreen OptionList { height: auto; border: none; }
    """
    BINDINGS = [
        Binding("y", "answer(True)", "Restore", show=False),
        Binding("n,escape", "answer(False)", "Cancel", show=False),
        Binding("pageup", "scroll_preview(-1)", "Scroll up", show=False, priority=True),
        Binding("pagedown", "scroll_preview(1)", "Scroll down", show=False, priority=True),
    ]

    def __init__(self, title: str, text: str, confirm: str = "Restore") -> None:
        super().__init__()
        self.title_text = title
        self.text = text
        self.confirm = confirm
        self.rendered = render_restore_preview(text)
        self.opened = time.monotonic()

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(literal(self.title_text), id="title")
            with VerticalScroll(id="preview"):
                yield Static(self.rendered)
            yield OptionList(
                Option(f"{self.confirm}  (y)", id="yes"), Option("Cancel — change nothing  (n, Esc)", id="no")
            )

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def _in_grace(self) -> bool:
        return time.monotonic() - self.opened < GRACE_SECONDS

    async def on_key(self, event: events.Key) -> None:
        if self._in_grace() and event.key != "escape":
            event.stop()
            event.prevent_default()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if not self._in_grace():
            self.dismiss(event.option.id == "yes")

    def action_scroll_preview(self, direction: int) -> None:
        preview = self.query_one("#preview", VerticalScroll)
        if direction < 0:
            preview.scroll_page_up(animate=False)
        else:
            preview.scroll_page_down(animate=False)

    def action_answer(self, yes: bool) -> None:
        if yes and self._in_grace():
            return
        self.dismiss(yes)


class DiffScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    DiffScreen { align: center middle; }
    DiffScreen > Vertical {
        width: 95%; max-width: 160; height: 90%;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    DiffScreen #title { text-style: bold; }
    DiffScreen #hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape,q", "close", "Close", show=False)]

    def __init__(self, diff: str, title: str = "Changes this session made to the work tree") -> None:
        super().__init__()
        self.diff = diff
        self.title_text = title
        self.rendered: Text = render_diff(diff) if diff else Text("No changes.", style="dim")

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(literal(self.title_text), id="title")
            with VerticalScroll(id="diff"):
                yield Static(self.rendered)
            yield Static("Esc or q closes · arrows and PgUp/PgDn scroll", id="hint")

    def on_mount(self) -> None:
        self.query_one("#diff", VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)
