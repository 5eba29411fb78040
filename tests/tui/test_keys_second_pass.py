"""Keys and flow a new user tripped over: Ctrl+D, Esc and the queue, slash completion,
moving around and finding in the transcript, and the farewell line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.tui.support import make_app
from tests.tui.test_chat_flows import SIZE, chat, send, settle
from tests.waiting import until
from wyckoff_cli.tui.app import goodbye
from wyckoff_cli.tui.completion import Completions
from wyckoff_cli.tui.transcript_find import FindBar
from wyckoff_cli.tui.widgets.entries import NoticeLine
from wyckoff_cli.tui.widgets.prompt_input import CompletionMenu, PromptInput


async def test_ctrl_d_quits_on_an_empty_prompt_and_deletes_otherwise(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [], [])
    async with app.run_test(size=SIZE) as pilot:
        prompt = chat(app).query_one(PromptInput)
        prompt.load_text("abc")
        prompt.move_cursor((0, 1))
        await pilot.press("ctrl+d")
        assert prompt.text == "ac" and app.is_running
        prompt.load_text("")
        await pilot.press("ctrl+d")
        await until(pilot, lambda: not app.is_running)
        assert not app.is_running


async def test_after_esc_queued_messages_wait_for_enter(tmp_path: Path) -> None:
    rounds: list[Any] = [[{"text": "working"}, {"sleep": 30}], {"text": "second answer"}]
    app, provider = make_app(tmp_path, rounds, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "first")
        await until(pilot, lambda: screen.router.answer_text == "working")  # the turn is running
        await send(pilot, "then this")
        assert screen.queued == ["then this"]
        await pilot.press("escape")
        await settle(pilot, screen)
        await pilot.pause()
        assert len(provider.requests) == 1 and screen.queued == ["then this"] and screen.queue_held
        assert "Enter on an empty prompt" in str(screen.query_one("#queued").content)
        await pilot.press("enter")  # on the empty prompt: now it goes
        await until(pilot, lambda: len(provider.requests) == 2)
        await settle(pilot, screen)
        assert len(provider.requests) == 2 and provider.requests[1].messages[-1].text == "then this"


async def test_an_exact_command_wins_and_enter_runs_a_complete_command(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        prompt = screen.query_one(PromptInput)
        prompt.focus()
        await pilot.press(*"/mode")
        assert screen.query_one(CompletionMenu).has_class("-visible")
        await pilot.press("enter")
        await until(
            pilot, lambda: any(n.message.startswith("Permission mode") for n in screen.query(NoticeLine))
        )
        shown = [n.message for n in screen.query(NoticeLine)]
        assert any(m.startswith("Permission mode: default") for m in shown), shown
        assert not any(m.startswith("Model:") for m in shown)
        await pilot.press(*"/cos", "enter")  # completes to /cost, which takes no argument: runs
        await until(pilot, lambda: any("No model calls" in n.message for n in screen.query(NoticeLine)))
        assert prompt.text == ""
        assert any("No model calls" in m for m in (n.message for n in screen.query(NoticeLine)))


def test_the_popup_aligns_argument_hints_and_puts_the_exact_match_first(tmp_path: Path) -> None:
    matches = Completions(tmp_path)("/mod")
    assert [r for r, _ in matches] == ["/model ", "/mode "]
    assert [r for r, _ in Completions(tmp_path)("/mode")][0] == "/mode "
    labels = [label for _, label in Completions(tmp_path)("/")]
    starts = {label.index(label.split("  ")[-1].strip()) for label in labels}
    assert len(starts) == 1, labels  # every description starts in the same column


async def test_the_popup_shows_the_hints_as_typed_and_aligned(tmp_path: Path) -> None:
    (tmp_path / "[draft] notes.md").write_text("x")
    app, _ = make_app(tmp_path, [], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        prompt = screen.query_one(PromptInput)
        prompt.focus()
        await pilot.press(*"/mod")
        menu = screen.query_one(CompletionMenu)
        await until(pilot, lambda: [line for line in painted(menu) if "/mod" in line])
        shown = [line.strip() for line in painted(menu) if "/mod" in line]
        assert shown[0].startswith("/model [ID]") and shown[1].startswith("/mode [MODE]"), shown
        assert len({line.index("show") for line in shown}) == 1  # as painted, the descriptions align
        prompt.clear()
        await pilot.press(*"@draft")
        await until(pilot, lambda: any("@[draft] notes.md" in line for line in painted(menu)))
        assert any("@[draft] notes.md" in line for line in painted(menu))  # a path is not markup


def painted(widget: Any) -> list[str]:
    return ["".join(segment.text for segment in widget.render_line(y)) for y in range(widget.size.height)]


async def test_top_bottom_and_find_in_a_long_transcript(tmp_path: Path) -> None:
    answer = "\n\n".join(f"Paragraph {n} of a long answer." for n in range(300)) + "\n\nThe needle is here."
    app, _ = make_app(tmp_path, [{"text": answer}], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "write a lot")
        await settle(pilot, screen)
        transcript = screen.transcript
        await until(pilot, lambda: transcript.max_scroll_y > 100)
        assert transcript.max_scroll_y > 100
        await pilot.press("ctrl+home")
        await until(pilot, lambda: transcript.scroll_y == 0)
        assert transcript.scroll_y == 0
        await pilot.press("ctrl+end")
        await until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        assert transcript.scroll_y == transcript.max_scroll_y
        await send(pilot, "/top")
        await until(pilot, lambda: transcript.scroll_y == 0)
        assert transcript.scroll_y == 0
        await pilot.press("ctrl+f")
        find = screen.query_one(FindBar)
        assert find.has_focus
        await pilot.press(*"paragraph 150", "enter")
        await until(pilot, lambda: 0 < transcript.scroll_y < transcript.max_scroll_y)
        middle = transcript.scroll_y
        assert 0 < middle < transcript.max_scroll_y
        await pilot.press("escape")
        assert not find.has_class("-open") and screen.query_one(PromptInput).has_focus
        await send(pilot, "/find needle")
        await until(pilot, lambda: transcript.scroll_y > middle)
        assert transcript.scroll_y > middle


async def test_quitting_tells_how_to_resume(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [{"text": "hi"}], [])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hello")
        await settle(pilot, chat(app))
        session_id = app.controller.id
    assert app.session_id == session_id and session_id
    assert (
        goodbye(app.session_id)
        == f"Session {session_id} saved. Resume it with:\n  wyckoff chat --resume {session_id}"
    )
    empty, _ = make_app(tmp_path, [], [])
    async with empty.run_test(size=SIZE):
        pass
    assert goodbye(empty.session_id) is None  # nothing said, nothing to resume
