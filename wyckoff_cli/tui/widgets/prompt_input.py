"""The prompt: a multi-line input with history and completion.

Enter sends; Shift+Enter or Ctrl+J inserts a new line; Ctrl+G edits the prompt in
`$VISUAL`/`$EDITOR` (`tui/external_editor.py`). Up/Down on the first/last line
walk the per-project history. Typing `/` at the start offers slash commands, `@`
offers files (gitignore-aware, fuzzy); Tab or Enter takes the highlighted one.
Ctrl+V attaches the clipboard's image (`on_paste_image`); a pasted or dragged path of
an image file is attached instead of typed (`on_paste_path`): tui/image_attach.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option

from wyckoff_cli.tui.external_editor import edit_in_app
from wyckoff_cli.tui.literal import literal, visible
from wyckoff_cli.tui.textual_compat import KeyFirstTextArea

Completer = Callable[[str], list[tuple[str, str]]]  # word -> [(replacement, label)]


@dataclass
class InputHistory:
    """Entries oldest first; `back()`/`forward()` walk them, keeping the draft."""

    entries: list[str]
    position: int | None = None
    draft: str = ""

    def back(self, current: str) -> str | None:
        if not self.entries:
            return None
        if self.position is None:
            self.draft = current
            self.position = len(self.entries)
        if self.position == 0:
            return None
        self.position -= 1
        return self.entries[self.position]

    def forward(self) -> str | None:
        if self.position is None:
            return None
        self.position += 1
        if self.position >= len(self.entries):
            self.position = None
            return self.draft
        return self.entries[self.position]

    def add(self, text: str) -> None:
        if text.strip() and (not self.entries or self.entries[-1] != text):
            self.entries.append(text)
        self.position = None
        self.draft = ""


class CompletionMenu(OptionList):
    """The list of completions shown above the prompt."""

    DEFAULT_CSS = """
    CompletionMenu {
        display: none;
        max-height: 10;
        border: round $accent;
        background: $surface;
    }
    CompletionMenu.-visible { display: block; }
    """


class PromptInput(KeyFirstTextArea):
    """Multi-line prompt. Posts `PromptInput.Submitted` on Enter."""

    BINDINGS = [
        Binding("ctrl+j,shift+enter", "newline", "New line", show=False),
        Binding("ctrl+g", "open_editor", "Edit in $EDITOR", show=False),
    ]

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(
        self, history: list[str] | None = None, completer: Completer | None = None, **kwargs: object
    ) -> None:
        super().__init__(soft_wrap=True, tab_behavior="focus", show_line_numbers=False, **kwargs)  # type: ignore[arg-type]
        self.cursor_blink = False  # a blink is a timer repainting forever: idle must cost 0% CPU
        self.prompt_history = InputHistory(list(history or []))
        self.completer = completer
        self.menu: CompletionMenu | None = None
        self.pull_queued: Callable[[], str | None] | None = (
            None  # Up on an empty prompt edits a queued message
        )
        self._matches: list[tuple[str, str]] = []
        self.on_empty_enter: Callable[[], bool] | None = None  # Enter on an empty prompt
        self.on_empty_backspace: Callable[[], bool] | None = None  # drops an attached `!` output
        self.last_key_at = float("-inf")  # monotonic time of the latest key (dialogs pause on it)
        self.on_paste_image: Callable[[], object] | None = None  # Ctrl+V: the clipboard image
        self.on_paste_path: Callable[[str], bool] | None = None  # a pasted image path: attached

    def action_newline(self) -> None:
        self.insert("\n")

    def action_paste(self) -> None:
        """Ctrl+V: the clipboard's image when there is one (the screen asks the system
        clipboard, then falls back to `paste_text`)."""
        if self.on_paste_image is not None:
            self.on_paste_image()
        else:
            super().action_paste()

    def paste_text(self) -> None:
        super().action_paste()

    def on_paste(self, event: events.Paste) -> None:
        if self.on_paste_path is not None and self.on_paste_path(event.text):
            event.prevent_default()  # attached as an image: not typed into the prompt
            event.stop()

    def action_open_editor(self) -> None:
        """Ctrl+G: the prompt in the person's editor (not while a turn streams: the app,
        and the answer with it, stands still while the editor has the terminal)."""
        if getattr(self.screen, "busy", False):
            self._tell("warning", "Ctrl+G opens your editor once the turn has ended (Esc interrupts it).")
            return
        result = edit_in_app(self.app, self.text, suffix=".md")
        if result.text is not None:
            self._replace(result.text)
            self._hide_menu()
        self._tell("info" if result.text is not None else "warning", result.message)
        self.focus()

    def _tell(self, kind: str, message: str) -> None:
        add_notice = getattr(self.screen, "add_notice", None)  # the chat screen's transcript
        if callable(add_notice):
            add_notice(kind, message)
        else:
            self.notify(
                visible(message), severity="warning" if kind == "warning" else "information", markup=False
            )

    def type_key(self, event: events.Key) -> None:
        """A key typed while a dialog was open and paused: as if the prompt had it."""
        self.last_key_at = time.monotonic()
        if event.key == "enter":
            self._submit()
        elif event.key in ("ctrl+j", "shift+enter"):
            self.insert("\n")
        elif event.key == "backspace":
            self.action_delete_left()
        elif event.is_printable and event.character:
            self.insert(event.character)

    async def handle_key(self, event: events.Key) -> bool:
        self.last_key_at = time.monotonic()
        if self._menu_visible and event.key in ("up", "down", "tab", "enter", "escape"):
            self._menu_key(event.key)
            return True
        if event.key == "enter":
            self._submit()
            return True
        empty_backspace = event.key == "backspace" and not self.text and self.on_empty_backspace is not None
        if empty_backspace and self.on_empty_backspace is not None and self.on_empty_backspace():
            return True
        if event.key == "up" and not self.text and self.pull_queued is not None:
            queued = self.pull_queued()
            if queued is not None:
                self._replace(queued)
                return True
        if event.key == "up" and self.cursor_location[0] == 0:
            older = self.prompt_history.back(self.text)
            if older is not None:
                self._replace(older)
                return True
        if event.key == "down" and self.cursor_location[0] == self.document.line_count - 1:
            newer = self.prompt_history.forward()
            if newer is not None:
                self._replace(newer)
                return True
        return False

    def _submit(self) -> None:
        text = self.text
        if not text.strip():
            if self.on_empty_enter is not None:
                self.on_empty_enter()
            return
        self.prompt_history.add(text)
        self.clear()
        self._hide_menu()
        self.post_message(self.Submitted(text))

    def _replace(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    # ------------------------------------------------------------------ completion

    @property
    def _menu_visible(self) -> bool:
        return self.menu is not None and self.menu.has_class("-visible")

    def current_word(self) -> str:
        row, column = self.cursor_location
        line = self.document.get_line(row)[:column]
        return line.split(" ")[-1] if line else ""

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if self.completer is None or self.menu is None:
            return
        word = self.current_word()
        self._matches = self.completer(word) if word[:1] in ("/", "@") else []
        if not self._matches:
            self._hide_menu()
            return
        self.menu.clear_options()
        # Text, not markup: an argument hint `[MODE]` or a path with brackets is shown as typed
        self.menu.add_options(
            [Option(literal(label), id=str(i)) for i, (_, label) in enumerate(self._matches)]
        )
        self.menu.highlighted = 0
        self.menu.add_class("-visible")

    def _hide_menu(self) -> None:
        if self.menu is not None:
            self.menu.remove_class("-visible")

    def _menu_key(self, key: str) -> None:
        assert self.menu is not None
        if key == "escape":
            self._hide_menu()
        elif key == "up":
            self.menu.action_cursor_up()
        elif key == "down":
            self.menu.action_cursor_down()
        else:
            word = self.current_word()
            if key == "enter" and any(r.strip() == word for r, _ in self._matches):
                self._submit()  # the command is complete as typed: an exact match wins
                return
            index = self.menu.highlighted or 0
            replacement = self._matches[index][0] if 0 <= index < len(self._matches) else ""
            if replacement:
                self._accept(replacement)
            self._hide_menu()
            if key == "enter" and replacement.startswith("/") and not replacement.endswith(" "):
                self._submit()  # a command without arguments runs at once

    def _accept(self, replacement: str) -> None:
        word = self.current_word()
        row, column = self.cursor_location
        self.replace(replacement, (row, column - len(word)), (row, column))
