"""Pick an earlier session of this project to resume."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from wyckoff_cli.storage.sessions import SessionStore
from wyckoff_cli.tui.literal import literal


class SessionPicker(ModalScreen[str | None]):
    DEFAULT_CSS = """
    SessionPicker { align: center middle; }
    SessionPicker > Vertical { width: 90%; max-width: 130; height: 80%; border: thick $accent;
                               background: $surface; padding: 0 1; }
    SessionPicker OptionList { height: 1fr; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(self, store: SessionStore, project_root: Path) -> None:
        super().__init__()
        self.store = store
        self.project_root = project_root

    def compose(self) -> ComposeResult:
        sessions = self.store.list(self.project_root)
        with Vertical():
            yield Static(literal(f"Resume a session of {self.project_root} (Enter picks, Esc cancels)"))
            options = [
                Option(
                    literal(
                        f"{s.id}  {s.updated[:16].replace('T', ' ')}  {s.turns:>3} turn{'' if s.turns == 1 else 's'}  {s.model:<28} {s.title}"
                    ),
                    id=s.id,
                )
                for s in sessions
            ]
            if not options:
                options = [Option("No earlier sessions in this project", id="", disabled=True)]
            yield OptionList(*options)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
