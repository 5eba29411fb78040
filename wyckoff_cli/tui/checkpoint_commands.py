"""The chat screen's /rewind, /undo, /redo, /diff and Esc Esc, over the session's
`CheckpointCommands` (see checkpoint_flows.py and docs/CHECKPOINTS.md)."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, Protocol

from textual.app import App

from wyckoff_cli.core import events as ev
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.tui.checkpoint_flows import diff_flow, redo_flow, rewind_flow, undo_flow
from wyckoff_cli.tui.widgets.prompt_input import PromptInput

NAMES = ("rewind", "undo", "redo", "diff")


class Chat(Protocol):
    """What the commands need from the chat screen."""

    controller: ChatController

    @property
    def app(self) -> App[Any]: ...
    def add_notice(self, kind: str, message: str) -> None: ...
    def session_changed(self, event: ev.SessionChanged) -> None: ...
    def query_one(self, selector: type[PromptInput]) -> PromptInput: ...
    def run_worker(self, work: Any, *, exclusive: bool = ..., group: str = ...) -> Any: ...


def run_checkpoint_command(chat: Chat, name: str) -> None:
    controller = chat.controller
    commands = controller.session.checkpoints if controller.started else None
    if commands is None:
        reason = "nothing has run in this session yet" if not controller.started else "checkpoints are off"
        chat.add_notice("info", f"/{name}: {reason}")
        return
    if name == "rewind":

        async def rewind() -> None:
            result = await rewind_flow(chat.app, commands, controller.conversation, chat.add_notice)
            if result is None:
                return
            if result.messages_removed:
                chat.session_changed(ev.SessionChanged(controller.id, resumed=True))
            if result.input_text:
                chat.query_one(PromptInput).load_text(result.input_text)

        work: Coroutine[Any, Any, object] = rewind()
    elif name == "undo":
        work = undo_flow(chat.app, commands, chat.add_notice)
    elif name == "redo":
        work = redo_flow(chat.app, commands, chat.add_notice)
    else:
        work = diff_flow(chat.app, commands, chat.add_notice)
    chat.run_worker(work, exclusive=True, group="command")
