"""A running turn's transcript entries are mounted in one batch per frame (issue 36):
in the order of the messages, a round's entries together, and nothing the person must
act on waits for the frame."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tui.support import make_app
from tests.tui.test_chat_flows import chat, past_pause, send, settle, shell_tool, wait_for_screen
from tests.tui.test_transcript_fold import entries, expand_all, project, script
from tests.waiting import until
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.conversation import Conversation
from wyckoff_cli.tools.files import read_file
from wyckoff_cli.tui import entry_batch, transcript_fold
from wyckoff_cli.tui.screens.approval import ApprovalScreen
from wyckoff_cli.tui.screens.chat import ChatScreen
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.tool_call import ToolCallView

SIZE = (100, 40)


def shown_as(conversation: Conversation) -> list[tuple[str, str]]:
    """The entries the conversation's messages make, in their order (`entries`' form):
    the user's text, each answer's text, then each call it asked for, completed."""
    shown: list[tuple[str, str]] = []
    results = {m.tool_call_id: m for m in conversation if m.role == "tool"}
    for message in conversation:
        if message.role == "user":
            shown.append(("user", message.text))
        elif message.role == "assistant":
            if message.text:
                shown.append(("answer", message.text))
            for call in message.tool_calls:
                status = "error" if results[call.id].is_error else "ok"
                shown.append(("call", f"{call.name} {call.arguments.get('path')} {status}"))
    return shown


async def test_fast_rounds_mount_in_batches_in_the_order_of_the_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every entry of the turn waits for one batch (none is due before the turn ends):
    # the order and the calls' results come from the held widgets alone
    monkeypatch.setattr(entry_batch, "MOUNT_INTERVAL", 1e9)
    rounds = 30
    app, _ = make_app(project(tmp_path, rounds), script(rounds))
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        before = screen.entry_batch.batches
        await send(pilot, "read every file")
        await settle(pilot, screen)
        # the user's message at once (no turn ran yet), then the turn's 61 entries in one mount
        assert screen.entry_batch.batches == before + 2
        assert not screen.entry_batch.pending
        shown = entries(screen.transcript)
        assert shown == shown_as(app.controller.conversation)
        assert len(shown) == 1 + 2 * rounds + 1
        assert all(view.is_attached for view in screen.query(ToolCallView))


async def test_a_long_fast_turn_folds_and_unfolds_in_the_order_of_the_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # batches of the default size and folds together: a fold never takes the messages
    # of a round whose entries are still held, nor entries not laid out yet
    monkeypatch.setattr(transcript_fold, "FOLD_AT", 30)
    monkeypatch.setattr(transcript_fold, "KEEP", 8)
    rounds = 80
    app, _ = make_app(project(tmp_path, rounds), script(rounds))
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "read every file")
        await settle(pilot, screen)
        assert screen.fold.folds >= 1
        await expand_all(pilot, screen.transcript)
        assert entries(screen.transcript) == shown_as(app.controller.conversation)


async def test_a_rounds_entries_are_mounted_together_at_the_next_frame(tmp_path: Path) -> None:
    # a turn runs (its model call sleeps); a round's events come at once
    app, _ = make_app(tmp_path, [[{"sleep": 60.0}]], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "go")
        await until(pilot, lambda: screen.busy, what="the turn to start")
        batch = screen.entry_batch
        await until(pilot, lambda: not batch.pending, what="the user's message to be mounted")
        before, mounted = batch.batches, len(screen.transcript.children)
        router = screen.router
        router.handle(ev.ModelStart(2, "scripted:test"))
        router.handle(ev.TextDelta("Reading the notes."))
        call = {"id": "c1", "name": "read_file", "args": {"path": "notes.txt"}}
        router.handle(ev.ToolCallsReceived([call]))
        router.handle(ev.ToolStarted("c1", "read_file", call["args"]))
        router.handle(ev.ToolSucceeded("c1", "read_file", "the notes", 3))
        answer, view = batch.pending
        assert isinstance(answer, MarkdownStreamView) and isinstance(view, ToolCallView)
        assert len(screen.transcript.children) == mounted  # nothing mounted before the frame
        await until(pilot, lambda: not batch.pending, what="the next frame")
        assert batch.batches == before + 1  # one mount for the round, so one layout pass
        assert list(screen.transcript.children)[-2:] == [answer, view]
        assert view.status == "ok" and view.result == "the notes"
        await until(pilot, lambda: answer.is_settled, what="the answer to be drawn")
        assert answer.rendered_lines() == ["Reading the notes."]
        await pilot.press("escape")
        await settle(pilot, screen)


async def test_an_approval_during_fast_rounds_opens_at_once_with_its_call_behind_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(entry_batch, "MOUNT_INTERVAL", 1e9)  # nothing due before the dialog
    fast = script(12)[:-1]
    rounds = [
        *fast,
        {"text": "Now the tests.", "tool_calls": [{"name": "run_shell", "args": {"command": "make test"}}]},
        {"text": "Done."},
    ]
    ran: list[dict[str, Any]] = []
    app, _ = make_app(project(tmp_path, 12), rounds, [read_file, shell_tool(ran)])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        pushed: list[tuple[int, bool]] = []  # at the dialog's push: entries held, its call mounted
        push = app.push_screen

        def spy(pushed_screen: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(pushed_screen, ApprovalScreen):
                call = screen.router.tools.get(pushed_screen.request.id)
                pushed.append(
                    (len(screen.entry_batch.pending), bool(call and call.parent is screen.transcript))
                )
            return push(pushed_screen, *args, **kwargs)

        monkeypatch.setattr(app, "push_screen", spy)
        await send(pilot, "read every file, then run the tests")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        assert pushed == [(0, True)]  # opened in the event's handling, every entry before it mounted
        assert isinstance(screen, ChatScreen)
        shown = entries(screen.transcript)
        assert [kind for kind, _ in shown].count("call") == 13
        assert shown[-2:] == [("answer", "Now the tests."), ("call", "run_shell None waiting")]
        await past_pause(pilot)
        assert app.screen is modal
        await pilot.press("y")
        await settle(pilot, screen)
        assert ran == [{"command": "make test"}]
        assert entries(screen.transcript)[-1] == ("answer", "Done.")
