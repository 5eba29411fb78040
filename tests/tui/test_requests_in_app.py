"""The app offers every command of the table: each, typed into the prompt, does what
it says (a notice, an output, a picker, a turn) and none is refused as unknown."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from tests.tui.support import make_app
from tests.tui.test_chat_flows import SIZE, chat, send, settle
from tests.waiting import until
from wyckoff_cli.session.commands import APP, offered_by
from wyckoff_cli.tui.screens.agents import AgentsScreen
from wyckoff_cli.tui.screens.chat import ChatScreen
from wyckoff_cli.tui.screens.rewind import RewindPickerScreen
from wyckoff_cli.tui.screens.sessions import SessionPicker
from wyckoff_cli.tui.widgets.entries import NoticeLine


def notices_since(screen: ChatScreen, count: int) -> list[str]:
    return [w.message for w in list(screen.transcript.children)[count:] if isinstance(w, NoticeLine)]


async def test_every_command_the_app_offers_is_handled(tmp_path: Path) -> None:
    rounds = [
        {"text": "hello"},
        {"tool_calls": [{"name": "write_file", "args": {"path": "AGENTS.md", "content": "x\n"}}]},
    ]
    app, _ = make_app(tmp_path, [*rounds, {"text": "Wrote it."}] * 2)
    names = [c.name for c in offered_by(APP)]
    assert names[-1] == "quit"
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "/mode auto-edit")
        await send(pilot, "say hello")
        await settle(pilot, screen)
        for name in names[:-1]:
            before = len(screen.transcript.children)
            text = f"/{name} hello" if name == "find" else f"/{name}"
            await send(pilot, text)
            if name == "resume":
                await until(pilot, lambda: isinstance(app.screen, SessionPicker))
                await pilot.press("escape")
            elif name == "rewind":
                await until(pilot, lambda: isinstance(app.screen, RewindPickerScreen))
                await pilot.press("escape")
            elif name == "find":
                await pilot.press("escape")  # closes the find bar
            elif name == "agents":
                await until(pilot, lambda: isinstance(app.screen, AgentsScreen))
                await pilot.press("escape")
            elif name in ("undo", "redo", "diff"):  # a preview or the diff, once /init wrote a file
                await until(
                    pilot,
                    lambda count=before: (
                        not isinstance(app.screen, ChatScreen) or bool(notices_since(screen, count))
                    ),
                )
                if not isinstance(app.screen, ChatScreen):
                    await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, ChatScreen) and not screen.busy)
            await settle(pilot, screen)
            notices = [n.message for n in screen.query(NoticeLine)]
            assert not any("Unknown command" in n or "not a command" in n for n in notices), (name, notices)
            if name not in (
                "resume",
                "rewind",
                "find",
                "top",
                "bottom",
                "clear",
                "diff",
                "undo",
                "redo",
                "agents",
            ):
                assert len(screen.transcript.children) > before or name == "clear", (
                    name
                )  # it showed something
        assert any(
            isinstance(w, Static) and "command-output" in w.classes for w in screen.transcript.children
        )
        await send(pilot, "/quit")
        await until(pilot, lambda: not app.is_running)


async def test_rewind_n_in_the_app_previews_then_goes_back(tmp_path: Path) -> None:
    """`/rewind 1`: no picker; the controller's preview opens the preview screen, `y`
    restores the code, the conversation is rewound on the controller's side and the
    message comes back into the prompt."""
    import subprocess

    from wyckoff_cli.tui.screens import rewind as rewind_screens
    from wyckoff_cli.tui.screens.rewind import RestorePreviewScreen
    from wyckoff_cli.tui.widgets.prompt_input import PromptInput

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    rounds = [
        {"tool_calls": [{"name": "write_file", "args": {"path": "b.txt", "content": "new\n"}}]},
        {"text": "Wrote b.txt."},
    ]
    app, _ = make_app(tmp_path, rounds)
    rewind_screens.GRACE_SECONDS, grace = 0.0, rewind_screens.GRACE_SECONDS
    try:
        async with app.run_test(size=SIZE) as pilot:
            screen = chat(app)
            await send(pilot, "/mode auto-edit")
            await send(pilot, "write b.txt")
            await settle(pilot, screen)
            assert (tmp_path / "b.txt").exists() and len(app.controller.conversation) == 4
            await send(pilot, "/rewind 1")
            await until(pilot, lambda: isinstance(app.screen, RestorePreviewScreen))
            assert "Conversation: 4 messages removed" in app.screen.text  # type: ignore[attr-defined]
            await pilot.press("y")
            await until(pilot, lambda: not (tmp_path / "b.txt").exists())
            await until(pilot, lambda: bool(screen.query_one(PromptInput).text))
            assert screen.query_one(PromptInput).text == "write b.txt"  # as typed: no mode note
            assert len(app.controller.conversation) == 0
            # the notes come after the shorter transcript is shown, not wiped by it
            await until(
                pilot, lambda: any("Conversation rewound" in n.message for n in screen.query(NoticeLine))
            )
            assert any("Code restored" in n.message for n in screen.query(NoticeLine))
    finally:
        rewind_screens.GRACE_SECONDS = grace
