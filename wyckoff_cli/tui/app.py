"""The Textual app behind `wyckoff chat`."""

from __future__ import annotations

import os

from textual.app import App
from textual.driver import Driver

from wyckoff_cli.session import keys
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.tui import notifications
from wyckoff_cli.tui.hyperlinks import terminal_shows_hyperlinks
from wyckoff_cli.tui.screens.chat import ChatScreen
from wyckoff_cli.tui.screens.sessions import SessionPicker
from wyckoff_cli.tui.screens.setup import SetupNeeds, SetupScreen, quit_hint
from wyckoff_cli.tui.textual_compat import quiet_driver_class


class WyckoffApp(App[None]):
    TITLE = "Wyckoff"
    ENABLE_COMMAND_PALETTE = False

    def __init__(
        self, controller: ChatController, *, pick_session: bool = False, hyperlinks: bool | None = None
    ) -> None:
        super().__init__()
        self.controller = controller
        self.pick_session = pick_session
        self.hyperlinks = (
            terminal_shows_hyperlinks(controller.builder.config.ui.hyperlinks, os.environ)
            if hyperlinks is None
            else hyperlinks
        )
        """Links in answers as OSC 8 hyperlinks, else as `text (url)` (docs/TUI.md, "Tables and links")."""
        self.chat: ChatScreen | None = None
        self.session_id: str | None = None  # the session to resume, known once the app closed
        self.farewell: str | None = None  # what the terminal shows after the app closes
        self.setup_needs: SetupNeeds | None = None  # why the setup screen was shown

    def get_driver_class(self) -> type[Driver]:
        # Textual's Linux driver with an input thread that sleeps while idle
        return quiet_driver_class() or super().get_driver_class()

    def on_mount(self) -> None:
        # while the terminal is not focused, an approval or a turn's end notifies
        self.notifier = notifications.install(self, self.controller.builder.config.ui.notifications)
        controller = self.controller
        problem = controller.check_model(controller.model)
        if not problem:
            self._start_chat()
            return
        needs = SetupNeeds(
            model=controller.model,
            provider=keys.key_provider(controller.model, controller.builder.config),
            problem=problem,
            have_key=keys.have_key,
            save_key=keys.save_key,
            recheck=lambda: controller.check_model(controller.model),
        )
        self.setup_needs = needs
        self.push_screen(SetupScreen(needs), self._after_setup)

    def _after_setup(self, provider: str | None) -> None:
        if provider is None:  # quit: a chat without a usable model could only fail
            self.exit()
            return
        self._start_chat()
        from wyckoff_cli.storage.paths import credentials_file

        assert self.chat is not None
        self.chat.call_after_refresh(
            self.chat.add_notice,
            "info",
            f"Saved the {provider} key to {credentials_file()} (mode 0600); "
            "an environment variable, when set, wins over it.",
        )

    def _start_chat(self) -> None:
        self.chat = ChatScreen(self.controller)
        self.chat.router.on_turn_end = self.notifier.turn_ended
        from wyckoff_cli.tui import worktree_lines

        worktree_lines.install(self.chat)  # in a worktree: its start line, its review line after turns
        self.push_screen(self.chat)
        loaded = self.controller.loaded
        if loaded is not None and loaded.torn:
            self.chat.call_after_refresh(
                self.chat.add_notice,
                "warning",
                "The session log was cut by a crash; resumed from the last complete message.",
            )
        if self.pick_session:
            self.push_screen(SessionPicker(self.controller.store, self.controller.root), self._picked)

    def _picked(self, session_id: str | None) -> None:
        if session_id and self.chat is not None:
            self.chat.resume(session_id)

    async def on_unmount(self) -> None:
        if self.chat is None and self.setup_needs is not None:  # however the user left setup
            self.farewell = quit_hint(self.setup_needs)
        if len(self.controller.conversation):
            self.session_id = self.controller.id
            self.farewell = goodbye(self.session_id)
        await self.controller.aclose()
        if self.controller.builder.mcp is not None:
            await self.controller.builder.mcp.aclose()  # the servers live as long as the app
        if self.controller.builder.lsp is not None:
            await self.controller.builder.lsp.manager.close()  # so do the language servers


def goodbye(session_id: str | None) -> str | None:
    """What the terminal shows after the app closes: how to come back."""
    if session_id is None:
        return None
    return f"Session {session_id} saved. Resume it with:\n  wyckoff chat --resume {session_id}"
