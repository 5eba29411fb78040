"""The Textual app behind `wyckoff chat`."""

from __future__ import annotations

from textual.app import App

from wyckoff_cli.runtime.approval import ApprovalDecision, ApprovalRequest
from wyckoff_cli.storage.sessions import LoadedSession
from wyckoff_cli.tui.chat_session import ChatDeps, ChatSession
from wyckoff_cli.tui.screens.chat import ChatScreen
from wyckoff_cli.tui.screens.sessions import SessionPicker
from wyckoff_cli.tui.screens.setup import SetupScreen


class WyckoffApp(App[None]):
    TITLE = "Wyckoff"
    ENABLE_COMMAND_PALETTE = False

    def __init__(
        self, deps: ChatDeps, *, loaded: LoadedSession | None = None, pick_session: bool = False
    ) -> None:
        super().__init__()
        self.deps = deps
        self.loaded = loaded
        self.pick_session = pick_session
        self.chat: ChatScreen | None = None

    def on_mount(self) -> None:
        problem = self.deps.check_model(self.deps.model)
        if problem and self.deps.save_key is not None:
            self.push_screen(SetupScreen(problem, self.deps.have_key, self.deps.save_key), self._after_setup)
        else:
            self._start_chat()

    def _after_setup(self, provider: str | None) -> None:
        self._start_chat()

    def _start_chat(self) -> None:
        session = ChatSession(self.deps, approver=_unset_approver, loaded=self.loaded)
        self.chat = ChatScreen(self.deps, session)
        self.push_screen(self.chat)
        if self.loaded is not None and self.loaded.torn:
            self.chat.call_after_refresh(
                self.chat.add_notice,
                "warning",
                "The session log was cut by a crash; resumed from the last complete message.",
            )
        if self.pick_session:
            self.push_screen(SessionPicker(self.deps.store, self.deps.project_root), self._picked)

    def _picked(self, session_id: str | None) -> None:
        if session_id and self.chat is not None:
            self.chat.resume(session_id)

    async def on_unmount(self) -> None:
        if self.chat is not None:
            await self.chat.session.close()
        if self.deps.mcp is not None:
            await self.deps.mcp.aclose()  # the servers live as long as the app


async def _unset_approver(request: ApprovalRequest) -> ApprovalDecision:  # replaced by the chat screen
    return ApprovalDecision.deny("no approver is attached yet")
