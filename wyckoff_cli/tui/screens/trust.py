"""The trust question for a project's hooks: every command is named before any runs.

`y` trusts (recorded for these files as they are now; a changed configuration asks
again), `n` or Esc leaves them off for this session. Keys pressed in the first
the typing pause (`tui/typing_guard.py`) are ignored, so typing ahead never trusts anything by accident.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from wyckoff_cli.session.extensions import HookFile
from wyckoff_cli.tui.literal import visible
from wyckoff_cli.tui.typing_guard import TypingGuard


def describe_files(files: list[HookFile]) -> Text:
    text = Text()
    for file in files:
        changed = " (changed since you trusted it)" if file.state == "changed" else ""
        text.append(visible(f"{file.path}{changed}") + "\n", style="bold")
        for spec in file.specs:
            text.append(visible(f"  {spec.event}"), style="cyan")
            text.append(visible(f" [{spec.matcher or '*'}]  "), style="dim")
            text.append(visible(spec.command) + "\n")
        for grant in file.grants:  # a Claude Code settings file's allow rules
            text.append(visible(f"  permissions: {grant}") + "\n", style="yellow")
        for plugin in file.enables:  # a project settings file's enabledPlugins
            text.append(visible(f"  enables plugin: {plugin}") + "\n", style="yellow")
    return text


class HookTrustScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    HookTrustScreen { align: center middle; }
    HookTrustScreen > Vertical {
        width: 90%; max-width: 120; height: auto; max-height: 90%;
        border: thick $warning; background: $surface; padding: 0 1;
    }
    HookTrustScreen #title { text-style: bold; margin: 0 0 1 0; }
    HookTrustScreen #commands { height: auto; max-height: 24; margin: 0 0 1 0; }
    """
    BINDINGS = [
        Binding("y", "answer(True)", "Trust", show=False),
        Binding("n", "answer(False)", "Do not run", show=False),
        Binding("escape", "answer(False)", "Do not run", show=False),
    ]

    def __init__(self, files: list[HookFile]) -> None:
        super().__init__()
        self.files = files
        self.guard = TypingGuard()  # keys typed as text never trust anything
        self.attention = "the project's hooks wait for your trust (y / n)"  # a notification's text

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("This project configures hooks: commands Wyckoff would run on its own.", id="title")
            with VerticalScroll(id="commands"):
                yield Static(describe_files(self.files))
            yield Static("y  trust and run them    n / Esc  do not run them this session")

    def action_answer(self, trusted: bool) -> None:
        if self.guard.paused:
            return
        self.dismiss(trusted)
