"""The /rewind, /undo, /redo and /diff requests end to end with Pilot: real
checkpoints, the requests' handlers (session/checkpoint_requests.py), the app's real
screens answering their `confirm_request`, keys pressed as a person would."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from textual.app import App

from tests.tui.conftest import SESSION
from tests.waiting import until
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.conversation import Conversation
from wyckoff_cli.runtime.checkpoints.rewind import CheckpointCommands
from wyckoff_cli.session import checkpoint_requests as handlers
from wyckoff_cli.session.checkpoint_requests import RewindChoice
from wyckoff_cli.tui import chat_requests
from wyckoff_cli.tui.screens import rewind as screens
from wyckoff_cli.tui.screens.rewind import DiffScreen, RestorePreviewScreen, RewindPickerScreen

Flow = Callable[["FlowHost"], AsyncIterator[ev.RuntimeEvent]]


class FlowHost(App[None]):
    """Runs one request's events in a worker, as the chat screen does: a preview opens
    the app's preview screen, a diff its diff screen; it keeps the notices and the
    `rewound` event."""

    def __init__(self, flow: Flow) -> None:
        super().__init__()
        self.flow = flow
        self.notices: list[tuple[str, str]] = []
        self.rewound: list[ev.Rewound] = []
        self.finished = False

    def on_mount(self) -> None:
        self.run_worker(self._run(), exclusive=True)

    async def _run(self) -> None:
        async for event in self.flow(self):
            if isinstance(event, ev.ConfirmRequested):
                chat_requests.confirm(self, event)
            elif isinstance(event, ev.CommandOutput) and event.command == "diff":
                chat_requests.show_diff(self, event)
            elif isinstance(event, ev.Notice):
                self.notices.append((event.level, event.message))
            elif isinstance(event, ev.Rewound):
                self.rewound.append(event)
        self.finished = True


@pytest.fixture(autouse=True)
def no_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(screens, "GRACE_SECONDS", 0.0)


async def test_undo_then_redo(checkpoint_session: Any) -> None:
    commands, _, root = checkpoint_session
    app = FlowHost(lambda host: handlers.undo(commands))
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, RestorePreviewScreen))
        assert "deleted     b.txt" in app.screen.text  # type: ignore[attr-defined]
        await pilot.press("y")
        await until(pilot, lambda: app.finished)
    assert not (root / "b.txt").exists()
    assert app.notices == [("info", "Undo done: 1 file deleted.")]

    app = FlowHost(lambda host: handlers.redo(commands))
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, RestorePreviewScreen))
        await pilot.press("y")
        await until(pilot, lambda: app.finished)
    assert (root / "b.txt").read_text() == "b.txt\n"


async def test_undo_cancelled_changes_nothing_and_nothing_to_redo_says_so(checkpoint_session: Any) -> None:
    commands, _, root = checkpoint_session
    app = FlowHost(lambda host: handlers.undo(commands))
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, RestorePreviewScreen))
        await pilot.press("escape")
        await until(pilot, lambda: app.finished)
    assert (root / "b.txt").exists()
    assert app.notices == [("info", "Undo cancelled; nothing was changed.")]
    app = FlowHost(lambda host: handlers.redo(commands))
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.finished)
    assert app.notices == [("info", "Nothing to redo.")]


async def test_rewind_code_and_conversation_puts_the_message_back(checkpoint_session: Any) -> None:
    """The picker's pick (the newest message, code and conversation) sent as the
    request `Rewind(1, both)`, then its preview confirmed."""
    commands, history, root = checkpoint_session
    conversation = Conversation(history)
    picked: list[Any] = []

    async def pick_then_rewind(host: FlowHost) -> AsyncIterator[ev.RuntimeEvent]:
        points = await handlers.rewind_points(commands, conversation)
        selection = await host.push_screen_wait(RewindPickerScreen(points))
        picked.append(selection)
        async for event in handlers.rewind(
            commands, conversation, points.index(selection.point) + 1, selection.choice
        ):
            yield event

    app = FlowHost(pick_then_rewind)
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, RewindPickerScreen))
        await pilot.press("enter", "1")  # the newest message, code and conversation
        await until(pilot, lambda: isinstance(app.screen, RestorePreviewScreen))
        assert "Conversation: 2 messages removed" in app.screen.text  # type: ignore[attr-defined]
        await pilot.press("y")
        await until(pilot, lambda: app.finished)
    assert picked[0].choice is RewindChoice.BOTH
    (result,) = app.rewound
    assert result.input_text == "second: write b" and result.messages_removed == 2
    assert [m.text for m in conversation] == ["first: write a", "ok"]
    assert (root / "a.txt").exists() and not (root / "b.txt").exists()
    assert any("Conversation rewound" in text for _, text in app.notices)


async def test_rewind_cancelled_in_the_picker(checkpoint_session: Any) -> None:
    commands, history, root = checkpoint_session
    picked: list[Any] = []

    async def pick(host: FlowHost) -> AsyncIterator[ev.RuntimeEvent]:
        points = await handlers.rewind_points(commands, Conversation(history))
        picked.append(await host.push_screen_wait(RewindPickerScreen(points)))
        for _ in ():
            yield _

    app = FlowHost(pick)
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, RewindPickerScreen))
        await pilot.press("escape")
        await until(pilot, lambda: app.finished)
    assert picked == [None] and (root / "b.txt").exists()


async def test_diff_flow(checkpoint_session: Any) -> None:
    commands, _, _ = checkpoint_session
    app = FlowHost(lambda host: handlers.diff(commands))
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, DiffScreen))
        assert "+b.txt" in app.screen.diff  # type: ignore[attr-defined]
        await pilot.press("escape")
        await until(pilot, lambda: app.finished and not isinstance(app.screen, DiffScreen))


async def test_a_restore_refused_after_a_late_change_says_so(
    checkpoint_session: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    commands, _, root = checkpoint_session
    app = FlowHost(lambda host: handlers.undo(commands))
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, RestorePreviewScreen))
        (root / "typed-meanwhile.txt").write_text("x\n")
        await pilot.press("y")
        await until(pilot, lambda: app.finished)
    assert (root / "b.txt").exists()
    assert app.notices[-1][0] == "warning" and "changed since the preview" in app.notices[-1][1]


def test_hooks_give_the_commands_or_none_when_off(checkpoint_session: Any) -> None:
    from wyckoff_cli.runtime.checkpoints.hooks import CheckpointHooks

    commands, _, _ = checkpoint_session
    assert CheckpointHooks(None, SESSION, disabled="off").commands() is None
    given = CheckpointHooks(commands.engine, SESSION).commands()
    assert isinstance(given, CheckpointCommands) and given.session_id == SESSION


async def test_the_chat_screen_runs_undo_and_esc_esc_opens_rewind(tmp_path: Any) -> None:
    """Wired into the app: a turn writes a file (auto-edit), /undo previews and removes
    it, and Esc Esc on an empty input opens the rewind picker."""
    import subprocess

    from tests.tui.support import make_app
    from tests.tui.test_chat_flows import SIZE, chat, send, settle
    from wyckoff_cli.tui.widgets.entries import NoticeLine

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "a.txt").write_text("kept\n", encoding="utf-8")
    rounds = [
        {"tool_calls": [{"name": "write_file", "args": {"path": "b.txt", "content": "new\n"}}]},
        {"text": "Wrote b.txt."},
    ]
    app, _ = make_app(tmp_path, rounds)
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "/undo")
        assert any("nothing has run" in n.message for n in screen.query(NoticeLine))
        await send(pilot, "/mode auto-edit")
        await send(pilot, "write b.txt")
        await settle(pilot, screen)
        assert (tmp_path / "b.txt").exists()
        await send(pilot, "/undo")
        await until(pilot, lambda: isinstance(app.screen, RestorePreviewScreen))
        assert "b.txt" in app.screen.text  # type: ignore[attr-defined]
        await pilot.press("y")
        await until(pilot, lambda: not (tmp_path / "b.txt").exists())
        assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "kept\n"
        await until(pilot, lambda: not isinstance(app.screen, RestorePreviewScreen))
        await pilot.press("escape")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, RewindPickerScreen))
        await pilot.press("escape")
