"""The chat screen's `/bg`, `/agents` (Ctrl+B) and waiting mark (issue 29).

`/bg PROMPT` starts `wyckoff run --background` with the session's model, mode, sandbox
and workspace; `/agents` opens the agents view, and Enter there attaches to a session in
this app (Ctrl+D comes back to the chat); the status bar shows any background session
of the project that waits for the user (tui/background.py `install_watch`).
"""

from __future__ import annotations

from typing import Any, Protocol

from textual.app import App

from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.session.status import StatusModel
from wyckoff_cli.storage.running import RunningSession
from wyckoff_cli.tui.background import BackgroundSettings, install_watch, start_background


class ChatHost(Protocol):
    controller: ChatController
    status: StatusModel

    @property
    def app(self) -> App[Any]: ...
    def add_notice(self, kind: str, message: str) -> None: ...
    def status_changed(self) -> None: ...
    def run_worker(self, work: Any, *, exclusive: bool = ..., group: str = ...) -> Any: ...


def settings_of(chat: ChatHost) -> BackgroundSettings:
    controller = chat.controller
    return BackgroundSettings(
        root=controller.root,
        model=chat.status.model or controller.model,
        mode=chat.status.mode,
        sandbox=controller.builder.workspace.sandbox,
    )


def start_bg(chat: ChatHost, prompt: str) -> None:
    settings = settings_of(chat)

    async def start() -> None:
        started, message = await start_background(prompt, settings)
        chat.add_notice("info" if started else "error", message)

    chat.add_notice("info", "Starting a background session …")
    chat.run_worker(start(), group="background")


def open_agents(chat: ChatHost) -> None:
    from wyckoff_cli.tui.screens.agents import AgentsScreen

    def chosen(entry: RunningSession | None) -> None:
        if entry is not None:
            attach_here(chat, entry)

    chat.app.push_screen(AgentsScreen(settings_of(chat)), chosen)


def attach_here(chat: ChatHost, entry: RunningSession) -> None:
    """Attach to `entry` over the chat; detaching comes back to it."""
    from wyckoff_cli.tui.screens.attach import AttachScreen

    app = chat.app
    app.push_screen(AttachScreen(entry, detach=app.pop_screen))


def watch_waiting(chat: Any) -> None:
    install_watch(chat, chat.controller.root, chat.status, chat.status_changed)
