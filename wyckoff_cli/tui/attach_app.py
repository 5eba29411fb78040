"""The Textual app behind `wyckoff attach ID`: one `AttachScreen` on a background session."""

from __future__ import annotations

from textual.app import App

from wyckoff_cli.storage.running import RunningSession
from wyckoff_cli.tui.screens.attach import AttachScreen, Connect


class AttachApp(App[None]):
    TITLE = "Wyckoff · attached"
    ENABLE_COMMAND_PALETTE = False

    def __init__(
        self, entry: RunningSession, *, want: str = "control", connect: Connect | None = None
    ) -> None:
        super().__init__()
        self.entry = entry
        self.screen_of_session = AttachScreen(entry, want=want, connect=connect)

    def on_mount(self) -> None:
        self.push_screen(self.screen_of_session)
